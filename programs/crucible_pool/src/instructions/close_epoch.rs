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
    /// CHECK: created by the handler at this PDA (see vault_common::account).
    #[account(
        mut,
        seeds = [
            EPOCH_SEED,
            asset_pool.mint.as_ref(),
            &asset_pool.current_epoch.safe_add(1)?.to_le_bytes(),
        ],
        bump,
    )]
    pub next_epoch: UncheckedAccount<'info>,
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
    epoch.claimable_at = now.safe_add(ROOT_CHALLENGE_DELAY_SECS)?;
    epoch.claim_deadline = epoch.claimable_at.safe_add(state.claim_window_secs)?;
    epoch.conviction_pool = args.conviction_pool;
    epoch.creator_pool = args.creator_pool;
    epoch.merkle_root = args.merkle_root;

    let pool = &mut ctx.accounts.asset_pool;
    pool.current_epoch = pool.current_epoch.safe_add(1)?;
    let next_bump = ctx.bumps.next_epoch;
    vault_common::init_account(
        &ctx.accounts.keeper.to_account_info(),
        &ctx.accounts.next_epoch,
        &[
            EPOCH_SEED,
            pool.mint.as_ref(),
            &pool.current_epoch.to_le_bytes(),
            &[next_bump],
        ],
        &Epoch::open(pool.mint, pool.current_epoch, carried, now, next_bump),
    )?;
    emit_cpi!(EpochClosed {
        mint: pool.mint,
        epoch: epoch.epoch,
        conviction_pool: args.conviction_pool,
        creator_pool: args.creator_pool,
        carried_to_next: carried,
        merkle_root: args.merkle_root,
        claim_deadline: epoch.claim_deadline,
        claimable_at: epoch.claimable_at,
    });
    Ok(())
}
