use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::ShieldVoteClosed;
use crate::state::{Coverage, CoverageStatus, ShieldVote};

/// Returns a vote account's rent to its oracle once the shield is resolved or refunding: it
/// takes no more votes, so the account can never be needed again.
#[event_cpi]
#[derive(Accounts)]
pub struct CloseShieldVote<'info> {
    #[account(mut)]
    pub oracle: Signer<'info>,
    #[account(
        seeds = [SHIELD_STATE_SEED, coverage.protocol_id.as_ref()],
        bump = coverage.bump,
        constraint = coverage.status != CoverageStatus::Active @ ShieldError::CoverageStillActive,
    )]
    pub coverage: Account<'info, Coverage>,
    #[account(
        mut,
        close = oracle,
        seeds = [ORACLE_VOTE_SEED, coverage.protocol_id.as_ref(), oracle.key().as_ref()],
        bump = vote.bump,
        has_one = oracle,
    )]
    pub vote: Account<'info, ShieldVote>,
}

pub fn handler(ctx: Context<CloseShieldVote>) -> Result<()> {
    emit_cpi!(ShieldVoteClosed {
        protocol_id: ctx.accounts.coverage.protocol_id,
        oracle: ctx.accounts.oracle.key(),
    });
    Ok(())
}
