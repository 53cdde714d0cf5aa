use anchor_lang::prelude::*;

use crate::state::Side;

/// One wallet's position on one side of one market (`binary_back` + market_id + backer + side).
/// Repeated backings on the same side add up here.
#[account]
#[derive(InitSpace, Debug)]
pub struct Backing {
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
