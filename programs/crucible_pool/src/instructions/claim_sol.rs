use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::EpochClaimed;
use crate::merkle;
use crate::state::{AssetPool, ClaimReceipt, Epoch, EpochStatus};
use crate::SOL_MINT;

/// A wallet's SOL share of a closed epoch, proven against the epoch's root. The receipt PDA
/// makes it once per wallet per epoch.
#[event_cpi]
#[derive(Accounts)]
pub struct ClaimSol<'info> {
    #[account(mut)]
    pub wallet: Signer<'info>,
    #[account(mut, seeds = [ASSET_POOL_SEED, SOL_MINT.as_ref()], bump = asset_pool.bump)]
    pub asset_pool: Account<'info, AssetPool>,
    #[account(
        mut,
        seeds = [EPOCH_SEED, SOL_MINT.as_ref(), &epoch.epoch.to_le_bytes()],
        bump = epoch.bump,
    )]
    pub epoch: Account<'info, Epoch>,
    /// CHECK: created by the handler at this PDA; its existence is what refuses a second
    /// claim (see vault_common::account).
    #[account(mut, seeds = [CLAIM_SEED, epoch.key().as_ref(), wallet.key().as_ref()], bump)]
    pub receipt: UncheckedAccount<'info>,
    #[account(mut, seeds = [SOL_VAULT_SEED], bump = asset_pool.vault_bump)]
    pub sol_vault: SystemAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// The claiming wallet (which pays the receipt's rent) and its receipt PDA.
pub struct Receipt<'a, 'info> {
    pub payer: &'a AccountInfo<'info>,
    pub account: &'a AccountInfo<'info>,
    pub bump: u8,
}

/// Checks the proof and the epoch's window, books the claim and writes the receipt; the caller
/// moves the value.
pub fn record_claim(
    pool: &mut AssetPool,
    epoch: &mut Account<Epoch>,
    receipt: Receipt,
    amount: u64,
    proof: &[[u8; 32]],
) -> Result<()> {
    let wallet = receipt.payer.key();
    let now = Clock::get()?.unix_timestamp;
    require!(amount > 0, CrucibleError::ZeroAmount);
    require!(
        epoch.status == EpochStatus::Closed,
        CrucibleError::EpochNotClosed
    );
    require!(now >= epoch.claimable_at, CrucibleError::RootInChallenge);
    require!(
        now <= epoch.claim_deadline,
        CrucibleError::ClaimWindowClosed
    );
    require!(proof.len() <= MAX_PROOF_LEN, CrucibleError::ProofTooLong);
    let leaf = merkle::leaf_hash(&epoch.key(), &wallet, amount);
    require!(
        merkle::verify(proof, &epoch.merkle_root, leaf),
        CrucibleError::InvalidProof
    );
    // A root whose leaves sum to more than the posted pools must not drain other epochs.
    let claimed = epoch.claimed.safe_add(amount)?;
    require!(
        claimed <= epoch.distributable()?,
        CrucibleError::ClaimExceedsDistribution
    );
    epoch.claimed = claimed;
    epoch.claims = epoch.claims.safe_add(1)?;
    pool.total_claimed = pool.total_claimed.safe_add(amount)?;
    let epoch_key = epoch.key();
    vault_common::init_account(
        receipt.payer,
        receipt.account,
        &[
            CLAIM_SEED,
            epoch_key.as_ref(),
            wallet.as_ref(),
            &[receipt.bump],
        ],
        &ClaimReceipt {
            version: crate::state::ClaimReceiptVersion::CURRENT,
            epoch: epoch_key,
            wallet,
            amount,
            claimed_at: now,
            bump: receipt.bump,
        },
    )
}

pub fn handler(ctx: Context<ClaimSol>, amount: u64, proof: Vec<[u8; 32]>) -> Result<()> {
    let wallet = ctx.accounts.wallet.key();
    record_claim(
        &mut ctx.accounts.asset_pool,
        &mut ctx.accounts.epoch,
        Receipt {
            payer: &ctx.accounts.wallet.to_account_info(),
            account: &ctx.accounts.receipt,
            bump: ctx.bumps.receipt,
        },
        amount,
        &proof,
    )?;
    let vault_bump = [ctx.accounts.asset_pool.vault_bump];
    vault_common::transfer_sol(
        ctx.accounts.sol_vault.to_account_info(),
        ctx.accounts.wallet.to_account_info(),
        amount,
        &[&[SOL_VAULT_SEED, &vault_bump]],
    )?;
    emit_cpi!(EpochClaimed {
        mint: SOL_MINT,
        epoch: ctx.accounts.epoch.epoch,
        wallet,
        amount,
    });
    Ok(())
}
