use anchor_lang::prelude::*;
use crucible_pool::program::CruciblePool;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::SeamShareForwarded;
use crate::state::{Coverage, CoverageStatus, ShieldProgramState};

/// Sends a resolved coverage's seam-pool share (300 bps of the losing principal on an exploit)
/// from the losing vault to crucible_pool, by CPI signed by `shield_cpi_auth`. Anyone may call
/// it, once; if crucible_pool refuses, the share waits in the vault and the call can be
/// repeated. The crucible accounts are checked by crucible_pool, whose id is pinned.
#[event_cpi]
#[derive(Accounts)]
pub struct ForwardSeamShare<'info> {
    #[account(seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ShieldProgramState>,
    #[account(mut, seeds = [SHIELD_STATE_SEED, coverage.protocol_id.as_ref()], bump = coverage.bump)]
    pub coverage: Account<'info, Coverage>,
    /// The losing side's vault (checked against the outcome in the handler).
    #[account(mut)]
    pub loser_vault: SystemAccount<'info>,
    /// CHECK: signer PDA for the seam-pool deposit; address fixed by its seeds.
    #[account(seeds = [CPI_AUTHORITY_SEED], bump = program_state.cpi_authority_bump)]
    pub cpi_authority: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's state; checked by crucible_pool during the CPI.
    pub crucible_state: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's SOL asset pool; checked by crucible_pool.
    #[account(mut)]
    pub crucible_asset_pool: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's current SOL epoch; checked by crucible_pool.
    #[account(mut)]
    pub crucible_epoch: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's SOL vault; checked by crucible_pool.
    #[account(mut)]
    pub crucible_vault: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's event authority; checked by crucible_pool.
    pub crucible_event_authority: UncheckedAccount<'info>,
    pub crucible_program: Program<'info, CruciblePool>,
    pub system_program: Program<'info, System>,
}

pub fn handler(mut ctx: Context<ForwardSeamShare>) -> Result<()> {
    let accounts = &mut ctx.accounts;
    let coverage = &mut accounts.coverage;
    require!(
        coverage.status == CoverageStatus::Resolved,
        ShieldError::NotResolved
    );
    require!(
        coverage.seam_payout > 0 && !coverage.seam_forwarded,
        ShieldError::NothingToForward
    );
    let (loser, expected) = coverage.loser_vault()?;
    require_keys_eq!(
        accounts.loser_vault.key(),
        expected,
        ShieldError::WrongVault
    );
    let protocol_id = coverage.protocol_id;
    let loser_bump = [coverage.vault_bump(loser)];
    let amount = coverage.seam_payout;
    let pool = coverage.pool_mut(loser);
    pool.held = pool.held.safe_sub(amount)?;
    coverage.seam_forwarded = true;
    let auth_bump = [accounts.program_state.cpi_authority_bump];
    crucible_pool::cpi::deposit_sol(
        CpiContext::new_with_signer(
            crucible_pool::ID,
            crucible_pool::cpi::accounts::DepositSol {
                authority: accounts.cpi_authority.to_account_info(),
                source: accounts.loser_vault.to_account_info(),
                state: accounts.crucible_state.to_account_info(),
                asset_pool: accounts.crucible_asset_pool.to_account_info(),
                epoch: accounts.crucible_epoch.to_account_info(),
                sol_vault: accounts.crucible_vault.to_account_info(),
                system_program: accounts.system_program.to_account_info(),
                event_authority: accounts.crucible_event_authority.to_account_info(),
                program: accounts.crucible_program.to_account_info(),
            },
            &[
                &[CPI_AUTHORITY_SEED, &auth_bump],
                &[loser.vault_seed(), &protocol_id, &loser_bump],
            ],
        ),
        amount,
    )?;
    emit_cpi!(SeamShareForwarded {
        protocol_id,
        amount
    });
    Ok(())
}
