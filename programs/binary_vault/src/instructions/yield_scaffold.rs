use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::BinaryError;
use crate::state::{Market, ProgramState, Side};

/// `deposit_to_yield` / `withdraw_from_yield` (spec 4.13: scaffold only, total yield stays 0).
/// The accounts and the admin check are real so that clients and the IDL are stable; the
/// handler refuses with `YieldVenueNotConfigured` instead of pretending to move money.
#[derive(Accounts)]
pub struct YieldScaffold<'info> {
    pub admin: Signer<'info>,
    #[account(
        seeds = [PROGRAM_STATE_SEED],
        bump = program_state.bump,
        has_one = admin @ BinaryError::NotAdmin,
    )]
    pub program_state: Account<'info, ProgramState>,
    #[account(seeds = [MARKET_SEED, market.market_id.as_ref()], bump = market.bump)]
    pub market: Account<'info, Market>,
}

pub fn handler(_ctx: Context<YieldScaffold>, _side: Side, amount: u64) -> Result<()> {
    require!(amount > 0, BinaryError::ZeroAmount);
    err!(BinaryError::YieldVenueNotConfigured)
}
