//! Events of every state change, emitted by self-CPI (`emit_cpi!`) so that indexers read them
//! from inner instructions rather than from truncatable logs.

use anchor_lang::prelude::*;

use crate::state::{ConfigUpdate, DisputeAction, MarketSource, MarketVariant, Side};

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramInitialized {
    pub admin: Pubkey,
    pub treasury: Pubkey,
    pub oracle_threshold: u8,
    pub oracle_count: u8,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigUpdated {
    pub capital_loss_bps: u16,
    pub crucible_share_bps: u16,
    pub resolution_timelock_secs: i64,
    pub max_resolution_delay_secs: i64,
    pub dispute_bond_lamports: u64,
    pub treasury: Pubkey,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OraclesUpdated {
    pub oracles: Vec<Pubkey>,
    pub threshold: u8,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigChangeProposed {
    pub update: ConfigUpdate,
    /// When `apply_config_change` may apply it.
    pub applies_at: i64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigChangeCancelled {}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminProposed {
    pub new_admin: Option<Pubkey>,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminRotated {
    pub previous: Pubkey,
    pub admin: Pubkey,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PauseChanged {
    pub paused: bool,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarketCreated {
    pub market_id: [u8; 32],
    pub market: Pubkey,
    pub creator: Pubkey,
    pub variant: MarketVariant,
    pub source: MarketSource,
    /// The zero key for SOL markets.
    pub mint: Pubkey,
    pub deadline: i64,
    pub approved: bool,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarketApproved {
    pub market_id: [u8; 32],
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarketBacked {
    pub market_id: [u8; 32],
    pub backer: Pubkey,
    pub side: Side,
    pub amount: u64,
    /// The backing's total on this side after this deposit.
    pub backing_amount: u64,
    pub yes_total: u64,
    pub no_total: u64,
    pub timestamp: i64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OracleVoteSubmitted {
    pub market_id: [u8; 32],
    pub oracle: Pubkey,
    pub vote: Side,
    pub confidence_bps: u16,
    pub yes_votes: u8,
    pub no_votes: u8,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolutionProposed {
    pub market_id: [u8; 32],
    pub outcome: Side,
    pub hold_ends_at: i64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisputeOpened {
    pub market_id: [u8; 32],
    pub disputer: Pubkey,
    pub bond_lamports: u64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisputeSettled {
    pub market_id: [u8; 32],
    pub action: DisputeAction,
    pub outcome: Option<Side>,
    pub oracle_status: u8,
    /// End of the market's hold (restarted by an overturn); 0 when the market went to refund.
    pub hold_ends_at: i64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarketFinalized {
    pub market_id: [u8; 32],
    pub outcome: Side,
    pub oracle_status: u8,
    pub winner_bonus_pool: u64,
    pub loser_refund_pool: u64,
    pub crucible_amount: u64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundTriggered {
    pub market_id: [u8; 32],
    pub timestamp: i64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OracleVoteClosed {
    pub market_id: [u8; 32],
    pub oracle: Pubkey,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    pub market_id: [u8; 32],
    pub backer: Pubkey,
    pub side: Side,
    pub principal: u64,
    pub payout: u64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrucibleShareForwarded {
    pub market_id: [u8; 32],
    /// Lamports or base units sent to crucible_pool.
    pub amount: u64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisputeBondForwarded {
    pub market_id: [u8; 32],
    pub treasury: Pubkey,
    pub amount: u64,
}
