//! Timelocked settings of the pool: the keeper and epoch timing (`update_settings`), new deposit
//! sources (`set_authorized_source`) and the guardian (`set_guardian`) are proposed, then
//! applied `ADMIN_ACTION_TIMELOCK_SECS` later and within the apply window
//! (`apply_settings_change`), or cancelled. One change waits at a time; an expired one is
//! replaced by the next proposal.

use anchor_lang::prelude::*;

use vault_common::{ChangeStage, SafeMath};

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::{
    CrucibleChangeCancelled, CrucibleChangeProposed, CrucibleSettingsUpdated, GuardianChanged,
    SourceAuthorizationChanged,
};
use crate::state::{CrucibleChange, CrucibleState, PendingCrucibleChange};

/// Fields left `None` keep their value. New durations apply to epochs closed from then on.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, Default)]
pub struct UpdateSettingsArgs {
    pub keeper: Option<Pubkey>,
    pub epoch_duration_secs: Option<i64>,
    pub claim_window_secs: Option<i64>,
}

#[event_cpi]
#[derive(Accounts)]
pub struct UpdateSettings<'info> {
    pub admin: Signer<'info>,
    #[account(mut, seeds = [STATE_SEED], bump = state.bump, has_one = admin @ CrucibleError::NotAdmin)]
    pub state: Account<'info, CrucibleState>,
}

/// Proposes a change of keeper and epoch timing.
pub fn handler(ctx: Context<UpdateSettings>, args: UpdateSettingsArgs) -> Result<()> {
    propose(
        ctx,
        CrucibleChange::Settings {
            keeper: args.keeper,
            epoch_duration_secs: args.epoch_duration_secs,
            claim_window_secs: args.claim_window_secs,
        },
    )
}

/// Proposes `change` (`set_guardian`, and the settings above).
pub fn propose(ctx: Context<UpdateSettings>, change: CrucibleChange) -> Result<()> {
    let event = propose_on(&mut ctx.accounts.state, change)?;
    emit_cpi!(event);
    Ok(())
}

/// Records `change` as the pending change of `state`, checked against the state as it would
/// become; a live pending change refuses it, an expired one is replaced.
pub fn propose_on(
    state: &mut CrucibleState,
    change: CrucibleChange,
) -> Result<CrucibleChangeProposed> {
    let now = Clock::get()?.unix_timestamp;
    if let Some(pending) = state.pending_change {
        require!(
            stage(&pending, now)? == ChangeStage::Expired,
            CrucibleError::ChangePending
        );
    }
    let mut preview = state.clone();
    preview.apply(&change)?;
    state.pending_change = Some(PendingCrucibleChange {
        change,
        proposed_at: now,
    });
    Ok(CrucibleChangeProposed {
        change,
        applies_at: now.safe_add(ADMIN_ACTION_TIMELOCK_SECS)?,
    })
}

/// Applies the pending change once its timelock has passed and before its window closes.
pub fn apply(ctx: Context<UpdateSettings>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let state = &mut ctx.accounts.state;
    let pending = state.pending_change.ok_or(CrucibleError::NoPendingChange)?;
    match stage(&pending, now)? {
        ChangeStage::Waiting => return err!(CrucibleError::AdminTimelockNotElapsed),
        ChangeStage::Expired => return err!(CrucibleError::ChangeExpired),
        ChangeStage::Appliable => {}
    }
    state.apply(&pending.change)?;
    state.pending_change = None;
    match pending.change {
        CrucibleChange::Settings { .. } => {
            let event = CrucibleSettingsUpdated {
                keeper: state.keeper,
                epoch_duration_secs: state.epoch_duration_secs,
                claim_window_secs: state.claim_window_secs,
            };
            emit_cpi!(event);
        }
        CrucibleChange::AddSource(source) => {
            emit_cpi!(SourceAuthorizationChanged {
                source,
                allowed: true,
            });
        }
        CrucibleChange::Guardian(guardian) => {
            emit_cpi!(GuardianChanged { guardian });
        }
    }
    Ok(())
}

/// Drops the pending change.
pub fn cancel(ctx: Context<UpdateSettings>) -> Result<()> {
    let pending = ctx
        .accounts
        .state
        .pending_change
        .take()
        .ok_or(CrucibleError::NoPendingChange)?;
    emit_cpi!(CrucibleChangeCancelled {
        change: pending.change,
    });
    Ok(())
}

fn stage(pending: &PendingCrucibleChange, now: i64) -> Result<ChangeStage> {
    vault_common::change_stage(pending.proposed_at, ADMIN_ACTION_TIMELOCK_SECS, now)
        .ok_or_else(|| ProgramError::ArithmeticOverflow.into())
}
