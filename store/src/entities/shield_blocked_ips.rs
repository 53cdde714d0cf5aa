//! An address the shield gate refuses until an operator lifts the block.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "shield_blocked_ips")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub ip: String,
    /// Refused attempts counted when it was blocked.
    pub failures: i32,
    pub reason: String,
    pub blocked_at: i64,
    /// Set when an operator lifted the block.
    pub lifted_at: Option<i64>,
    pub lifted_by: Option<String>,
    /// The gate's log id when the block was lifted: only later refusals count again.
    pub lifted_after_probe: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
