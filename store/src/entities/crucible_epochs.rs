//! A crucible_pool epoch of one asset.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "crucible_epochs")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub address: String,
    pub mint: Option<String>,
    pub epoch: i64,
    pub status: String,
    pub started_at: i64,
    pub closed_at: i64,
    pub claim_deadline: i64,
    pub deposited: i64,
    pub rolled_in: i64,
    pub conviction_pool: i64,
    pub creator_pool: i64,
    pub merkle_root: String,
    pub claimed: i64,
    pub claims: i32,
    pub rolled_out: i64,
    /// When a posted root becomes claimable (after the challenge delay); 0 before a root.
    pub claimable_at: i64,
    pub slot: i64,
    pub write_version: i64,
    pub closed: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

crate::account_table!(Entity);
