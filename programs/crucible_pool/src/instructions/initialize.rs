use anchor_lang::prelude::*;
use anchor_lang::solana_program::bpf_loader_upgradeable;

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::CrucibleInitialized;
use crate::state::CrucibleState;

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug)]
pub struct InitializeArgs {
    pub keeper: Pubkey,
    pub epoch_duration_secs: i64,
    pub claim_window_secs: i64,
    /// The depositing programs' CPI signers allowed from the start (binary_vault's and
    /// shield_vault's); later additions wait the admin timelock.
    pub authorized_sources: Vec<Pubkey>,
    /// A second key that may veto roots beside the admin from the first epoch (neither the
    /// admin nor the keeper); the zero key for none. Later changes wait the admin timelock.
    pub guardian: Pubkey,
}

/// Creates the program state. Only the program's upgrade authority may call it, so nobody can
/// front-run the deployment and seize the admin role.
#[event_cpi]
#[derive(Accounts)]
pub struct Initialize<'info> {
    #[account(mut)]
    pub admin: Signer<'info>,
    /// CHECK: created by the handler at this PDA (see vault_common::account).
    #[account(mut, seeds = [STATE_SEED], bump)]
    pub state: UncheckedAccount<'info>,
    #[account(
        seeds = [crate::ID.as_ref()],
        bump,
        seeds::program = bpf_loader_upgradeable::ID,
        constraint = program_data.upgrade_authority_address == Some(admin.key())
            @ CrucibleError::NotUpgradeAuthority,
    )]
    pub program_data: Account<'info, ProgramData>,
    pub system_program: Program<'info, System>,
}

pub fn check_durations(epoch_duration_secs: i64, claim_window_secs: i64) -> Result<()> {
    for secs in [epoch_duration_secs, claim_window_secs] {
        require!(
            (MIN_DURATION_SECS..=MAX_DURATION_SECS).contains(&secs),
            CrucibleError::InvalidDuration
        );
    }
    Ok(())
}

pub fn handler(ctx: Context<Initialize>, args: InitializeArgs) -> Result<()> {
    check_durations(args.epoch_duration_secs, args.claim_window_secs)?;
    require!(
        args.authorized_sources.len() <= MAX_AUTHORIZED_SOURCES,
        CrucibleError::TooManySources
    );
    let mut state = CrucibleState {
        version: crate::state::CrucibleStateVersion::CURRENT,
        admin: ctx.accounts.admin.key(),
        keeper: args.keeper,
        authorized_sources: [Pubkey::default(); MAX_AUTHORIZED_SOURCES],
        epoch_duration_secs: args.epoch_duration_secs,
        claim_window_secs: args.claim_window_secs,
        bump: ctx.bumps.state,
        pending_admin: None,
        guardian: args.guardian,
        pending_change: None,
    };
    for source in &args.authorized_sources {
        state.set_authorized(*source, true)?;
    }
    state.check_roles()?;
    vault_common::init_account(
        &ctx.accounts.admin.to_account_info(),
        &ctx.accounts.state.to_account_info(),
        &[STATE_SEED, &[state.bump]],
        &state,
    )?;
    emit_cpi!(CrucibleInitialized {
        admin: state.admin,
        keeper: state.keeper,
        epoch_duration_secs: state.epoch_duration_secs,
        claim_window_secs: state.claim_window_secs,
        guardian: state.guardian,
    });
    Ok(())
}
