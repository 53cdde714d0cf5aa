use anchor_lang::prelude::*;
use crucible_pool::program::CruciblePool;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::CrucibleShareForwarded;
use crate::state::{Market, ProgramState, Side};

/// Sends a finalised Yield market's crucible share from the losing vault to crucible_pool, by
/// CPI signed by `binary_cpi_auth`. Anyone may call it, once; if crucible_pool refuses (the
/// source revoked, say), the share simply waits in the vault and the call can be repeated.
/// The crucible accounts are checked by crucible_pool itself, whose id is pinned.
#[event_cpi]
#[derive(Accounts)]
pub struct ForwardCrucibleShare<'info> {
    #[account(seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ProgramState>,
    #[account(
        mut,
        seeds = [MARKET_SEED, market.market_id.as_ref()],
        bump = market.bump,
        constraint = market.is_sol() @ BinaryError::WrongAsset,
    )]
    pub market: Account<'info, Market>,
    #[account(mut, seeds = [YES_VAULT_SEED, market.market_id.as_ref()], bump = market.yes_vault_bump)]
    pub yes_vault: SystemAccount<'info>,
    #[account(mut, seeds = [NO_VAULT_SEED, market.market_id.as_ref()], bump = market.no_vault_bump)]
    pub no_vault: SystemAccount<'info>,
    /// CHECK: signer PDA for crucible deposits; address fixed by its seeds.
    #[account(seeds = [CPI_AUTHORITY_SEED], bump = program_state.cpi_authority_bump)]
    pub cpi_authority: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's state; crucible_pool checks it during the CPI.
    pub crucible_state: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's SOL asset pool; checked by crucible_pool.
    #[account(mut)]
    pub crucible_asset_pool: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's current SOL epoch; checked by crucible_pool.
    #[account(mut)]
    pub crucible_epoch: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's SOL vault; checked by crucible_pool.
    #[account(mut)]
    pub crucible_vault: UncheckedAccount<'info>,
    /// CHECK: crucible_pool's event authority; checked by crucible_pool.
    pub crucible_event_authority: UncheckedAccount<'info>,
    pub crucible_program: Program<'info, CruciblePool>,
    pub system_program: Program<'info, System>,
}

/// The losing side whose vault holds the share, once the checks pass; marks it forwarded.
pub fn take_crucible_share(market: &mut Market) -> Result<(Side, u64)> {
    require!(
        market.finalized && market.oracle_status == ORACLE_STATUS_RESOLVED,
        BinaryError::MarketNotFinalized
    );
    require!(
        market.crucible_amount > 0 && !market.crucible_forwarded,
        BinaryError::NothingToForward
    );
    let outcome = market.outcome.ok_or(BinaryError::NoOutcomeProposed)?;
    market.crucible_forwarded = true;
    Ok((outcome.opposite(), market.crucible_amount))
}

pub fn handler(mut ctx: Context<ForwardCrucibleShare>) -> Result<()> {
    let accounts = &mut ctx.accounts;
    let (loser, amount) = take_crucible_share(&mut accounts.market)?;
    let market_id = accounts.market.market_id;
    let vault_bump = [accounts.market.vault_bump(loser)];
    let auth_bump = [accounts.program_state.cpi_authority_bump];
    let source = match loser {
        Side::Yes => accounts.yes_vault.to_account_info(),
        Side::No => accounts.no_vault.to_account_info(),
    };
    let signer_seeds: &[&[&[u8]]] = &[
        &[CPI_AUTHORITY_SEED, &auth_bump],
        &[loser.vault_seed(), &market_id, &vault_bump],
    ];
    crucible_pool::cpi::deposit_sol(
        CpiContext::new_with_signer(
            crucible_pool::ID,
            crucible_pool::cpi::accounts::DepositSol {
                authority: accounts.cpi_authority.to_account_info(),
                source,
                state: accounts.crucible_state.to_account_info(),
                asset_pool: accounts.crucible_asset_pool.to_account_info(),
                epoch: accounts.crucible_epoch.to_account_info(),
                sol_vault: accounts.crucible_vault.to_account_info(),
                system_program: accounts.system_program.to_account_info(),
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
