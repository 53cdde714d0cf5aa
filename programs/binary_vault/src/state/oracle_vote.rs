use anchor_lang::prelude::*;

use crate::state::Side;

/// One oracle's vote on one market (`binary_oracle` + market_id + oracle). Created once, so an
/// oracle cannot vote twice.
#[account]
#[derive(InitSpace, Debug)]
pub struct OracleVote {
    pub market_id: [u8; 32],
    pub oracle: Pubkey,
    pub vote: Side,
    pub confidence_bps: u16,
    pub submitted_at: i64,
    pub bump: u8,
}
