use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token};
use crucible_pool::state::{AssetPool as CrucibleAssetPool, CrucibleState};

use crate::constants::*;
use crate::error::BinaryError;
use crate::instructions::create_market::{
    create_new_market, created_event, crucible_accepts, CreateMarketArgs, NewMarket,
};
use crate::state::{Config, ProgramState};

/// An SPL-denominated market: token vaults owned by the market PDA. Its backing minimum is a
/// hundredth of one whole token of its mint (as 0.01 SOL for SOL markets), from the decimals.
/// The mint must already have a crucible_pool asset pool, so that a Yield forfeit always has
/// somewhere to go.
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
    /// CHECK: created by the handler at this PDA (see vault_common::account).
    #[account(mut, seeds = [MARKET_SEED, args.market_id.as_ref()], bump)]
    pub market: UncheckedAccount<'info>,
    /// A freeze authority could freeze the market's token vaults and so every backer's money:
    /// such mints are refused (docs/decisions.md).
    #[account(constraint = mint.freeze_authority.is_none() @ BinaryError::MintHasFreezeAuthority)]
    pub mint: Account<'info, Mint>,
    /// CHECK: created by the handler as a token account of `mint` owned by `market`.
    #[account(mut, seeds = [YES_TOKEN_VAULT_SEED, args.market_id.as_ref()], bump)]
    pub yes_vault: UncheckedAccount<'info>,
    /// CHECK: created by the handler as a token account of `mint` owned by `market`.
    #[account(mut, seeds = [NO_TOKEN_VAULT_SEED, args.market_id.as_ref()], bump)]
    pub no_vault: UncheckedAccount<'info>,
    #[account(
        seeds = [crucible_pool::constants::ASSET_POOL_SEED, mint.key().as_ref()],
        bump = crucible_asset_pool.bump,
        seeds::program = crucible_pool::ID,
    )]
    pub crucible_asset_pool: Account<'info, CrucibleAssetPool>,
    /// crucible_pool's state: a Yield market needs binary_vault among its sources.
    #[account(
        seeds = [crucible_pool::constants::STATE_SEED],
        bump = crucible_state.bump,
        seeds::program = crucible_pool::ID,
    )]
    pub crucible_state: Account<'info, CrucibleState>,
    pub token_program: Program<'info, Token>,
    pub system_program: Program<'info, System>,
}

pub fn handler(mut ctx: Context<CreateMarketSpl>, args: CreateMarketArgs) -> Result<()> {
    let accounts = &mut ctx.accounts;
    let min_backing = min_backing_spl(accounts.mint.decimals)?;
    let accepts = crucible_accepts(&accounts.crucible_state, &accounts.program_state)?;
    let creator = accounts.creator.to_account_info();
    let market = create_new_market(
        &mut accounts.program_state,
        &accounts.config,
        &creator,
        &accounts.market,
        NewMarket {
            args: &args,
            creator: accounts.creator.key(),
            admin_signed: accounts.admin.is_some(),
            crucible_accepts: accepts,
            mint: accounts.mint.key(),
            min_backing,
            bumps: (ctx.bumps.market, ctx.bumps.yes_vault, ctx.bumps.no_vault),
        },
    )?;
    let mint = accounts.mint.to_account_info();
    for (vault, side_seed, bump) in [
        (
            &accounts.yes_vault,
            YES_TOKEN_VAULT_SEED,
            ctx.bumps.yes_vault,
        ),
        (&accounts.no_vault, NO_TOKEN_VAULT_SEED, ctx.bumps.no_vault),
    ] {
        vault_common::create_token_vault(
            &creator,
            vault,
            &mint,
            accounts.market.key,
            &[side_seed, args.market_id.as_ref(), &[bump]],
        )?;
    }
    emit_cpi!(created_event(&market, ctx.accounts.market.key()));
    Ok(())
}

/// A hundredth of one whole token of a mint with `decimals` (at least one base unit), the SPL
/// counterpart of `MIN_BACKING_LAMPORTS`; refuses a mint whose whole token overflows a u64.
pub fn min_backing_spl(decimals: u8) -> Result<u64> {
    10u64
        .checked_pow(decimals as u32)
        .map(|whole| (whole / 100).max(1))
        .ok_or_else(|| BinaryError::WrongMint.into())
}

#[cfg(test)]
mod tests {
    use super::min_backing_spl;

    #[test]
    fn the_spl_minimum_is_a_hundredth_of_a_whole_token() {
        assert_eq!(min_backing_spl(0).unwrap(), 1);
        assert_eq!(min_backing_spl(2).unwrap(), 1);
        assert_eq!(min_backing_spl(6).unwrap(), 10_000);
        assert_eq!(min_backing_spl(9).unwrap(), 10_000_000);
        assert_eq!(min_backing_spl(19).unwrap(), 100_000_000_000_000_000);
        assert!(min_backing_spl(20).is_err());
    }
}
