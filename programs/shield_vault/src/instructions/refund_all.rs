use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::ShieldRefundAll;
use crate::state::{Coverage, CoverageStatus, ShieldProgramState};

/// The admin's refund of a coverage the oracles left undecided: allowed only
/// `ADMIN_REFUND_DELAY_SECS` after the period ended with no outcome proposed, earlier than the
/// permissionless timeout. No single key turns a coverage to refunds before that: during the
/// period and the oracles' first 48 h only the threshold can (an UNRESOLVABLE vote), and once
/// the threshold proposed a side the admin cannot override it.
#[event_cpi]
#[derive(Accounts)]
pub struct RefundAll<'info> {
    pub admin: Signer<'info>,
    #[account(
        seeds = [PROGRAM_STATE_SEED],
        bump = program_state.bump,
        has_one = admin @ ShieldError::NotAdmin,
    )]
    pub program_state: Account<'info, ShieldProgramState>,
    #[account(mut, seeds = [SHIELD_STATE_SEED, coverage.protocol_id.as_ref()], bump = coverage.bump)]
    pub coverage: Account<'info, Coverage>,
}

pub fn handler(ctx: Context<RefundAll>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let coverage = &mut ctx.accounts.coverage;
    require!(
        coverage.status == CoverageStatus::Active,
        ShieldError::CoverageNotActive
    );
    require!(coverage.outcome.is_none(), ShieldError::OutcomeProposed);
    require!(
        now >= coverage.period_end.safe_add(ADMIN_REFUND_DELAY_SECS)?,
        ShieldError::RefundTooEarly
    );
    coverage.status = CoverageStatus::Refunding;
    coverage.finalized_at = now;
    let event = ShieldRefundAll {
        protocol_id: coverage.protocol_id,
        by: ctx.accounts.admin.key(),
    };
    emit_cpi!(event);
    Ok(())
}
