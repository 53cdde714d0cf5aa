use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::ClaimReceiptClosed;
use crate::state::{ClaimReceipt, Epoch, EpochStatus};

/// Returns a claim receipt's rent to its wallet once the epoch has rolled over: claims of a
/// rolled-over epoch are refused by its status, so the receipt no longer guards anything.
#[event_cpi]
#[derive(Accounts)]
pub struct CloseClaimReceipt<'info> {
    #[account(mut)]
    pub wallet: Signer<'info>,
    #[account(
        seeds = [EPOCH_SEED, epoch.mint.as_ref(), &epoch.epoch.to_le_bytes()],
        bump = epoch.bump,
        constraint = epoch.status == EpochStatus::RolledOver @ CrucibleError::EpochNotRolledOver,
    )]
    pub epoch: Account<'info, Epoch>,
    #[account(
        mut,
        close = wallet,
        seeds = [CLAIM_SEED, epoch.key().as_ref(), wallet.key().as_ref()],
        bump = receipt.bump,
        has_one = wallet,
    )]
    pub receipt: Account<'info, ClaimReceipt>,
}

pub fn handler(ctx: Context<CloseClaimReceipt>) -> Result<()> {
    emit_cpi!(ClaimReceiptClosed {
        mint: ctx.accounts.epoch.mint,
        epoch: ctx.accounts.epoch.epoch,
        wallet: ctx.accounts.wallet.key(),
    });
    Ok(())
}
