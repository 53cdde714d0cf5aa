use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::constants::*;
use crate::events::EpochClaimed;
use crate::instructions::claim_sol::{record_claim, Receipt};
use crate::state::{AssetPool, Epoch};

/// A wallet's token share of a closed epoch, paid into a token account of its choosing.
#[event_cpi]
#[derive(Accounts)]
pub struct ClaimSpl<'info> {
    #[account(mut)]
    pub wallet: Signer<'info>,
    #[account(mut, token::mint = mint)]
    pub recipient: Account<'info, TokenAccount>,
    pub mint: Account<'info, Mint>,
    #[account(mut, seeds = [ASSET_POOL_SEED, mint.key().as_ref()], bump = asset_pool.bump)]
    pub asset_pool: Account<'info, AssetPool>,
    #[account(
        mut,
        seeds = [EPOCH_SEED, mint.key().as_ref(), &epoch.epoch.to_le_bytes()],
        bump = epoch.bump,
    )]
    pub epoch: Account<'info, Epoch>,
    /// CHECK: created by the handler at this PDA; its existence is what refuses a second
    /// claim (see vault_common::account).
    #[account(mut, seeds = [CLAIM_SEED, epoch.key().as_ref(), wallet.key().as_ref()], bump)]
    pub receipt: UncheckedAccount<'info>,
    #[account(mut, seeds = [TOKEN_VAULT_SEED, mint.key().as_ref()], bump = asset_pool.vault_bump)]
    pub token_vault: Account<'info, TokenAccount>,
    pub token_program: Program<'info, Token>,
    pub system_program: Program<'info, System>,
}

pub fn handler(ctx: Context<ClaimSpl>, amount: u64, proof: Vec<[u8; 32]>) -> Result<()> {
    let wallet = ctx.accounts.wallet.key();
    record_claim(
        &mut ctx.accounts.asset_pool,
        &mut ctx.accounts.epoch,
        Receipt {
            payer: &ctx.accounts.wallet.to_account_info(),
            account: &ctx.accounts.receipt,
            bump: ctx.bumps.receipt,
        },
        amount,
        &proof,
    )?;
    let mint = ctx.accounts.mint.key();
    let pool_bump = [ctx.accounts.asset_pool.bump];
    vault_common::transfer_tokens(
        ctx.accounts.token_vault.to_account_info(),
        ctx.accounts.mint.to_account_info(),
        ctx.accounts.recipient.to_account_info(),
        ctx.accounts.asset_pool.to_account_info(),
        amount,
        ctx.accounts.mint.decimals,
        &[&[ASSET_POOL_SEED, mint.as_ref(), &pool_bump]],
    )?;
    emit_cpi!(EpochClaimed {
        mint,
        epoch: ctx.accounts.epoch.epoch,
        wallet,
        amount,
    });
    Ok(())
}
