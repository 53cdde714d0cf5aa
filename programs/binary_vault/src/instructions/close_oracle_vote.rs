use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::OracleVoteClosed;
use crate::state::{Market, OracleVote};

/// Returns a vote account's rent to its oracle once the market is finalised: votes only
/// matter until an outcome is proposed, and a finalised market takes no more votes, so the
/// account can never be needed (or re-created) again.
#[event_cpi]
#[derive(Accounts)]
pub struct CloseOracleVote<'info> {
    #[account(mut)]
    pub oracle: Signer<'info>,
    #[account(
        seeds = [MARKET_SEED, market.market_id.as_ref()],
        bump = market.bump,
        constraint = market.finalized @ BinaryError::MarketNotFinalized,
    )]
    pub market: Account<'info, Market>,
    #[account(
        mut,
        close = oracle,
        seeds = [ORACLE_VOTE_SEED, market.market_id.as_ref(), oracle.key().as_ref()],
        bump = vote.bump,
        has_one = oracle,
    )]
    pub vote: Account<'info, OracleVote>,
}

pub fn handler(ctx: Context<CloseOracleVote>) -> Result<()> {
    emit_cpi!(OracleVoteClosed {
        market_id: ctx.accounts.market.market_id,
        oracle: ctx.accounts.oracle.key(),
    });
    Ok(())
}
