use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::MarketFinalized;
use crate::math::settle;
use crate::state::{Market, Side};

/// Finalises a market (SOL or SPL) once the proposed outcome's hold has passed with no open
/// dispute. Anyone may call it. It moves no money: claims pay from the vaults, and a Yield
/// market's crucible share waits in the losing vault until `forward_crucible_share[_spl]`
/// sends it, so that crucible_pool's state (a revoked source, a missing pool) can never stop a
/// market from finalising or its backers from claiming.
#[event_cpi]
#[derive(Accounts)]
pub struct FinalizeResolution<'info> {
    #[account(mut, seeds = [MARKET_SEED, market.market_id.as_ref()], bump = market.bump)]
    pub market: Account<'info, Market>,
}

/// Checks the market may finalise and writes its settlement; a market nobody backed on the
/// winning side goes to refund instead.
fn apply_finalization(market: &mut Market) -> Result<()> {
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
        return Ok(());
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
    Ok(())
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

pub fn handler(ctx: Context<FinalizeResolution>) -> Result<()> {
    apply_finalization(&mut ctx.accounts.market)?;
    emit_cpi!(finalized_event(&ctx.accounts.market));
    Ok(())
}
