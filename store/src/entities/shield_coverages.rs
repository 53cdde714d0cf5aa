//! A shield_vault coverage period, both sides' books flattened (`safe_*`, `exploit_*`; share totals as decimal text).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "shield_coverages")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub address: String,
    pub protocol_id: String,
    pub kind: String,
    pub protocol_wallet: Option<String>,
    pub period_days: i32,
    pub period_start: i64,
    pub period_end: i64,
    pub fee_lamports: i64,
    pub status: String,
    pub outcome: Option<String>,
    pub safe_votes: i32,
    pub exploit_votes: i32,
    pub outcome_proposed_at: i64,
    pub finalized_at: i64,
    pub safe_principal: i64,
    pub safe_total_assets: i64,
    pub safe_shares_total: String,
    pub safe_yield_harvested: i64,
    pub safe_yield_paid: i64,
    pub safe_held: i64,
    pub safe_backers: i32,
    pub exploit_principal: i64,
    pub exploit_total_assets: i64,
    pub exploit_shares_total: String,
    pub exploit_yield_harvested: i64,
    pub exploit_yield_paid: i64,
    pub exploit_held: i64,
    pub exploit_backers: i32,
    pub winner_bonus_pool: i64,
    pub protocol_payout: i64,
    pub treasury_payout: i64,
    pub seam_payout: i64,
    pub principal_returned: i64,
    pub bonus_paid: i64,
    pub claims_count: i32,
    /// Whether the seam share has left the losing vault.
    pub seam_forwarded: bool,
    /// Votes that the coverage cannot be resolved; at the threshold it refunds.
    pub unresolvable_votes: i32,
    /// The oracle set copied at open: only these vote on this coverage, against this threshold.
    pub oracle_threshold: i32,
    pub oracles: Option<Json>,
    /// Whether the treasury's share has left the losing vault.
    pub treasury_forwarded: bool,
    /// Whether a partnership's protocol share has left the losing vault.
    pub protocol_forwarded: bool,
    pub slot: i64,
    pub write_version: i64,
    pub closed: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

crate::account_table!(Entity);
