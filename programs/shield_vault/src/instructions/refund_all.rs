use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::ShieldRefundAll;
use crate::state::{Coverage, CoverageStatus, ShieldProgramState};

/// Full refund mode when the outcome cannot be resolved, at any time before finalisation; backers
/// then `claim_refund` their principal (and their side's yield). Any oracle or the admin may call
/// it while no outcome is proposed (the oracles cannot agree); once the threshold has proposed one,
/// only the admin may, so that one oracle cannot undo what the threshold decided.
#[event_cpi]
#[derive(Accounts)]
pub struct RefundAll<'info> {
    #[account(constraint = program_state.is_oracle_or_admin(&authority.key()) @ ShieldError::NotOracleOrAdmin)]
    pub authority: Signer<'info>,
    #[account(seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ShieldProgramState>,
    #[account(mut, seeds = [SHIELD_STATE_SEED, coverage.protocol_id.as_ref()], bump = coverage.bump)]
    pub coverage: Account<'info, Coverage>,
}

pub fn handler(ctx: Context<RefundAll>) -> Result<()> {
    let coverage = &mut ctx.accounts.coverage;
    require!(
        coverage.status == CoverageStatus::Active,
        ShieldError::CoverageNotActive
    );
    if coverage.outcome.is_some() {
        require_keys_eq!(
            ctx.accounts.authority.key(),
            ctx.accounts.program_state.admin,
            ShieldError::OutcomeProposed
        );
    }
    coverage.status = CoverageStatus::Refunding;
    coverage.finalized_at = Clock::get()?.unix_timestamp;
    let event = ShieldRefundAll {
        protocol_id: coverage.protocol_id,
        by: ctx.accounts.authority.key(),
    };
    emit_cpi!(event);
    Ok(())
}
