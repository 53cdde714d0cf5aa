use anchor_lang::prelude::*;
use anchor_lang::solana_program::bpf_loader_upgradeable;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::ProgramInitialized;
use crate::state::{Config, ProgramState};

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug)]
pub struct InitializeArgs {
    pub treasury: Pubkey,
    pub oracles: Vec<Pubkey>,
    pub oracle_threshold: u8,
    pub dispute_bond_lamports: u64,
    pub max_resolution_delay_secs: i64,
}

/// Creates program state and config with the spec's defaults (capital loss 3500 bps, crucible
/// share 5000 bps, 172800 s hold). The signer must be the program's upgrade authority, so the
/// admin role cannot be taken by whoever calls first after deployment.
#[event_cpi]
#[derive(Accounts)]
pub struct Initialize<'info> {
    #[account(mut)]
    pub admin: Signer<'info>,
    /// CHECK: created by the handler at this PDA (see vault_common::account).
    #[account(mut, seeds = [PROGRAM_STATE_SEED], bump)]
    pub program_state: UncheckedAccount<'info>,
    /// CHECK: created by the handler at this PDA.
    #[account(mut, seeds = [CONFIG_SEED], bump)]
    pub config: UncheckedAccount<'info>,
    #[account(
        seeds = [crate::ID.as_ref()],
        bump,
        seeds::program = bpf_loader_upgradeable::ID,
        constraint = program_data.upgrade_authority_address == Some(admin.key())
            @ BinaryError::NotUpgradeAuthority,
    )]
    pub program_data: Account<'info, ProgramData>,
    pub system_program: Program<'info, System>,
}

pub fn handler(ctx: Context<Initialize>, args: InitializeArgs) -> Result<()> {
    let (_, cpi_authority_bump) = Pubkey::find_program_address(&[CPI_AUTHORITY_SEED], &crate::ID);
    let admin = ctx.accounts.admin.to_account_info();
    let state_bump = ctx.bumps.program_state;
    vault_common::init_account(
        &admin,
        &ctx.accounts.program_state,
        &[PROGRAM_STATE_SEED, &[state_bump]],
        &ProgramState {
            version: crate::state::ProgramStateVersion::CURRENT,
            admin: admin.key(),
            paused: false,
            market_count: 0,
            cpi_authority_bump,
            bump: state_bump,
            pending_admin: None,
        },
    )?;

    let mut config = Config {
        version: crate::state::ConfigVersion::CURRENT,
        capital_loss_bps: DEFAULT_CAPITAL_LOSS_BPS,
        crucible_share_bps: DEFAULT_CRUCIBLE_SHARE_BPS,
        oracle_threshold: 0,
        oracle_count: 0,
        oracles: [Pubkey::default(); MAX_ORACLES],
        resolution_timelock_secs: DEFAULT_RESOLUTION_TIMELOCK_SECS,
        max_resolution_delay_secs: args.max_resolution_delay_secs,
        dispute_bond_lamports: args.dispute_bond_lamports,
        treasury: args.treasury,
        bump: ctx.bumps.config,
        pending_change: None,
    };
    config.set_oracles(&args.oracles, args.oracle_threshold)?;
    config.validate(Rent::get()?.minimum_balance(0))?;
    vault_common::init_account(
        &admin,
        &ctx.accounts.config,
        &[CONFIG_SEED, &[config.bump]],
        &config,
    )?;

    emit_cpi!(ProgramInitialized {
        admin: ctx.accounts.admin.key(),
        treasury: config.treasury,
        oracle_threshold: config.oracle_threshold,
        oracle_count: config.oracle_count,
    });
    Ok(())
}
