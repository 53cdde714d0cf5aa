use anchor_lang::prelude::*;

use crate::state::ShieldVerdict;

/// One oracle's vote on one shield (`shield_oracle` + protocol_id + oracle); created once.
#[account]
#[derive(InitSpace, Debug)]
pub struct ShieldVote {
    pub protocol_id: [u8; 32],
    pub oracle: Pubkey,
    pub vote: ShieldVerdict,
    pub submitted_at: i64,
    pub bump: u8,
}
