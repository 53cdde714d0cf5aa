use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::ShieldRefundAll;
use crate::state::{Coverage, CoverageStatus};

/// Permissionless exit: sends a coverage nobody resolved to refund mode, so that missing oracles
/// or a finalisation that keeps failing cannot lock backers' money. Allowed
/// `RESOLUTION_DELAY_SECS` after `period_end` while no outcome is proposed, or that long after
/// the resolution timelock of a proposed outcome that was never finalised. Finalisation is open
/// to anyone, the winners first of all, for those 14 days; the exit trades a proposed outcome
/// nobody finalised in that time for everyone's principal back.
#[event_cpi]
#[derive(Accounts)]
pub struct TriggerShieldTimeoutRefund<'info> {
    #[account(mut, seeds = [SHIELD_STATE_SEED, coverage.protocol_id.as_ref()], bump = coverage.bump)]
    pub coverage: Account<'info, Coverage>,
}

pub fn handler(ctx: Context<TriggerShieldTimeoutRefund>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let coverage = &mut ctx.accounts.coverage;
    require!(
        coverage.status == CoverageStatus::Active,
        ShieldError::CoverageNotActive
    );
    let waited_from = match coverage.outcome {
        None => coverage.period_end,
        Some(_) => coverage
            .outcome_proposed_at
            .safe_add(RESOLUTION_TIMELOCK_SECS)?,
    };
    require!(
        now >= waited_from.safe_add(RESOLUTION_DELAY_SECS)?,
        ShieldError::ResolutionDelayNotElapsed
    );
    coverage.status = CoverageStatus::Refunding;
    coverage.finalized_at = now;
    // The zero key as `by`: nobody's decision, the delay's.
    let event = ShieldRefundAll {
        protocol_id: coverage.protocol_id,
        by: Pubkey::default(),
    };
    emit_cpi!(event);
    Ok(())
}
