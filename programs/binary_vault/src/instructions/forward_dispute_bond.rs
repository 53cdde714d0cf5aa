use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::DisputeBondForwarded;
use crate::state::{Config, Dispute};

/// Sends a forfeit dispute bond (the dispute upheld or lapsed) from the dispute account to the
/// configured treasury; anyone, once. The rulings leave the bond where it is, so a treasury the
/// runtime cannot credit (a sysvar or a builtin program, which it keeps read-only) holds up
/// only this call, never a ruling or the market behind it; the
/// call can be repeated once the treasury is fixed.
#[event_cpi]
#[derive(Accounts)]
pub struct ForwardDisputeBond<'info> {
    #[account(seeds = [CONFIG_SEED], bump = config.bump)]
    pub config: Account<'info, Config>,
    #[account(mut, seeds = [DISPUTE_SEED, dispute.market_id.as_ref()], bump = dispute.bump)]
    pub dispute: Account<'info, Dispute>,
    /// CHECK: receives the bond; must be the configured treasury.
    #[account(mut, address = config.treasury @ BinaryError::WrongTreasury)]
    pub treasury: UncheckedAccount<'info>,
}

pub fn handler(mut ctx: Context<ForwardDisputeBond>) -> Result<()> {
    let accounts = &mut ctx.accounts;
    let dispute = &mut accounts.dispute;
    require!(
        dispute.status.outcome_stood() && !dispute.bond_forwarded,
        BinaryError::NoForfeitBond
    );
    dispute.bond_forwarded = true;
    let amount = dispute.bond_lamports;
    // The dispute account is this program's, so the bond moves without a CPI; its rent stays.
    dispute.sub_lamports(amount)?;
    accounts.treasury.add_lamports(amount)?;
    let event = DisputeBondForwarded {
        market_id: dispute.market_id,
        treasury: accounts.treasury.key(),
        amount,
    };
    emit_cpi!(event);
    Ok(())
}
