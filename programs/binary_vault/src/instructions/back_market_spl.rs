use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::constants::*;
use crate::error::BinaryError;
use crate::instructions::back_market::{record_backing, BackingAccount};
use crate::state::{Market, ProgramState, Side};

/// Tokens on YES or NO of an SPL market, from a token account of the backer's.
#[event_cpi]
#[derive(Accounts)]
#[instruction(side: Side)]
pub struct BackMarketSpl<'info> {
    #[account(mut)]
    pub backer: Signer<'info>,
    #[account(seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ProgramState>,
    #[account(
        mut,
        seeds = [MARKET_SEED, market.market_id.as_ref()],
        bump = market.bump,
        constraint = !market.is_sol() @ BinaryError::WrongAsset,
    )]
    pub market: Account<'info, Market>,
    #[account(address = market.mint @ BinaryError::WrongMint)]
    pub mint: Account<'info, Mint>,
    #[account(
        mut,
        constraint = backer_token.mint == mint.key() @ BinaryError::WrongMint,
        token::authority = backer,
    )]
    pub backer_token: Account<'info, TokenAccount>,
    #[account(
        mut,
        seeds = [side.token_vault_seed(), market.market_id.as_ref()],
        bump = market.vault_bump(side),
    )]
    pub vault: Account<'info, TokenAccount>,
    /// CHECK: the backer's position on this side: created on the first backing (see
    /// vault_common::account), loaded and checked as a `Backing` afterwards.
    #[account(
        mut,
        seeds = [
            BACKING_SEED,
            market.market_id.as_ref(),
            backer.key().as_ref(),
            &[side.seed_byte()],
        ],
        bump,
    )]
    pub backing: UncheckedAccount<'info>,
    pub token_program: Program<'info, Token>,
    pub system_program: Program<'info, System>,
}

pub fn handler(mut ctx: Context<BackMarketSpl>, side: Side, amount: u64) -> Result<()> {
    let accounts = &mut ctx.accounts;
    let event = record_backing(
        &accounts.program_state,
        &mut accounts.market,
        BackingAccount {
            backer: &accounts.backer.to_account_info(),
            account: &accounts.backing,
            bump: ctx.bumps.backing,
        },
        side,
        amount,
    )?;
    vault_common::transfer_tokens(
        accounts.backer_token.to_account_info(),
        accounts.mint.to_account_info(),
        accounts.vault.to_account_info(),
        accounts.backer.to_account_info(),
        amount,
        accounts.mint.decimals,
        &[],
    )?;
    emit_cpi!(event);
    Ok(())
}
