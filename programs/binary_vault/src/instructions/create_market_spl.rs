use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token, TokenAccount};
use crucible_pool::state::AssetPool as CrucibleAssetPool;

use crate::constants::*;
use crate::error::BinaryError;
use crate::instructions::create_market::{
    created_event, write_new_market, CreateMarketArgs, NewMarket,
};
use crate::state::{Config, Market, ProgramState};

/// An SPL-denominated market: token vaults owned by the market PDA. The mint must already have
/// a crucible_pool asset pool, so that a Yield forfeit always has somewhere to go.
#[event_cpi]
#[derive(Accounts)]
#[instruction(args: CreateMarketArgs)]
pub struct CreateMarketSpl<'info> {
    #[account(mut)]
    pub creator: Signer<'info>,
    #[account(address = program_state.admin @ BinaryError::NotAdmin)]
    pub admin: Option<Signer<'info>>,
    #[account(mut, seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ProgramState>,
    #[account(seeds = [CONFIG_SEED], bump = config.bump)]
    pub config: Account<'info, Config>,
    #[account(
        init,
        payer = creator,
        space = 8 + Market::INIT_SPACE,
        seeds = [MARKET_SEED, args.market_id.as_ref()],
        bump,
    )]
    pub market: Account<'info, Market>,
    pub mint: Account<'info, Mint>,
    #[account(
        init,
        payer = creator,
        seeds = [YES_TOKEN_VAULT_SEED, args.market_id.as_ref()],
        bump,
        token::mint = mint,
        token::authority = market,
        token::token_program = token_program,
    )]
    pub yes_vault: Account<'info, TokenAccount>,
    #[account(
        init,
        payer = creator,
        seeds = [NO_TOKEN_VAULT_SEED, args.market_id.as_ref()],
        bump,
        token::mint = mint,
        token::authority = market,
        token::token_program = token_program,
    )]
    pub no_vault: Account<'info, TokenAccount>,
    #[account(
        seeds = [crucible_pool::constants::ASSET_POOL_SEED, mint.key().as_ref()],
        bump = crucible_asset_pool.bump,
        seeds::program = crucible_pool::ID,
    )]
    pub crucible_asset_pool: Account<'info, CrucibleAssetPool>,
    pub token_program: Program<'info, Token>,
    pub system_program: Program<'info, System>,
}

pub fn handler(mut ctx: Context<CreateMarketSpl>, args: CreateMarketArgs) -> Result<()> {
    let accounts = &mut ctx.accounts;
    let min_backing = accounts.config.min_backing_spl;
    write_new_market(
        &mut accounts.program_state,
        &accounts.config,
        &mut accounts.market,
        NewMarket {
            args: &args,
            creator: accounts.creator.key(),
            admin_signed: accounts.admin.is_some(),
            mint: accounts.mint.key(),
            min_backing,
            bumps: (ctx.bumps.market, ctx.bumps.yes_vault, ctx.bumps.no_vault),
        },
    )?;
    emit_cpi!(created_event(&ctx.accounts.market));
    Ok(())
}
