//! An access attempt at a gated shield route, and its outcome.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "shield_probe_log")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub ip: Option<String>,
    pub route: String,
    pub wallet: Option<String>,
    pub outcome: String,
    pub created_at: i64,
    /// Held against the caller by the shield gate (answered 4xx).
    pub refused: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
