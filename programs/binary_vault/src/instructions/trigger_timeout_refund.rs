use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::RefundTriggered;
use crate::state::Market;

/// Permissionless escape hatch that sends a market no oracle threshold ever resolved to refund
/// (status 4) once `deadline + max_resolution_delay_secs` has passed, so missing oracles cannot
/// lock money. A dispute the admin never rules on is not a refund: anyone lapses it through
/// `lapse_dispute` and the proposed outcome stands.
#[event_cpi]
#[derive(Accounts)]
pub struct TriggerTimeoutRefund<'info> {
    #[account(mut, seeds = [MARKET_SEED, market.market_id.as_ref()], bump = market.bump)]
    pub market: Account<'info, Market>,
}

pub fn handler(ctx: Context<TriggerTimeoutRefund>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let market = &mut ctx.accounts.market;
    require!(!market.finalized, BinaryError::AlreadyFinalized);
    match market.oracle_status {
        ORACLE_STATUS_OPEN => {
            require!(
                market.outcome.is_none(),
                BinaryError::OutcomeAlreadyProposed
            );
            let refund_from = market.deadline.safe_add(market.max_resolution_delay_secs)?;
            require!(now >= refund_from, BinaryError::ResolutionDelayNotElapsed);
        }
        ORACLE_STATUS_DISPUTED => return err!(BinaryError::DisputeOpen),
        _ => return err!(BinaryError::MarketNotOpen),
    }
    market.oracle_status = ORACLE_STATUS_REFUND;
    market.finalized = true;
    market.finalized_at = now;
    emit_cpi!(RefundTriggered {
        market_id: ctx.accounts.market.market_id,
        timestamp: now,
    });
    Ok(())
}
