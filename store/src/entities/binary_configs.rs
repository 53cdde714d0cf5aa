//! Config of binary_vault.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "binary_configs")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub address: String,
    pub capital_loss_bps: i32,
    pub crucible_share_bps: i32,
    pub oracle_threshold: i32,
    pub oracles: Json,
    pub resolution_timelock_secs: i64,
    pub max_resolution_delay_secs: i64,
    pub dispute_bond_lamports: i64,
    pub treasury: String,
    /// The change waiting for the admin timelock, if any.
    pub pending_change: Option<Json>,
    pub slot: i64,
    pub write_version: i64,
    pub closed: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

crate::account_table!(Entity);
