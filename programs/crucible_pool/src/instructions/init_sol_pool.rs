use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::AssetPoolInitialized;
use crate::state::{AssetPool, CrucibleState, Epoch};
use crate::SOL_MINT;

/// Opens SOL accounting: the asset pool, epoch 0, and the lamport vault's rent reserve.
#[event_cpi]
#[derive(Accounts)]
pub struct InitSolPool<'info> {
    #[account(mut)]
    pub admin: Signer<'info>,
    #[account(seeds = [STATE_SEED], bump = state.bump, has_one = admin @ CrucibleError::NotAdmin)]
    pub state: Account<'info, CrucibleState>,
    /// CHECK: created by the handler at this PDA (see vault_common::account).
    #[account(mut, seeds = [ASSET_POOL_SEED, SOL_MINT.as_ref()], bump)]
    pub asset_pool: UncheckedAccount<'info>,
    /// CHECK: created by the handler at this PDA.
    #[account(mut, seeds = [EPOCH_SEED, SOL_MINT.as_ref(), &0u64.to_le_bytes()], bump)]
    pub epoch: UncheckedAccount<'info>,
    #[account(mut, seeds = [SOL_VAULT_SEED], bump)]
    pub sol_vault: SystemAccount<'info>,
    pub system_program: Program<'info, System>,
}

pub fn handler(ctx: Context<InitSolPool>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let admin = ctx.accounts.admin.to_account_info();
    // The vault must stay rent-exempt when every claim has drained it, so it keeps a reserve
    // that is never accounted as distributable.
    let reserve = Rent::get()?.minimum_balance(0);
    let top_up = reserve.saturating_sub(ctx.accounts.sol_vault.lamports());
    vault_common::transfer_sol(
        admin.clone(),
        ctx.accounts.sol_vault.to_account_info(),
        top_up,
        &[],
    )?;
    open_asset(
        &admin,
        &ctx.accounts.asset_pool,
        &ctx.accounts.epoch,
        SOL_MINT,
        (ctx.bumps.asset_pool, ctx.bumps.epoch, ctx.bumps.sol_vault),
        now,
    )?;
    emit_cpi!(AssetPoolInitialized {
        mint: SOL_MINT,
        started_at: now,
    });
    Ok(())
}

/// Creates an asset's pool and its epoch 0. `bumps` are (pool, epoch, vault).
pub fn open_asset<'info>(
    payer: &AccountInfo<'info>,
    pool: &AccountInfo<'info>,
    epoch: &AccountInfo<'info>,
    mint: Pubkey,
    bumps: (u8, u8, u8),
    now: i64,
) -> Result<()> {
    let (pool_bump, epoch_bump, vault_bump) = bumps;
    vault_common::init_account(
        payer,
        pool,
        &[ASSET_POOL_SEED, mint.as_ref(), &[pool_bump]],
        &AssetPool {
            version: crate::state::AssetPoolVersion::CURRENT,
            mint,
            current_epoch: 0,
            total_deposited: 0,
            total_claimed: 0,
            vault_bump,
            bump: pool_bump,
        },
    )?;
    vault_common::init_account(
        payer,
        epoch,
        &[
            EPOCH_SEED,
            mint.as_ref(),
            &0u64.to_le_bytes(),
            &[epoch_bump],
        ],
        &Epoch::open(mint, 0, 0, now, epoch_bump),
    )
}
