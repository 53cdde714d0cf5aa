use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::{ShieldOutcomeProposed, ShieldVoteSubmitted};
use crate::state::{Coverage, CoverageStatus, ShieldProgramState, ShieldSide, ShieldVote};

/// A listed oracle's SAFE or EXPLOIT vote after the period ends; the vote account's creation
/// makes it one per oracle per protocol. The first side to reach the threshold is proposed and
/// the 172800 s timelock starts; voting then closes.
#[event_cpi]
#[derive(Accounts)]
pub struct SubmitOracleResolution<'info> {
    #[account(mut, constraint = program_state.is_oracle(&oracle.key()) @ ShieldError::NotOracle)]
    pub oracle: Signer<'info>,
    #[account(seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ShieldProgramState>,
    #[account(mut, seeds = [SHIELD_STATE_SEED, coverage.protocol_id.as_ref()], bump = coverage.bump)]
    pub coverage: Account<'info, Coverage>,
    /// CHECK: created by the handler at this PDA (see vault_common::account); its existence is
    /// what refuses a second vote.
    #[account(
        mut,
        seeds = [ORACLE_VOTE_SEED, coverage.protocol_id.as_ref(), oracle.key().as_ref()],
        bump,
    )]
    pub vote: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

pub fn handler(ctx: Context<SubmitOracleResolution>, vote: ShieldSide) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let coverage = &mut ctx.accounts.coverage;
    require!(
        coverage.status == CoverageStatus::Active,
        ShieldError::CoverageNotActive
    );
    require!(now >= coverage.period_end, ShieldError::PeriodNotEnded);
    require!(
        coverage.outcome.is_none(),
        ShieldError::OutcomeAlreadyProposed
    );

    let oracle = ctx.accounts.oracle.to_account_info();
    vault_common::init_account(
        &oracle,
        &ctx.accounts.vote,
        &[
            ORACLE_VOTE_SEED,
            coverage.protocol_id.as_ref(),
            oracle.key.as_ref(),
            &[ctx.bumps.vote],
        ],
        &ShieldVote {
            protocol_id: coverage.protocol_id,
            oracle: oracle.key(),
            vote,
            submitted_at: now,
            bump: ctx.bumps.vote,
        },
    )?;
    let votes = match vote {
        ShieldSide::Safe => {
            coverage.safe_votes = coverage.safe_votes.safe_add(1)?;
            coverage.safe_votes
        }
        ShieldSide::Exploit => {
            coverage.exploit_votes = coverage.exploit_votes.safe_add(1)?;
            coverage.exploit_votes
        }
    };
    let proposed = votes >= ctx.accounts.program_state.oracle_threshold;
    if proposed {
        coverage.outcome = Some(vote);
        coverage.outcome_proposed_at = now;
    }
    let voted = ShieldVoteSubmitted {
        protocol_id: coverage.protocol_id,
        oracle: oracle.key(),
        vote,
        safe_votes: coverage.safe_votes,
        exploit_votes: coverage.exploit_votes,
    };
    let protocol_id = coverage.protocol_id;
    emit_cpi!(voted);
    if proposed {
        emit_cpi!(ShieldOutcomeProposed {
            protocol_id,
            outcome: vote,
            finalizable_at: now.safe_add(RESOLUTION_TIMELOCK_SECS)?,
        });
    }
    Ok(())
}
