use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::CrucibleDeposited;
use crate::instructions::deposit_sol::record_deposit;
use crate::state::{AssetPool, CrucibleState, Epoch};

/// Tokens into the mint's vault, credited to the current epoch; authorised sources only.
#[event_cpi]
#[derive(Accounts)]
pub struct DepositSpl<'info> {
    #[account(constraint = state.is_authorized(&authority.key()) @ CrucibleError::UnauthorizedSource)]
    pub authority: Signer<'info>,
    /// Owner (or delegate) of `source`; the calling program signs for its vault authority.
    pub source_authority: Signer<'info>,
    #[account(mut, token::mint = mint)]
    pub source: Account<'info, TokenAccount>,
    pub mint: Account<'info, Mint>,
    #[account(seeds = [STATE_SEED], bump = state.bump)]
    pub state: Account<'info, CrucibleState>,
    #[account(mut, seeds = [ASSET_POOL_SEED, mint.key().as_ref()], bump = asset_pool.bump)]
    pub asset_pool: Account<'info, AssetPool>,
    #[account(
        mut,
        seeds = [EPOCH_SEED, mint.key().as_ref(), &asset_pool.current_epoch.to_le_bytes()],
        bump = epoch.bump,
    )]
    pub epoch: Account<'info, Epoch>,
    #[account(mut, seeds = [TOKEN_VAULT_SEED, mint.key().as_ref()], bump = asset_pool.vault_bump)]
    pub token_vault: Account<'info, TokenAccount>,
    pub token_program: Program<'info, Token>,
}

pub fn handler(ctx: Context<DepositSpl>, amount: u64) -> Result<()> {
    record_deposit(
        &mut ctx.accounts.asset_pool,
        &mut ctx.accounts.epoch,
        amount,
    )?;
    vault_common::transfer_tokens(
        ctx.accounts.source.to_account_info(),
        ctx.accounts.mint.to_account_info(),
        ctx.accounts.token_vault.to_account_info(),
        ctx.accounts.source_authority.to_account_info(),
        amount,
        ctx.accounts.mint.decimals,
        &[],
    )?;
    emit_cpi!(CrucibleDeposited {
        mint: ctx.accounts.mint.key(),
        epoch: ctx.accounts.epoch.epoch,
        source: ctx.accounts.authority.key(),
        amount,
        epoch_deposited: ctx.accounts.epoch.deposited,
    });
    Ok(())
}
