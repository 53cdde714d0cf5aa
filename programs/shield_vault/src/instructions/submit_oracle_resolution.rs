use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::{ShieldOutcomeProposed, ShieldRefundAll, ShieldVoteSubmitted};
use crate::state::{Coverage, CoverageStatus, ShieldVerdict, ShieldVote};

/// One vote of an oracle of the coverage's set (copied at open); the vote account's creation
/// makes it one per oracle per protocol. SAFE and EXPLOIT are voted after the period ends: the
/// first side to reach the coverage's threshold is proposed and the 172800 s timelock starts.
/// UNRESOLVABLE may be voted at any time while no side is proposed (a protocol can vanish
/// mid-period); at the threshold the coverage turns to refunds, so refunding is a threshold
/// decision like the others and never one oracle's.
#[event_cpi]
#[derive(Accounts)]
pub struct SubmitOracleResolution<'info> {
    #[account(mut, constraint = coverage.oracles.contains(&oracle.key()) @ ShieldError::NotOracle)]
    pub oracle: Signer<'info>,
    /// Kept in the accounts so that clients built before coverages carried their own set still
    /// line up; the vote reads the coverage's set.
    #[account(seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, crate::state::ShieldProgramState>,
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

pub fn handler(ctx: Context<SubmitOracleResolution>, vote: ShieldVerdict) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let coverage = &mut ctx.accounts.coverage;
    require!(
        coverage.status == CoverageStatus::Active,
        ShieldError::CoverageNotActive
    );
    if vote != ShieldVerdict::Unresolvable {
        require!(now >= coverage.period_end, ShieldError::PeriodNotEnded);
    }
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
            version: crate::state::ShieldVoteVersion::CURRENT,
            protocol_id: coverage.protocol_id,
            oracle: oracle.key(),
            vote,
            submitted_at: now,
            bump: ctx.bumps.vote,
        },
    )?;
    let tally = match vote {
        ShieldVerdict::Safe => &mut coverage.safe_votes,
        ShieldVerdict::Exploit => &mut coverage.exploit_votes,
        ShieldVerdict::Unresolvable => &mut coverage.unresolvable_votes,
    };
    *tally = tally.safe_add(1)?;
    let decided = *tally >= coverage.oracles.threshold;
    let voted = ShieldVoteSubmitted {
        protocol_id: coverage.protocol_id,
        oracle: oracle.key(),
        vote,
        safe_votes: coverage.safe_votes,
        exploit_votes: coverage.exploit_votes,
        unresolvable_votes: coverage.unresolvable_votes,
    };
    let protocol_id = coverage.protocol_id;
    if decided {
        match vote.side() {
            Some(side) => {
                coverage.outcome = Some(side);
                coverage.outcome_proposed_at = now;
            }
            None => {
                coverage.status = CoverageStatus::Refunding;
                coverage.finalized_at = now;
            }
        }
    }
    emit_cpi!(voted);
    if decided {
        match vote.side() {
            Some(outcome) => {
                emit_cpi!(ShieldOutcomeProposed {
                    protocol_id,
                    outcome,
                    finalizable_at: now.safe_add(RESOLUTION_TIMELOCK_SECS)?,
                });
            }
            // `by` names the oracle whose vote met the threshold.
            None => {
                emit_cpi!(ShieldRefundAll {
                    protocol_id,
                    by: oracle.key(),
                });
            }
        }
    }
    Ok(())
}
