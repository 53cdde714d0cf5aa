use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::ShieldRefundAll;
use crate::state::{Coverage, CoverageStatus, ShieldProgramState};

/// Full refund mode when the outcome cannot be resolved (oracle or admin), at any time before
/// finalisation; backers then `claim_refund` their principal (and their side's yield).
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
    coverage.status = CoverageStatus::Refunding;
    coverage.finalized_at = Clock::get()?.unix_timestamp;
    let event = ShieldRefundAll {
        protocol_id: coverage.protocol_id,
        by: ctx.accounts.authority.key(),
    };
    emit_cpi!(event);
    Ok(())
}
