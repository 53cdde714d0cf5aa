use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::EpochRolledOver;
use crate::state::{AssetPool, Epoch, EpochStatus};

/// Moves what a closed epoch's wallets left unclaimed into the current epoch once the claim
/// window has passed. Anyone may call it; it only moves books inside one asset's vault.
#[event_cpi]
#[derive(Accounts)]
pub struct Rollover<'info> {
    #[account(seeds = [ASSET_POOL_SEED, asset_pool.mint.as_ref()], bump = asset_pool.bump)]
    pub asset_pool: Account<'info, AssetPool>,
    #[account(
        mut,
        seeds = [EPOCH_SEED, asset_pool.mint.as_ref(), &expired_epoch.epoch.to_le_bytes()],
        bump = expired_epoch.bump,
    )]
    pub expired_epoch: Account<'info, Epoch>,
    #[account(
        mut,
        seeds = [EPOCH_SEED, asset_pool.mint.as_ref(), &asset_pool.current_epoch.to_le_bytes()],
        bump = current_epoch.bump,
    )]
    pub current_epoch: Account<'info, Epoch>,
}

pub fn handler(ctx: Context<Rollover>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let expired = &mut ctx.accounts.expired_epoch;
    require!(
        expired.status == EpochStatus::Closed,
        CrucibleError::EpochNotClosed
    );
    require!(now > expired.claim_deadline, CrucibleError::ClaimWindowOpen);
    let current = &mut ctx.accounts.current_epoch;
    require!(
        current.status == EpochStatus::Open,
        CrucibleError::EpochNotOpen
    );

    let amount = expired.roll_into(current)?;
    emit_cpi!(EpochRolledOver {
        mint: ctx.accounts.asset_pool.mint,
        epoch: expired.epoch,
        into_epoch: current.epoch,
        amount,
    });
    Ok(())
}
