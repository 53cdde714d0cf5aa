use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::EpochClosed;
use crate::state::{AssetPool, CrucibleState, Epoch, EpochStatus};

/// The keeper's distribution of a finished epoch: the two pool totals and the Merkle root of
/// `(wallet, amount)` leaves whose amounts sum to `conviction_pool + creator_pool`.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug)]
pub struct CloseEpochArgs {
    pub conviction_pool: u64,
    pub creator_pool: u64,
    pub merkle_root: [u8; 32],
}

/// Closes the current epoch and opens the next one, which inherits whatever the root does not
/// distribute.
#[event_cpi]
#[derive(Accounts)]
pub struct CloseEpoch<'info> {
    #[account(mut)]
    pub keeper: Signer<'info>,
    #[account(seeds = [STATE_SEED], bump = state.bump, has_one = keeper @ CrucibleError::NotKeeper)]
    pub state: Account<'info, CrucibleState>,
    #[account(mut, seeds = [ASSET_POOL_SEED, asset_pool.mint.as_ref()], bump = asset_pool.bump)]
    pub asset_pool: Account<'info, AssetPool>,
    #[account(
        mut,
        seeds = [EPOCH_SEED, asset_pool.mint.as_ref(), &asset_pool.current_epoch.to_le_bytes()],
        bump = epoch.bump,
    )]
    pub epoch: Account<'info, Epoch>,
    #[account(
        init,
        payer = keeper,
        space = 8 + Epoch::INIT_SPACE,
        seeds = [
            EPOCH_SEED,
            asset_pool.mint.as_ref(),
            &asset_pool.current_epoch.safe_add(1)?.to_le_bytes(),
        ],
        bump,
    )]
    pub next_epoch: Account<'info, Epoch>,
    pub system_program: Program<'info, System>,
}

pub fn handler(ctx: Context<CloseEpoch>, args: CloseEpochArgs) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let state = &ctx.accounts.state;
    let epoch = &mut ctx.accounts.epoch;
    require!(
        epoch.status == EpochStatus::Open,
        CrucibleError::EpochNotOpen
    );
    require!(
        now >= epoch.started_at.safe_add(state.epoch_duration_secs)?,
        CrucibleError::EpochTooYoung
    );
    let distributable = args.conviction_pool.safe_add(args.creator_pool)?;
    let available = epoch.available()?;
    require!(
        distributable <= available,
        CrucibleError::DistributionExceedsEpoch
    );
    let carried = available.safe_sub(distributable)?;

    epoch.status = EpochStatus::Closed;
    epoch.closed_at = now;
    epoch.claim_deadline = now.safe_add(state.claim_window_secs)?;
    epoch.conviction_pool = args.conviction_pool;
    epoch.creator_pool = args.creator_pool;
    epoch.merkle_root = args.merkle_root;

    let pool = &mut ctx.accounts.asset_pool;
    pool.current_epoch = pool.current_epoch.safe_add(1)?;
    ctx.accounts.next_epoch.set_inner(Epoch {
        mint: pool.mint,
        epoch: pool.current_epoch,
        status: EpochStatus::Open,
        started_at: now,
        closed_at: 0,
        claim_deadline: 0,
        deposited: 0,
        rolled_in: carried,
        conviction_pool: 0,
        creator_pool: 0,
        merkle_root: [0; 32],
        claimed: 0,
        claims: 0,
        rolled_out: 0,
        bump: ctx.bumps.next_epoch,
    });
    emit_cpi!(EpochClosed {
        mint: pool.mint,
        epoch: epoch.epoch,
        conviction_pool: args.conviction_pool,
        creator_pool: args.creator_pool,
        carried_to_next: carried,
        merkle_root: args.merkle_root,
        claim_deadline: epoch.claim_deadline,
    });
    Ok(())
}
