use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::{OracleVoteSubmitted, ResolutionProposed};
use crate::state::{Market, OracleVote, Side};

/// A vote by a member of the market's oracle set (the set in force at its creation), after the
/// deadline. The vote account is created here, so an oracle
/// votes once per market. The first side to reach the threshold becomes the proposed outcome
/// and starts the payout hold; voting then closes (disagreement goes through a dispute).
#[event_cpi]
#[derive(Accounts)]
pub struct SubmitOracleResolution<'info> {
    #[account(mut)]
    pub oracle: Signer<'info>,
    #[account(
        mut,
        seeds = [MARKET_SEED, market.market_id.as_ref()],
        bump = market.bump,
        constraint = market.oracle_set.contains(&oracle.key()) @ BinaryError::NotOracle,
    )]
    pub market: Account<'info, Market>,
    /// CHECK: created by the handler at this PDA (see vault_common::account); its existence is
    /// what refuses a second vote, and a donation to the address cannot block the first.
    #[account(
        mut,
        seeds = [ORACLE_VOTE_SEED, market.market_id.as_ref(), oracle.key().as_ref()],
        bump,
    )]
    pub vote: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

pub fn handler(
    ctx: Context<SubmitOracleResolution>,
    vote: Side,
    confidence_bps: u16,
) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let market = &mut ctx.accounts.market;
    require!(
        (MIN_CONFIDENCE_BPS..=MAX_CONFIDENCE_BPS).contains(&confidence_bps),
        BinaryError::ConfidenceOutOfRange
    );
    require!(
        market.oracle_status == ORACLE_STATUS_OPEN && !market.finalized,
        BinaryError::MarketNotOpen
    );
    require!(now >= market.deadline, BinaryError::VoteBeforeDeadline);
    require!(
        market.outcome.is_none(),
        BinaryError::OutcomeAlreadyProposed
    );

    let votes = match vote {
        Side::Yes => {
            market.yes_votes = market.yes_votes.safe_add(1)?;
            market.yes_votes
        }
        Side::No => {
            market.no_votes = market.no_votes.safe_add(1)?;
            market.no_votes
        }
    };
    let oracle = ctx.accounts.oracle.to_account_info();
    vault_common::init_account(
        &oracle,
        &ctx.accounts.vote,
        &[
            ORACLE_VOTE_SEED,
            market.market_id.as_ref(),
            oracle.key.as_ref(),
            &[ctx.bumps.vote],
        ],
        &OracleVote {
            version: crate::state::OracleVoteVersion::CURRENT,
            market_id: market.market_id,
            oracle: oracle.key(),
            vote,
            confidence_bps,
            submitted_at: now,
            bump: ctx.bumps.vote,
        },
    )?;
    let proposed = votes >= market.oracle_set.threshold;
    if proposed {
        market.outcome = Some(vote);
        market.resolution_proposed_at = now;
    }
    let (market_id, yes_votes, no_votes) = (market.market_id, market.yes_votes, market.no_votes);
    let hold_ends_at = market
        .hold_ends_at()
        .ok_or(ProgramError::ArithmeticOverflow)?;
    emit_cpi!(OracleVoteSubmitted {
        market_id,
        oracle: ctx.accounts.oracle.key(),
        vote,
        confidence_bps,
        yes_votes,
        no_votes,
    });
    if proposed {
        emit_cpi!(ResolutionProposed {
            market_id,
            outcome: vote,
            hold_ends_at,
        });
    }
    Ok(())
}
