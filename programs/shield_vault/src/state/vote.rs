use anchor_lang::prelude::*;

use crate::state::ShieldVerdict;

vault_common::layout_version!(
    /// The layout version of `ShieldVote` accounts (see `vault_common::layout`).
    ShieldVoteVersion = 1 for "ShieldVote"
);

/// One oracle's vote on one shield (`shield_oracle` + protocol_id + oracle); created once.
#[account]
#[derive(InitSpace, Debug)]
pub struct ShieldVote {
    /// First: an account in another layout is refused before any field is misread.
    pub version: ShieldVoteVersion,
    pub protocol_id: [u8; 32],
    pub oracle: Pubkey,
    pub vote: ShieldVerdict,
    pub submitted_at: i64,
    pub bump: u8,
}
