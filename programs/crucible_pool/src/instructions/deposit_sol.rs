use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::CrucibleDeposited;
use crate::state::{AssetPool, CrucibleState, Epoch, EpochStatus};
use crate::SOL_MINT;

/// Lamports into the SOL vault, credited to the current epoch. Callable only with the signature
/// of an authorised source (another program's CPI signer PDA), so the pool's books only ever
/// hold forfeits and seam shares, never arbitrary deposits.
#[event_cpi]
#[derive(Accounts)]
pub struct DepositSol<'info> {
    #[account(constraint = state.is_authorized(&authority.key()) @ CrucibleError::UnauthorizedSource)]
    pub authority: Signer<'info>,
    /// System-owned account the lamports come from (a vault PDA of the calling program, which
    /// signs for it in the same CPI).
    #[account(mut)]
    pub source: Signer<'info>,
    #[account(seeds = [STATE_SEED], bump = state.bump)]
    pub state: Account<'info, CrucibleState>,
    #[account(mut, seeds = [ASSET_POOL_SEED, SOL_MINT.as_ref()], bump = asset_pool.bump)]
    pub asset_pool: Account<'info, AssetPool>,
    #[account(
        mut,
        seeds = [EPOCH_SEED, SOL_MINT.as_ref(), &asset_pool.current_epoch.to_le_bytes()],
        bump = epoch.bump,
    )]
    pub epoch: Account<'info, Epoch>,
    #[account(mut, seeds = [SOL_VAULT_SEED], bump = asset_pool.vault_bump)]
    pub sol_vault: SystemAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// Books `amount` into the pool's current epoch.
pub fn record_deposit(pool: &mut AssetPool, epoch: &mut Epoch, amount: u64) -> Result<()> {
    require!(amount > 0, CrucibleError::ZeroAmount);
    require!(
        epoch.status == EpochStatus::Open,
        CrucibleError::EpochNotOpen
    );
    epoch.deposited = epoch.deposited.safe_add(amount)?;
    pool.total_deposited = pool.total_deposited.safe_add(amount)?;
    Ok(())
}

pub fn handler(ctx: Context<DepositSol>, amount: u64) -> Result<()> {
    record_deposit(
        &mut ctx.accounts.asset_pool,
        &mut ctx.accounts.epoch,
        amount,
    )?;
    vault_common::transfer_sol(
        ctx.accounts.source.to_account_info(),
        ctx.accounts.sol_vault.to_account_info(),
        amount,
        &[],
    )?;
    emit_cpi!(CrucibleDeposited {
        mint: SOL_MINT,
        epoch: ctx.accounts.epoch.epoch,
        source: ctx.accounts.authority.key(),
        amount,
        epoch_deposited: ctx.accounts.epoch.deposited,
    });
    Ok(())
}
