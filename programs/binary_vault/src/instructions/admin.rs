//! Admin-only settings: config values, the oracle set, the pause switch.

use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::{ConfigUpdated, OraclesUpdated, PauseChanged};
use crate::state::{Config, ProgramState};

/// Fields left `None` keep their value. Changes apply to markets created afterwards; existing
/// markets keep the terms they were created with.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, Default)]
pub struct ConfigUpdate {
    pub capital_loss_bps: Option<u16>,
    pub crucible_share_bps: Option<u16>,
    pub resolution_timelock_secs: Option<i64>,
    pub max_resolution_delay_secs: Option<i64>,
    pub dispute_bond_lamports: Option<u64>,
    pub treasury: Option<Pubkey>,
    pub min_backing_spl: Option<u64>,
}

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
pub struct SetPaused<'info> {
    pub admin: Signer<'info>,
    #[account(
        mut,
        seeds = [PROGRAM_STATE_SEED],
        bump = program_state.bump,
        has_one = admin @ BinaryError::NotAdmin,
    )]
    pub program_state: Account<'info, ProgramState>,
}

pub fn update_config(ctx: Context<AdminConfig>, update: ConfigUpdate) -> Result<()> {
    let config = &mut ctx.accounts.config;
    if let Some(v) = update.capital_loss_bps {
        config.capital_loss_bps = v;
    }
    if let Some(v) = update.crucible_share_bps {
        config.crucible_share_bps = v;
    }
    if let Some(v) = update.resolution_timelock_secs {
        config.resolution_timelock_secs = v;
    }
    if let Some(v) = update.max_resolution_delay_secs {
        config.max_resolution_delay_secs = v;
    }
    if let Some(v) = update.dispute_bond_lamports {
        config.dispute_bond_lamports = v;
    }
    if let Some(v) = update.treasury {
        config.treasury = v;
    }
    if let Some(v) = update.min_backing_spl {
        config.min_backing_spl = v;
    }
    config.validate()?;
    emit_cpi!(ConfigUpdated {
        capital_loss_bps: config.capital_loss_bps,
        crucible_share_bps: config.crucible_share_bps,
        resolution_timelock_secs: config.resolution_timelock_secs,
        max_resolution_delay_secs: config.max_resolution_delay_secs,
        dispute_bond_lamports: config.dispute_bond_lamports,
        treasury: config.treasury,
        min_backing_spl: config.min_backing_spl,
    });
    Ok(())
}

pub fn set_oracles(ctx: Context<AdminConfig>, oracles: Vec<Pubkey>, threshold: u8) -> Result<()> {
    ctx.accounts.config.set_oracles(&oracles, threshold)?;
    emit_cpi!(OraclesUpdated { oracles, threshold });
    Ok(())
}

pub fn set_paused(ctx: Context<SetPaused>, paused: bool) -> Result<()> {
    ctx.accounts.program_state.paused = paused;
    emit_cpi!(PauseChanged { paused });
    Ok(())
}
