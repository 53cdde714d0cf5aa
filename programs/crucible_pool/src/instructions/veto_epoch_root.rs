use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::EpochRootVetoed;
use crate::state::{AssetPool, CrucibleState, Epoch, EpochStatus};

/// The admin's or the guardian's veto of a posted root during its challenge delay
/// (`ROOT_CHALLENGE_DELAY_SECS`): nothing has been claimed yet, and the whole distribution rolls
/// into the open epoch, whose next root redistributes it. The keeper alone therefore cannot
/// drain an epoch with a bad root, and a veto itself only moves money forward. A new keeper
/// waits the 259,200 s admin timelock, longer than the challenge delay, and the guardian is a
/// second key that can stop a root the admin lets through.
#[event_cpi]
#[derive(Accounts)]
pub struct VetoEpochRoot<'info> {
    pub authority: Signer<'info>,
    #[account(
        seeds = [STATE_SEED],
        bump = state.bump,
        constraint = state.may_veto(&authority.key()) @ CrucibleError::NotAdminOrGuardian,
    )]
    pub state: Account<'info, CrucibleState>,
    #[account(seeds = [ASSET_POOL_SEED, asset_pool.mint.as_ref()], bump = asset_pool.bump)]
    pub asset_pool: Account<'info, AssetPool>,
    #[account(
        mut,
        seeds = [EPOCH_SEED, asset_pool.mint.as_ref(), &vetoed_epoch.epoch.to_le_bytes()],
        bump = vetoed_epoch.bump,
    )]
    pub vetoed_epoch: Account<'info, Epoch>,
    #[account(
        mut,
        seeds = [EPOCH_SEED, asset_pool.mint.as_ref(), &asset_pool.current_epoch.to_le_bytes()],
        bump = current_epoch.bump,
    )]
    pub current_epoch: Account<'info, Epoch>,
}

pub fn handler(ctx: Context<VetoEpochRoot>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let vetoed = &mut ctx.accounts.vetoed_epoch;
    require!(
        vetoed.status == EpochStatus::Closed,
        CrucibleError::EpochNotClosed
    );
    require!(now < vetoed.claimable_at, CrucibleError::ChallengeDelayOver);
    let current = &mut ctx.accounts.current_epoch;
    require!(
        current.status == EpochStatus::Open,
        CrucibleError::EpochNotOpen
    );
    let amount = vetoed.roll_into(current)?;
    emit_cpi!(EpochRootVetoed {
        mint: ctx.accounts.asset_pool.mint,
        epoch: vetoed.epoch,
        into_epoch: current.epoch,
        amount,
    });
    Ok(())
}
