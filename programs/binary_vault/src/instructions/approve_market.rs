use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::MarketApproved;
use crate::state::{Market, ProgramState};

/// The admin review of a Classic market created without the admin's co-signature.
#[event_cpi]
#[derive(Accounts)]
pub struct ApproveMarket<'info> {
    pub admin: Signer<'info>,
    #[account(
        seeds = [PROGRAM_STATE_SEED],
        bump = program_state.bump,
        has_one = admin @ BinaryError::NotAdmin,
    )]
    pub program_state: Account<'info, ProgramState>,
    #[account(mut, seeds = [MARKET_SEED, market.market_id.as_ref()], bump = market.bump)]
    pub market: Account<'info, Market>,
}

pub fn handler(ctx: Context<ApproveMarket>) -> Result<()> {
    let market = &mut ctx.accounts.market;
    require!(!market.approved, BinaryError::AlreadyApproved);
    require!(
        market.oracle_status == ORACLE_STATUS_OPEN && !market.finalized,
        BinaryError::MarketNotOpen
    );
    market.approved = true;
    emit_cpi!(MarketApproved {
        market_id: market.market_id,
    });
    Ok(())
}
