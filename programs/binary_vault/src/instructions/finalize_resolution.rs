use anchor_lang::prelude::*;
use crucible_pool::program::CruciblePool;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::MarketFinalized;
use crate::math::settle;
use crate::state::{Market, ProgramState, Side};

/// Finalises a SOL market once the proposed outcome's hold has passed with no open dispute.
/// Anyone may call it. A Yield market's crucible share leaves the losing vault here, by CPI
/// into crucible_pool signed by `binary_cpi_auth`; everything else waits in the vaults for
/// claims. The crucible accounts are checked by crucible_pool itself, whose id is pinned.
#[event_cpi]
#[derive(Accounts)]
pub struct FinalizeResolution<'info> {
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

/// Checks the market may finalise and writes its settlement. Returns the losing side, whose
/// vault pays the crucible share, or `None` when nobody backed the winning side and the market
/// goes to refund instead.
pub fn apply_finalization(market: &mut Market) -> Result<Option<Side>> {
    let now = Clock::get()?.unix_timestamp;
    require!(!market.finalized, BinaryError::AlreadyFinalized);
    require!(
        market.oracle_status != ORACLE_STATUS_DISPUTED,
        BinaryError::DisputeOpen
    );
    require!(
        market.oracle_status == ORACLE_STATUS_OPEN,
        BinaryError::MarketNotOpen
    );
    let outcome = market.outcome.ok_or(BinaryError::NoOutcomeProposed)?;
    let hold_ends_at = market
        .hold_ends_at()
        .ok_or(ProgramError::ArithmeticOverflow)?;
    require!(now >= hold_ends_at, BinaryError::HoldNotElapsed);

    market.finalized = true;
    market.finalized_at = now;
    if market.total(outcome) == 0 {
        market.oracle_status = ORACLE_STATUS_REFUND;
        return Ok(None);
    }
    let loser = outcome.opposite();
    let settlement = settle(
        market.variant,
        market.total(loser),
        market.capital_loss_bps,
        market.crucible_share_bps,
    )?;
    market.oracle_status = ORACLE_STATUS_RESOLVED;
    market.winner_bonus_pool = settlement.winner_bonus_pool;
    market.loser_refund_pool = settlement.loser_refund_pool;
    market.crucible_amount = settlement.crucible_amount;
    Ok(Some(loser))
}

pub fn finalized_event(market: &Market) -> MarketFinalized {
    MarketFinalized {
        market_id: market.market_id,
        outcome: market.outcome.unwrap_or(Side::No),
        oracle_status: market.oracle_status,
        winner_bonus_pool: market.winner_bonus_pool,
        loser_refund_pool: market.loser_refund_pool,
        crucible_amount: market.crucible_amount,
    }
}

pub fn handler(mut ctx: Context<FinalizeResolution>) -> Result<()> {
    let accounts = &mut ctx.accounts;
    let loser = apply_finalization(&mut accounts.market)?;
    let amount = accounts.market.crucible_amount;
    if let (Some(loser), true) = (loser, amount > 0) {
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
    }
    emit_cpi!(finalized_event(&ctx.accounts.market));
    Ok(())
}
