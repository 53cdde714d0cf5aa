//! Program state of shield_vault.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "shield_programs")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub address: String,
    pub admin: String,
    pub oracles: Json,
    pub oracle_threshold: i32,
    pub treasury: String,
    pub harvest_authority: String,
    pub seam_pool_program: String,
    pub max_self_hedge_bps: i32,
    pub paused: bool,
    pub coverage_count: i64,
    pub pending_change: Option<Json>,
    /// The admin a two-step rotation waits on to accept.
    pub pending_admin: Option<String>,
    pub slot: i64,
    pub write_version: i64,
    pub closed: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

crate::account_table!(Entity);
