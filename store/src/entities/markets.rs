//! A binary_vault market. `market_id` is 64 hex characters; `market_uuid` is set when it is UUID-derived. Times are unix seconds; `mint` is null for SOL; `outcome` is `yes`/`no`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "markets")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub address: String,
    pub market_id: String,
    pub market_uuid: Option<String>,
    pub creator: String,
    pub variant: String,
    pub source: String,
    pub mint: Option<String>,
    pub approved: bool,
    pub oracle_status: i32,
    pub finalized: bool,
    pub outcome: Option<String>,
    pub created_at: i64,
    pub deadline: i64,
    pub resolution_proposed_at: i64,
    pub finalized_at: i64,
    pub yes_total: i64,
    pub no_total: i64,
    pub yes_backers: i32,
    pub no_backers: i32,
    pub yes_votes: i32,
    pub no_votes: i32,
    pub total_yield: i64,
    pub min_backing: i64,
    pub capital_loss_bps: i32,
    pub crucible_share_bps: i32,
    pub resolution_timelock_secs: i64,
    pub max_resolution_delay_secs: i64,
    pub winner_bonus_pool: i64,
    pub loser_refund_pool: i64,
    pub crucible_amount: i64,
    pub total_paid_out: i64,
    pub claims_count: i32,
    /// Whether the crucible share has left the losing vault.
    pub crucible_forwarded: bool,
    /// The oracle set copied at creation: only these vote on this market, against this threshold.
    pub oracle_threshold: i32,
    pub oracles: Option<Json>,
    /// The dispute bond in force at creation.
    pub dispute_bond_lamports: i64,
    pub slot: i64,
    pub write_version: i64,
    pub closed: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

crate::account_table!(Entity);
