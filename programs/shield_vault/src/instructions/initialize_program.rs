use anchor_lang::prelude::*;
use anchor_lang::solana_program::bpf_loader_upgradeable;

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::ShieldProgramInitialized;
use crate::state::{AdminChange, ShieldProgramState};

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug)]
pub struct InitializeProgramArgs {
    pub oracles: Vec<Pubkey>,
    pub oracle_threshold: u8,
    pub treasury: Pubkey,
    pub harvest_authority: Pubkey,
    /// Must be crucible_pool: the seam share is a CPI into it.
    pub seam_pool_program: Pubkey,
    pub max_self_hedge_bps: u16,
}

/// Sets the oracle signers, treasury, seam pool program and harvest authority, once. Only the
/// program's upgrade authority may call it, and it becomes the admin.
#[event_cpi]
#[derive(Accounts)]
pub struct InitializeProgram<'info> {
    #[account(mut)]
    pub admin: Signer<'info>,
    /// CHECK: created by the handler at this PDA (see vault_common::account).
    #[account(mut, seeds = [PROGRAM_STATE_SEED], bump)]
    pub program_state: UncheckedAccount<'info>,
    #[account(
        seeds = [crate::ID.as_ref()],
        bump,
        seeds::program = bpf_loader_upgradeable::ID,
        constraint = program_data.upgrade_authority_address == Some(admin.key())
            @ ShieldError::NotUpgradeAuthority,
    )]
    pub program_data: Account<'info, ProgramData>,
    pub system_program: Program<'info, System>,
}

pub fn handler(ctx: Context<InitializeProgram>, args: InitializeProgramArgs) -> Result<()> {
    require_keys_eq!(
        args.seam_pool_program,
        crucible_pool::ID,
        ShieldError::WrongSeamPool
    );
    let oracle_set = AdminChange::oracle_set(&args.oracles, args.oracle_threshold)
        .ok_or(ShieldError::InvalidOracleSet)?;
    for change in [
        AdminChange::Treasury(args.treasury),
        AdminChange::HarvestAuthority(args.harvest_authority),
        AdminChange::MaxSelfHedgeBps(args.max_self_hedge_bps),
    ] {
        ShieldProgramState::validate(&change)?;
    }
    let (_, cpi_authority_bump) = Pubkey::find_program_address(&[CPI_AUTHORITY_SEED], &crate::ID);
    let mut state = ShieldProgramState {
        version: crate::state::ShieldProgramStateVersion::CURRENT,
        admin: ctx.accounts.admin.key(),
        oracles: [Pubkey::default(); MAX_ORACLES],
        oracle_count: 0,
        oracle_threshold: 0,
        treasury: args.treasury,
        harvest_authority: args.harvest_authority,
        seam_pool_program: args.seam_pool_program,
        max_self_hedge_bps: args.max_self_hedge_bps,
        paused: false,
        coverage_count: 0,
        pending_change: None,
        cpi_authority_bump,
        bump: ctx.bumps.program_state,
        pending_admin: None,
    };
    state.apply(&oracle_set);
    vault_common::init_account(
        &ctx.accounts.admin.to_account_info(),
        &ctx.accounts.program_state,
        &[PROGRAM_STATE_SEED, &[state.bump]],
        &state,
    )?;
    emit_cpi!(ShieldProgramInitialized {
        admin: state.admin,
        treasury: state.treasury,
        harvest_authority: state.harvest_authority,
        oracle_threshold: state.oracle_threshold,
        oracle_count: state.oracle_count,
    });
    Ok(())
}
