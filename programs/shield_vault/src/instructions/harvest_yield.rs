use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::YieldHarvested;
use crate::state::{Coverage, ShieldProgramState, ShieldSide};

/// Books realised yield on one side: the lamports the side vault holds beyond its rent reserve
/// and everything already accounted. Only real surplus is booked (it raises the side's price
/// per share); a vault holding less than its books is a loss, which is refused.
#[event_cpi]
#[derive(Accounts)]
#[instruction(side: ShieldSide)]
pub struct HarvestYield<'info> {
    #[account(
        constraint = harvest_authority.key() == program_state.harvest_authority
            @ ShieldError::NotHarvestAuthority,
    )]
    pub harvest_authority: Signer<'info>,
    #[account(seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ShieldProgramState>,
    #[account(mut, seeds = [SHIELD_STATE_SEED, coverage.protocol_id.as_ref()], bump = coverage.bump)]
    pub coverage: Account<'info, Coverage>,
    #[account(
        seeds = [side.vault_seed(), coverage.protocol_id.as_ref()],
        bump = coverage.vault_bump(side),
    )]
    pub vault: SystemAccount<'info>,
}

pub fn handler(ctx: Context<HarvestYield>, side: ShieldSide) -> Result<()> {
    let reserve = Rent::get()?.minimum_balance(0);
    let balance = ctx.accounts.vault.lamports();
    let coverage = &mut ctx.accounts.coverage;
    let protocol_id = coverage.protocol_id;
    let pool = coverage.pool_mut(side);
    let surplus = pool
        .unbooked(balance, reserve)
        .ok_or(ShieldError::HarvestWouldBookLoss)?;
    require!(surplus > 0, ShieldError::NothingToHarvest);
    require!(pool.shares_total > 0, ShieldError::NoBackers);
    pool.book_yield(surplus)?;
    let event = YieldHarvested {
        protocol_id,
        side,
        amount: surplus,
        side_total_assets: pool.total_assets,
        side_yield_harvested: pool.yield_harvested,
    };
    emit_cpi!(event);
    Ok(())
}
