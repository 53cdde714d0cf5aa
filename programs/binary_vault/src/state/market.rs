use anchor_lang::prelude::*;

use crate::constants::*;
use crate::state::OracleSet;

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub enum Side {
    No,
    Yes,
}

impl Side {
    /// The side byte of backing seeds: 1 for YES, 0 for NO (the API's `'true'` / `'false'`).
    pub fn seed_byte(self) -> u8 {
        self as u8
    }

    pub fn opposite(self) -> Side {
        match self {
            Side::Yes => Side::No,
            Side::No => Side::Yes,
        }
    }

    pub fn vault_seed(self) -> &'static [u8] {
        match self {
            Side::Yes => YES_VAULT_SEED,
            Side::No => NO_VAULT_SEED,
        }
    }

    pub fn token_vault_seed(self) -> &'static [u8] {
        match self {
            Side::Yes => YES_TOKEN_VAULT_SEED,
            Side::No => NO_TOKEN_VAULT_SEED,
        }
    }
}

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub enum MarketVariant {
    /// Zero-sum: the losing side goes to the winners. Opens after admin review.
    Classic,
    /// Losers keep 1 - capital_loss; the forfeit is split between crucible_pool and the winners.
    Yield,
}

/// Who created the market (spec 4.13 `source`). Only `Seed` (a creator's native market) may be
/// created without the admin; imported markets have no on-chain settlement and never appear here.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub enum MarketSource {
    Seed,
    Bot,
    Admin,
}

vault_common::layout_version!(
    /// The layout version of `Market` accounts (see `vault_common::layout`).
    MarketVersion = 1 for "Market"
);

/// One YES/NO market (`binary_state` + market_id).
#[account]
#[derive(InitSpace, Debug)]
pub struct Market {
    /// First: an account in another layout is refused before any field is misread.
    pub version: MarketVersion,
    /// 16 bytes of the market UUID followed by 16 zero bytes.
    pub market_id: [u8; 32],
    pub creator: Pubkey,
    pub variant: MarketVariant,
    pub source: MarketSource,
    /// The zero key for a SOL market; otherwise the SPL mint.
    pub mint: Pubkey,
    /// Yield markets are approved at creation; Classic ones by the admin.
    pub approved: bool,
    /// Spec 3.5: 0 open, 1 resolved, 3 disputed, 4 refund.
    pub oracle_status: u8,
    pub finalized: bool,
    /// Proposed outcome while on hold; the final outcome once resolved.
    pub outcome: Option<Side>,
    pub created_at: i64,
    pub deadline: i64,
    /// Start of the current payout hold (0 before any proposal).
    pub resolution_proposed_at: i64,
    pub finalized_at: i64,
    pub yes_total: u64,
    pub no_total: u64,
    pub yes_backers: u32,
    pub no_backers: u32,
    pub yes_votes: u8,
    pub no_votes: u8,
    /// Always 0: the yield venue is a scaffold (spec 4.13).
    pub total_yield: u64,
    pub min_backing: u64,
    /// Terms copied from the config at creation.
    pub capital_loss_bps: u16,
    pub crucible_share_bps: u16,
    pub resolution_timelock_secs: i64,
    pub max_resolution_delay_secs: i64,
    /// Set at finalisation: the losing side's money shared among winners, kept by losers, and
    /// sent to crucible_pool.
    pub winner_bonus_pool: u64,
    pub loser_refund_pool: u64,
    pub crucible_amount: u64,
    pub total_paid_out: u64,
    pub claims_count: u32,
    pub bump: u8,
    /// Bumps of the YES/NO vaults (lamport vaults for SOL, token vaults for SPL).
    pub yes_vault_bump: u8,
    pub no_vault_bump: u8,
    /// The oracle set in force at creation: only its members vote on this market, against its
    /// threshold, so a later change of the set cannot decide a market created before it.
    pub oracle_set: OracleSet,
    /// Whether `crucible_amount` has left the losing vault for crucible_pool. Until then it
    /// waits there (claims never touch it), so finalisation never depends on crucible_pool.
    pub crucible_forwarded: bool,
    /// The dispute bond in force at creation: a later config change cannot price this market's
    /// disputes out.
    pub dispute_bond_lamports: u64,
}

impl Market {
    pub fn is_sol(&self) -> bool {
        self.mint == Pubkey::default()
    }

    pub fn total(&self, side: Side) -> u64 {
        match side {
            Side::Yes => self.yes_total,
            Side::No => self.no_total,
        }
    }

    pub fn vault_bump(&self, side: Side) -> u8 {
        match side {
            Side::Yes => self.yes_vault_bump,
            Side::No => self.no_vault_bump,
        }
    }

    /// When the current payout hold ends.
    pub fn hold_ends_at(&self) -> Option<i64> {
        self.resolution_proposed_at
            .checked_add(self.resolution_timelock_secs)
    }
}
