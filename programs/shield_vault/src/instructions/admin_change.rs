//! Timelocked admin changes (oracle set, treasury, harvest authority, self-hedge cap):
//! propose, then apply after `ADMIN_ACTION_TIMELOCK_SECS` and within the apply window, or
//! cancel. One change at a time; an expired one is replaced by the next proposal.
//! The admin key itself moves in two steps (propose, accept by the successor), not timelocked.

use anchor_lang::prelude::*;

use vault_common::{ChangeStage, SafeMath};

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::{
    AdminChangeApplied, AdminChangeCancelled, AdminChangeProposed, ShieldAdminProposed,
    ShieldAdminRotated,
};
use crate::state::{AdminChange, PendingChange, ShieldProgramState};

#[event_cpi]
#[derive(Accounts)]
pub struct AdminOnly<'info> {
    pub admin: Signer<'info>,
    #[account(
        mut,
        seeds = [PROGRAM_STATE_SEED],
        bump = program_state.bump,
        has_one = admin @ ShieldError::NotAdmin,
    )]
    pub program_state: Account<'info, ShieldProgramState>,
}

pub fn propose(ctx: Context<AdminOnly>, change: AdminChange) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let state = &mut ctx.accounts.program_state;
    // An expired change no longer blocks: it can never apply, so a new proposal replaces it.
    if let Some(pending) = state.pending_change {
        require!(
            stage(&pending, now)? == ChangeStage::Expired,
            ShieldError::ChangePending
        );
    }
    ShieldProgramState::validate(&change)?;
    state.pending_change = Some(PendingChange {
        change,
        proposed_at: now,
    });
    emit_cpi!(AdminChangeProposed {
        change,
        applies_at: now.safe_add(ADMIN_ACTION_TIMELOCK_SECS)?,
    });
    Ok(())
}

/// `set_max_self_hedge_bps` of spec 4.14: proposes the cap (at most 5000 bps), which applies
/// after the admin timelock like every sensitive change.
pub fn set_max_self_hedge_bps(ctx: Context<AdminOnly>, bps: u16) -> Result<()> {
    propose(ctx, AdminChange::MaxSelfHedgeBps(bps))
}

pub fn apply(ctx: Context<AdminOnly>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let state = &mut ctx.accounts.program_state;
    let pending = state.pending_change.ok_or(ShieldError::NoPendingChange)?;
    match stage(&pending, now)? {
        ChangeStage::Waiting => return err!(ShieldError::AdminTimelockNotElapsed),
        ChangeStage::Expired => return err!(ShieldError::ChangeExpired),
        ChangeStage::Appliable => {}
    }
    ShieldProgramState::validate(&pending.change)?;
    state.apply(&pending.change);
    state.pending_change = None;
    emit_cpi!(AdminChangeApplied {
        change: pending.change,
    });
    Ok(())
}

fn stage(pending: &PendingChange, now: i64) -> Result<ChangeStage> {
    vault_common::change_stage(pending.proposed_at, ADMIN_ACTION_TIMELOCK_SECS, now)
        .ok_or_else(|| ProgramError::ArithmeticOverflow.into())
}

pub fn cancel(ctx: Context<AdminOnly>) -> Result<()> {
    let state = &mut ctx.accounts.program_state;
    let pending = state
        .pending_change
        .take()
        .ok_or(ShieldError::NoPendingChange)?;
    emit_cpi!(AdminChangeCancelled {
        change: pending.change,
    });
    Ok(())
}

/// The admin names its successor (`None` withdraws the proposal); the role moves only when the
/// successor accepts, so a mistyped key cannot orphan the program.
pub fn propose_admin(ctx: Context<AdminOnly>, new_admin: Option<Pubkey>) -> Result<()> {
    if let Some(key) = new_admin {
        require_keys_neq!(key, Pubkey::default(), ShieldError::ZeroKey);
    }
    ctx.accounts.program_state.pending_admin = new_admin;
    emit_cpi!(ShieldAdminProposed { new_admin });
    Ok(())
}

#[event_cpi]
#[derive(Accounts)]
pub struct AcceptShieldAdmin<'info> {
    pub new_admin: Signer<'info>,
    #[account(
        mut,
        seeds = [PROGRAM_STATE_SEED],
        bump = program_state.bump,
        constraint = program_state.pending_admin == Some(new_admin.key())
            @ ShieldError::NotPendingAdmin,
    )]
    pub program_state: Account<'info, ShieldProgramState>,
}

/// The proposed successor takes the admin role.
pub fn accept_admin(ctx: Context<AcceptShieldAdmin>) -> Result<()> {
    let state = &mut ctx.accounts.program_state;
    let previous = state.admin;
    state.admin = ctx.accounts.new_admin.key();
    state.pending_admin = None;
    emit_cpi!(ShieldAdminRotated {
        previous,
        admin: state.admin,
    });
    Ok(())
}
