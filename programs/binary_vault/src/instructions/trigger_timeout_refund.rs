use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::RefundTriggered;
use crate::state::{Dispute, DisputeStatus, Market};

/// Permissionless escape hatch that sends a stuck market to refund (status 4):
/// - no outcome was ever proposed and `deadline + max_resolution_delay_secs` has passed, or
/// - a dispute has stayed open for `max_resolution_delay_secs` without an admin ruling; its
///   bond then goes back to the disputer.
///
/// Money can therefore never be locked by missing oracles or a missing admin.
#[event_cpi]
#[derive(Accounts)]
pub struct TriggerTimeoutRefund<'info> {
    #[account(mut, seeds = [MARKET_SEED, market.market_id.as_ref()], bump = market.bump)]
    pub market: Account<'info, Market>,
    /// Needed only for a disputed market.
    #[account(mut, seeds = [DISPUTE_SEED, market.market_id.as_ref()], bump = dispute.bump)]
    pub dispute: Option<Account<'info, Dispute>>,
    /// CHECK: the recorded disputer, to receive the bond back; checked in the handler.
    #[account(mut)]
    pub disputer: Option<UncheckedAccount<'info>>,
}

pub fn handler(mut ctx: Context<TriggerTimeoutRefund>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let accounts = &mut ctx.accounts;
    let market = &mut accounts.market;
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
        ORACLE_STATUS_DISPUTED => {
            let dispute = accounts
                .dispute
                .as_mut()
                .ok_or(BinaryError::NoOpenDispute)?;
            let disputer = accounts
                .disputer
                .as_ref()
                .ok_or(BinaryError::WrongDisputer)?;
            require!(
                dispute.status == DisputeStatus::Open,
                BinaryError::NoOpenDispute
            );
            require_keys_eq!(disputer.key(), dispute.disputer, BinaryError::WrongDisputer);
            let refund_from = dispute
                .opened_at
                .safe_add(market.max_resolution_delay_secs)?;
            require!(now >= refund_from, BinaryError::ResolutionDelayNotElapsed);
            dispute.sub_lamports(dispute.bond_lamports)?;
            disputer.add_lamports(dispute.bond_lamports)?;
            dispute.status = DisputeStatus::Refunded;
            dispute.settled_at = now;
        }
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
