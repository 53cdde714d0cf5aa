//! One Echo Pool epoch's distribution as the keeper computed it: the window of results it
//! covers, what the epoch held, the two pools and the Merkle root posted with `close_epoch`.
//! `status` is `computed` (stored, not yet on chain), `closed` (the root is on chain),
//! `rolled_over` (what was left unclaimed moved on) or `vetoed` (the admin vetoed the root).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "echo_distributions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub epoch_address: String,
    /// Null for SOL.
    pub mint: Option<String>,
    pub epoch_number: i64,
    pub window_start: i64,
    pub window_end: i64,
    pub available: i64,
    pub conviction_pool: i64,
    pub creator_pool: i64,
    /// Hex.
    pub merkle_root: String,
    pub status: String,
    pub computed_at: i64,
    pub closed_at: Option<i64>,
    pub close_signature: Option<String>,
    pub claimable_at: Option<i64>,
    pub claim_deadline: Option<i64>,
    pub rolled_over_at: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
