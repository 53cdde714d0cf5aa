use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::AssetPoolInitialized;
use crate::instructions::init_sol_pool::open_first_epoch;
use crate::state::{AssetPool, CrucibleState, Epoch};

/// Opens accounting for one SPL mint: its asset pool, epoch 0 and a token vault owned by the
/// asset pool PDA.
#[event_cpi]
#[derive(Accounts)]
pub struct InitTokenPool<'info> {
    #[account(mut)]
    pub admin: Signer<'info>,
    #[account(seeds = [STATE_SEED], bump = state.bump, has_one = admin @ CrucibleError::NotAdmin)]
    pub state: Account<'info, CrucibleState>,
    pub mint: Account<'info, Mint>,
    #[account(
        init,
        payer = admin,
        space = 8 + AssetPool::INIT_SPACE,
        seeds = [ASSET_POOL_SEED, mint.key().as_ref()],
        bump,
    )]
    pub asset_pool: Account<'info, AssetPool>,
    #[account(
        init,
        payer = admin,
        space = 8 + Epoch::INIT_SPACE,
        seeds = [EPOCH_SEED, mint.key().as_ref(), &0u64.to_le_bytes()],
        bump,
    )]
    pub epoch: Account<'info, Epoch>,
    #[account(
        init,
        payer = admin,
        seeds = [TOKEN_VAULT_SEED, mint.key().as_ref()],
        bump,
        token::mint = mint,
        token::authority = asset_pool,
        token::token_program = token_program,
    )]
    pub token_vault: Account<'info, TokenAccount>,
    pub token_program: Program<'info, Token>,
    pub system_program: Program<'info, System>,
}

pub fn handler(ctx: Context<InitTokenPool>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let mint = ctx.accounts.mint.key();
    let pool = &mut ctx.accounts.asset_pool;
    pool.mint = mint;
    pool.current_epoch = 0;
    pool.vault_bump = ctx.bumps.token_vault;
    pool.bump = ctx.bumps.asset_pool;
    open_first_epoch(&mut ctx.accounts.epoch, mint, ctx.bumps.epoch, now);
    emit_cpi!(AssetPoolInitialized {
        mint,
        started_at: now,
    });
    Ok(())
}
