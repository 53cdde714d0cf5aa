//! Events of every state change, emitted by self-CPI (`emit_cpi!`) so indexers read them from
//! inner instructions.

use anchor_lang::prelude::*;

use crate::state::{AdminChange, PayoutRecipient, ShieldKind, ShieldSide, ShieldVerdict};

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShieldProgramInitialized {
    pub admin: Pubkey,
    pub treasury: Pubkey,
    pub harvest_authority: Pubkey,
    pub oracle_threshold: u8,
    pub oracle_count: u8,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminChangeProposed {
    pub change: AdminChange,
    pub applies_at: i64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminChangeApplied {
    pub change: AdminChange,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminChangeCancelled {
    pub change: AdminChange,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShieldPauseChanged {
    pub paused: bool,
    pub by: Pubkey,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoverageOpened {
    pub protocol_id: [u8; 32],
    pub kind: ShieldKind,
    pub protocol_wallet: Pubkey,
    pub period_start: i64,
    pub period_end: i64,
    pub fee_lamports: u64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShieldBacked {
    pub protocol_id: [u8; 32],
    pub backer: Pubkey,
    pub side: ShieldSide,
    pub amount: u64,
    pub shares: u128,
    pub multiplier_bps: u16,
    pub side_principal: u64,
    pub side_total_assets: u64,
    pub side_shares_total: u128,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YieldHarvested {
    pub protocol_id: [u8; 32],
    pub side: ShieldSide,
    pub amount: u64,
    pub side_total_assets: u64,
    pub side_yield_harvested: u64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShieldVoteSubmitted {
    pub protocol_id: [u8; 32],
    pub oracle: Pubkey,
    pub vote: ShieldVerdict,
    pub safe_votes: u8,
    pub exploit_votes: u8,
    pub unresolvable_votes: u8,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShieldOutcomeProposed {
    pub protocol_id: [u8; 32],
    pub outcome: ShieldSide,
    pub finalizable_at: i64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShieldFinalized {
    pub protocol_id: [u8; 32],
    pub outcome: ShieldSide,
    pub refunded: bool,
    pub winner_bonus_pool: u64,
    pub protocol_payout: u64,
    pub treasury_payout: u64,
    pub seam_payout: u64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShieldRefundAll {
    pub protocol_id: [u8; 32],
    pub by: Pubkey,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShieldClaimed {
    pub protocol_id: [u8; 32],
    pub backer: Pubkey,
    pub side: ShieldSide,
    pub principal_returned: u64,
    pub bonus: u64,
    pub yield_paid: u64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShieldVoteClosed {
    pub protocol_id: [u8; 32],
    pub oracle: Pubkey,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShieldAdminProposed {
    pub new_admin: Option<Pubkey>,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShieldAdminRotated {
    pub previous: Pubkey,
    pub admin: Pubkey,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeamShareForwarded {
    pub protocol_id: [u8; 32],
    pub amount: u64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayoutForwarded {
    pub protocol_id: [u8; 32],
    pub recipient: PayoutRecipient,
    pub wallet: Pubkey,
    pub amount: u64,
}
