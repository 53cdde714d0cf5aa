use anchor_lang::prelude::*;

use crate::state::ShieldSide;

/// One oracle's vote on one shield (`shield_oracle` + protocol_id + oracle); created once.
#[account]
#[derive(InitSpace, Debug)]
pub struct ShieldVote {
    pub protocol_id: [u8; 32],
    pub oracle: Pubkey,
    pub vote: ShieldSide,
    pub submitted_at: i64,
    pub bump: u8,
}
