use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::AssetPoolInitialized;
use crate::state::{AssetPool, CrucibleState, Epoch, EpochStatus};
use crate::SOL_MINT;

/// Opens SOL accounting: the asset pool, epoch 0, and the lamport vault's rent reserve.
#[event_cpi]
#[derive(Accounts)]
pub struct InitSolPool<'info> {
    #[account(mut)]
    pub admin: Signer<'info>,
    #[account(seeds = [STATE_SEED], bump = state.bump, has_one = admin @ CrucibleError::NotAdmin)]
    pub state: Account<'info, CrucibleState>,
    #[account(
        init,
        payer = admin,
        space = 8 + AssetPool::INIT_SPACE,
        seeds = [ASSET_POOL_SEED, SOL_MINT.as_ref()],
        bump,
    )]
    pub asset_pool: Account<'info, AssetPool>,
    #[account(
        init,
        payer = admin,
        space = 8 + Epoch::INIT_SPACE,
        seeds = [EPOCH_SEED, SOL_MINT.as_ref(), &0u64.to_le_bytes()],
        bump,
    )]
    pub epoch: Account<'info, Epoch>,
    #[account(mut, seeds = [SOL_VAULT_SEED], bump)]
    pub sol_vault: SystemAccount<'info>,
    pub system_program: Program<'info, System>,
}

pub fn handler(ctx: Context<InitSolPool>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    // The vault must stay rent-exempt when every claim has drained it, so it keeps a reserve
    // that is never accounted as distributable.
    let reserve = Rent::get()?.minimum_balance(0);
    let top_up = reserve.saturating_sub(ctx.accounts.sol_vault.lamports());
    vault_common::transfer_sol(
        ctx.accounts.admin.to_account_info(),
        ctx.accounts.sol_vault.to_account_info(),
        top_up,
        &[],
    )?;

    let pool = &mut ctx.accounts.asset_pool;
    pool.mint = SOL_MINT;
    pool.current_epoch = 0;
    pool.vault_bump = ctx.bumps.sol_vault;
    pool.bump = ctx.bumps.asset_pool;
    open_first_epoch(&mut ctx.accounts.epoch, SOL_MINT, ctx.bumps.epoch, now);
    emit_cpi!(AssetPoolInitialized {
        mint: SOL_MINT,
        started_at: now,
    });
    Ok(())
}

pub fn open_first_epoch(epoch: &mut Epoch, mint: Pubkey, bump: u8, now: i64) {
    *epoch = Epoch {
        mint,
        epoch: 0,
        status: EpochStatus::Open,
        started_at: now,
        closed_at: 0,
        claim_deadline: 0,
        deposited: 0,
        rolled_in: 0,
        conviction_pool: 0,
        creator_pool: 0,
        merkle_root: [0; 32],
        claimed: 0,
        claims: 0,
        rolled_out: 0,
        bump,
    };
}
