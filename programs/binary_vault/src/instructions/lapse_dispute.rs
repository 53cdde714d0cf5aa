use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::BinaryError;
use crate::instructions::resolve_dispute::{apply_ruling, BondTo, Ruling};
use crate::state::{lapses_at, Dispute, Market};

/// Settles a dispute the admin has left unruled until `max_resolution_delay_secs` after the
/// hold's end (never earlier, however early in the hold it opened); anyone. The proposed
/// outcome stands and the bond is forfeit to the treasury, as if upheld: a losing wallet cannot
/// turn the admin's silence into a refund of the whole market. The bond waits in the dispute
/// account for `forward_dispute_bond`.
#[event_cpi]
#[derive(Accounts)]
pub struct LapseDispute<'info> {
    #[account(mut, seeds = [MARKET_SEED, market.market_id.as_ref()], bump = market.bump)]
    pub market: Account<'info, Market>,
    #[account(mut, seeds = [DISPUTE_SEED, market.market_id.as_ref()], bump = dispute.bump)]
    pub dispute: Account<'info, Dispute>,
}

pub fn handler(mut ctx: Context<LapseDispute>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let accounts = &mut ctx.accounts;
    let hold_ends_at = accounts
        .market
        .hold_ends_at()
        .ok_or(ProgramError::ArithmeticOverflow)?;
    let lapses_at = lapses_at(
        accounts.dispute.opened_at,
        hold_ends_at,
        accounts.market.max_resolution_delay_secs,
    )
    .ok_or(ProgramError::ArithmeticOverflow)?;
    require!(now >= lapses_at, BinaryError::ResolutionDelayNotElapsed);
    let (settled, bond_to) = apply_ruling(
        &mut accounts.market,
        &mut accounts.dispute,
        Ruling::Lapse,
        now,
    )?;
    debug_assert!(matches!(bond_to, BondTo::Treasury));
    emit_cpi!(settled);
    Ok(())
}
