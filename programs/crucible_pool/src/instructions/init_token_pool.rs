use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token};

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::AssetPoolInitialized;
use crate::instructions::init_sol_pool::open_asset;
use crate::state::CrucibleState;

/// Opens accounting for one SPL mint: its asset pool, epoch 0 and a token vault owned by the
/// asset pool PDA.
#[event_cpi]
#[derive(Accounts)]
pub struct InitTokenPool<'info> {
    #[account(mut)]
    pub admin: Signer<'info>,
    #[account(seeds = [STATE_SEED], bump = state.bump, has_one = admin @ CrucibleError::NotAdmin)]
    pub state: Account<'info, CrucibleState>,
    /// A freeze authority could freeze the pool's vault: such mints are refused.
    #[account(constraint = mint.freeze_authority.is_none() @ CrucibleError::MintHasFreezeAuthority)]
    pub mint: Account<'info, Mint>,
    /// CHECK: created by the handler at this PDA (see vault_common::account).
    #[account(mut, seeds = [ASSET_POOL_SEED, mint.key().as_ref()], bump)]
    pub asset_pool: UncheckedAccount<'info>,
    /// CHECK: created by the handler at this PDA.
    #[account(mut, seeds = [EPOCH_SEED, mint.key().as_ref(), &0u64.to_le_bytes()], bump)]
    pub epoch: UncheckedAccount<'info>,
    /// CHECK: created by the handler as a token account of `mint` owned by `asset_pool`.
    #[account(mut, seeds = [TOKEN_VAULT_SEED, mint.key().as_ref()], bump)]
    pub token_vault: UncheckedAccount<'info>,
    pub token_program: Program<'info, Token>,
    pub system_program: Program<'info, System>,
}

pub fn handler(ctx: Context<InitTokenPool>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let mint = ctx.accounts.mint.key();
    let admin = ctx.accounts.admin.to_account_info();
    vault_common::create_token_vault(
        &admin,
        &ctx.accounts.token_vault,
        &ctx.accounts.mint.to_account_info(),
        ctx.accounts.asset_pool.key,
        &[TOKEN_VAULT_SEED, mint.as_ref(), &[ctx.bumps.token_vault]],
    )?;
    open_asset(
        &admin,
        &ctx.accounts.asset_pool,
        &ctx.accounts.epoch,
        mint,
        (ctx.bumps.asset_pool, ctx.bumps.epoch, ctx.bumps.token_vault),
        now,
    )?;
    emit_cpi!(AssetPoolInitialized {
        mint,
        started_at: now,
    });
    Ok(())
}
