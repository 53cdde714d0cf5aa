use anchor_lang::prelude::*;

use crate::state::Side;

vault_common::layout_version!(
    /// The layout version of `Backing` accounts (see `vault_common::layout`).
    BackingVersion = 1 for "Backing"
);

/// One wallet's position on one side of one market (`binary_back` + market_id + backer + side).
/// Repeated backings on the same side add up here.
#[account]
#[derive(InitSpace, Debug)]
pub struct Backing {
    /// First: an account in another layout is refused before any field is misread.
    pub version: BackingVersion,
    pub market_id: [u8; 32],
    pub backer: Pubkey,
    pub side: Side,
    pub amount: u64,
    pub claimed: bool,
    /// What the claim paid (0 until claimed).
    pub payout: u64,
    pub first_backed_at: i64,
    pub last_backed_at: i64,
    pub bump: u8,
}
