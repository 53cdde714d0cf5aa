use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token, TokenAccount};

use crate::constants::*;
use crate::error::BinaryError;
use crate::instructions::claim::record_claim;
use crate::state::{Backing, Market, Side};

/// `claim` for SPL markets: paid from the token vaults, signed by the market PDA, into a token
/// account of the backer's for the market's mint.
#[event_cpi]
#[derive(Accounts)]
pub struct ClaimSpl<'info> {
    #[account(mut)]
    pub backer: Signer<'info>,
    #[account(
        mut,
        seeds = [MARKET_SEED, market.market_id.as_ref()],
        bump = market.bump,
        constraint = !market.is_sol() @ BinaryError::WrongAsset,
    )]
    pub market: Account<'info, Market>,
    #[account(
        mut,
        seeds = [
            BACKING_SEED,
            market.market_id.as_ref(),
            backer.key().as_ref(),
            &[backing.side.seed_byte()],
        ],
        bump = backing.bump,
        has_one = backer,
    )]
    pub backing: Account<'info, Backing>,
    #[account(address = market.mint @ BinaryError::WrongMint)]
    pub mint: Account<'info, Mint>,
    #[account(
        mut,
        constraint = backer_token.mint == mint.key() @ BinaryError::WrongMint,
        token::authority = backer,
    )]
    pub backer_token: Account<'info, TokenAccount>,
    #[account(mut, seeds = [YES_TOKEN_VAULT_SEED, market.market_id.as_ref()], bump = market.yes_vault_bump)]
    pub yes_vault: Account<'info, TokenAccount>,
    #[account(mut, seeds = [NO_TOKEN_VAULT_SEED, market.market_id.as_ref()], bump = market.no_vault_bump)]
    pub no_vault: Account<'info, TokenAccount>,
    pub token_program: Program<'info, Token>,
}

pub fn handler(mut ctx: Context<ClaimSpl>) -> Result<()> {
    let accounts = &mut ctx.accounts;
    let (payout, event) = record_claim(&mut accounts.market, &mut accounts.backing)?;
    let side = accounts.backing.side;
    let (own, other) = match side {
        Side::Yes => (&accounts.yes_vault, &accounts.no_vault),
        Side::No => (&accounts.no_vault, &accounts.yes_vault),
    };
    let market_id = accounts.market.market_id;
    let market_bump = [accounts.market.bump];
    let signer: &[&[&[u8]]] = &[&[MARKET_SEED, &market_id, &market_bump]];
    let decimals = accounts.mint.decimals;
    for (vault, amount) in [(own, payout.from_own_side), (other, payout.from_other_side)] {
        vault_common::transfer_tokens(
            vault.to_account_info(),
            accounts.mint.to_account_info(),
            accounts.backer_token.to_account_info(),
            accounts.market.to_account_info(),
            amount,
            decimals,
            signer,
        )?;
    }
    emit_cpi!(event);
    Ok(())
}
