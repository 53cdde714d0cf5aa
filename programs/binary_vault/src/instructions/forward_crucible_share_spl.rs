use anchor_lang::prelude::*;
use anchor_spl::token::{Mint, Token, TokenAccount};
use crucible_pool::program::CruciblePool;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::CrucibleShareForwarded;
use crate::instructions::forward_crucible_share::take_crucible_share;
use crate::state::{Market, ProgramState, Side};

/// `forward_crucible_share` for SPL markets: the crucible share moves from the losing token
/// vault (signed by the market PDA, its authority) into crucible_pool's vault for the mint.
#[event_cpi]
#[derive(Accounts)]
pub struct ForwardCrucibleShareSpl<'info> {
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
    #[account(mut, seeds = [YES_TOKEN_VAULT_SEED, market.market_id.as_ref()], bump = market.yes_vault_bump)]
    pub yes_vault: Account<'info, TokenAccount>,
    #[account(mut, seeds = [NO_TOKEN_VAULT_SEED, market.market_id.as_ref()], bump = market.no_vault_bump)]
    pub no_vault: Account<'info, TokenAccount>,
    /// CHECK: signer PDA for crucible deposits; address fixed by its seeds.
    #[account(seeds = [CPI_AUTHORITY_SEED], bump = program_state.cpi_authority_bump)]
    pub cpi_authority: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's state; checked by crucible_pool during the CPI.
    pub crucible_state: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's asset pool for the mint; checked by crucible_pool.
    #[account(mut)]
    pub crucible_asset_pool: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's current epoch for the mint; checked by crucible_pool.
    #[account(mut)]
    pub crucible_epoch: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's token vault for the mint; checked by crucible_pool.
    #[account(mut)]
    pub crucible_vault: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's event authority; checked by crucible_pool.
    pub crucible_event_authority: UncheckedAccount<'info>,
    pub crucible_program: Program<'info, CruciblePool>,
    pub token_program: Program<'info, Token>,
}

pub fn handler(mut ctx: Context<ForwardCrucibleShareSpl>) -> Result<()> {
    let accounts = &mut ctx.accounts;
    let (loser, amount) = take_crucible_share(&mut accounts.market)?;
    let market_id = accounts.market.market_id;
    let market_bump = [accounts.market.bump];
    let auth_bump = [accounts.program_state.cpi_authority_bump];
    let source = match loser {
        Side::Yes => accounts.yes_vault.to_account_info(),
        Side::No => accounts.no_vault.to_account_info(),
    };
    let signer_seeds: &[&[&[u8]]] = &[
        &[CPI_AUTHORITY_SEED, &auth_bump],
        &[MARKET_SEED, &market_id, &market_bump],
    ];
    crucible_pool::cpi::deposit_spl(
        CpiContext::new_with_signer(
            crucible_pool::ID,
            crucible_pool::cpi::accounts::DepositSpl {
                authority: accounts.cpi_authority.to_account_info(),
                source_authority: accounts.market.to_account_info(),
                source,
                mint: accounts.mint.to_account_info(),
                state: accounts.crucible_state.to_account_info(),
                asset_pool: accounts.crucible_asset_pool.to_account_info(),
                epoch: accounts.crucible_epoch.to_account_info(),
                token_vault: accounts.crucible_vault.to_account_info(),
                token_program: accounts.token_program.to_account_info(),
                event_authority: accounts.crucible_event_authority.to_account_info(),
                program: accounts.crucible_program.to_account_info(),
            },
            signer_seeds,
        ),
        amount,
    )?;
    emit_cpi!(CrucibleShareForwarded { market_id, amount });
    Ok(())
}
