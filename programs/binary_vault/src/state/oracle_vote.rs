use anchor_lang::prelude::*;

use crate::state::Side;

vault_common::layout_version!(
    /// The layout version of `OracleVote` accounts (see `vault_common::layout`).
    OracleVoteVersion = 1 for "OracleVote"
);

/// One oracle's vote on one market (`binary_oracle` + market_id + oracle). Created once, so an
/// oracle cannot vote twice.
#[account]
#[derive(InitSpace, Debug)]
pub struct OracleVote {
    /// First: an account in another layout is refused before any field is misread.
    pub version: OracleVoteVersion,
    pub market_id: [u8; 32],
    pub oracle: Pubkey,
    pub vote: Side,
    pub confidence_bps: u16,
    pub submitted_at: i64,
    pub bump: u8,
}
