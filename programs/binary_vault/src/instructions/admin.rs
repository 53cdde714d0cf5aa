//! Admin-only settings: config values and the oracle set (proposed, then applied after the
//! admin timelock), the pause switch, and the two-step rotation of the admin key.

use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::BinaryError;
use vault_common::{ChangeStage, SafeMath};

use crate::events::{
    AdminProposed, AdminRotated, ConfigChangeCancelled, ConfigChangeProposed, ConfigUpdated,
    OraclesUpdated, PauseChanged,
};
use crate::state::{Config, PendingConfigChange, ProgramState};

pub use crate::state::ConfigUpdate;

#[event_cpi]
#[derive(Accounts)]
pub struct AdminConfig<'info> {
    pub admin: Signer<'info>,
    #[account(
        seeds = [PROGRAM_STATE_SEED],
        bump = program_state.bump,
        has_one = admin @ BinaryError::NotAdmin,
    )]
    pub program_state: Account<'info, ProgramState>,
    #[account(mut, seeds = [CONFIG_SEED], bump = config.bump)]
    pub config: Account<'info, Config>,
}

#[event_cpi]
#[derive(Accounts)]
pub struct AdminState<'info> {
    pub admin: Signer<'info>,
    #[account(
        mut,
        seeds = [PROGRAM_STATE_SEED],
        bump = program_state.bump,
        has_one = admin @ BinaryError::NotAdmin,
    )]
    pub program_state: Account<'info, ProgramState>,
}

/// Proposes a change of config values and/or the oracle set. It is checked now (against the
/// config as it would become) and again when applied, `ADMIN_ACTION_TIMELOCK_SECS` later, so
/// that backers see it coming; one change waits at a time.
pub fn propose_config_change(ctx: Context<AdminConfig>, update: ConfigUpdate) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let config = &mut ctx.accounts.config;
    // An expired change no longer blocks: it can never apply, so a new proposal replaces it.
    if let Some(pending) = config.pending_change {
        require!(
            stage(&pending, now)? == ChangeStage::Expired,
            BinaryError::ChangePending
        );
    }
    let mut preview = (**config).clone();
    preview.apply(&update)?;
    config.pending_change = Some(PendingConfigChange {
        update,
        proposed_at: now,
    });
    emit_cpi!(ConfigChangeProposed {
        update,
        applies_at: now.safe_add(ADMIN_ACTION_TIMELOCK_SECS)?,
    });
    Ok(())
}

/// Applies the pending change once the admin timelock has passed and before its apply window
/// (`vault_common::APPLY_WINDOW_SECS`) closes; admin only.
pub fn apply_config_change(ctx: Context<AdminConfig>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let config = &mut ctx.accounts.config;
    let pending = config.pending_change.ok_or(BinaryError::NoPendingChange)?;
    match stage(&pending, now)? {
        ChangeStage::Waiting => return err!(BinaryError::AdminTimelockNotElapsed),
        ChangeStage::Expired => return err!(BinaryError::ChangeExpired),
        ChangeStage::Appliable => {}
    }
    config.apply(&pending.update)?;
    config.pending_change = None;
    emit_cpi!(ConfigUpdated {
        capital_loss_bps: config.capital_loss_bps,
        crucible_share_bps: config.crucible_share_bps,
        resolution_timelock_secs: config.resolution_timelock_secs,
        max_resolution_delay_secs: config.max_resolution_delay_secs,
        dispute_bond_lamports: config.dispute_bond_lamports,
        treasury: config.treasury,
    });
    if pending.update.oracle_set.is_some() {
        emit_cpi!(OraclesUpdated {
            oracles: config.listed_oracles().to_vec(),
            threshold: config.oracle_threshold,
        });
    }
    Ok(())
}

fn stage(pending: &PendingConfigChange, now: i64) -> Result<ChangeStage> {
    vault_common::change_stage(pending.proposed_at, ADMIN_ACTION_TIMELOCK_SECS, now)
        .ok_or_else(|| ProgramError::ArithmeticOverflow.into())
}

/// Drops the pending change; admin only.
pub fn cancel_config_change(ctx: Context<AdminConfig>) -> Result<()> {
    let config = &mut ctx.accounts.config;
    require!(
        config.pending_change.take().is_some(),
        BinaryError::NoPendingChange
    );
    emit_cpi!(ConfigChangeCancelled {});
    Ok(())
}

/// The admin names its successor (`None` withdraws the proposal); the role moves only when the
/// successor accepts, so a mistyped key cannot orphan the program.
pub fn propose_admin(ctx: Context<AdminState>, new_admin: Option<Pubkey>) -> Result<()> {
    if let Some(key) = new_admin {
        require_keys_neq!(key, Pubkey::default(), BinaryError::ZeroKey);
    }
    ctx.accounts.program_state.pending_admin = new_admin;
    emit_cpi!(AdminProposed { new_admin });
    Ok(())
}

#[event_cpi]
#[derive(Accounts)]
pub struct AcceptAdmin<'info> {
    pub new_admin: Signer<'info>,
    #[account(
        mut,
        seeds = [PROGRAM_STATE_SEED],
        bump = program_state.bump,
        constraint = program_state.pending_admin == Some(new_admin.key())
            @ BinaryError::NotPendingAdmin,
    )]
    pub program_state: Account<'info, ProgramState>,
}

/// The proposed successor takes the admin role.
pub fn accept_admin(ctx: Context<AcceptAdmin>) -> Result<()> {
    let state = &mut ctx.accounts.program_state;
    let previous = state.admin;
    state.admin = ctx.accounts.new_admin.key();
    state.pending_admin = None;
    emit_cpi!(AdminRotated {
        previous,
        admin: state.admin,
    });
    Ok(())
}

pub fn set_paused(ctx: Context<AdminState>, paused: bool) -> Result<()> {
    ctx.accounts.program_state.paused = paused;
    emit_cpi!(PauseChanged { paused });
    Ok(())
}
