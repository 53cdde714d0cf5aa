use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::Claimed;
use crate::math::{claim_payout, Payout};
use crate::state::{Backing, Market, Side};

/// The backer's payout from a SOL market: a winner's principal and share of the forfeit, a
/// Yield loser's kept share, or a full refund. Once per backing, by the backer only.
#[event_cpi]
#[derive(Accounts)]
pub struct Claim<'info> {
    #[account(mut)]
    pub backer: Signer<'info>,
    #[account(
        mut,
        seeds = [MARKET_SEED, market.market_id.as_ref()],
        bump = market.bump,
        constraint = market.is_sol() @ BinaryError::WrongAsset,
    )]
    pub market: Account<'info, Market>,
    #[account(
        mut,
        seeds = [
            BACKING_SEED,
            market.market_id.as_ref(),
            backer.key().as_ref(),
            &[backing.side.seed_byte()],
        ],
        bump = backing.bump,
        has_one = backer,
    )]
    pub backing: Account<'info, Backing>,
    #[account(mut, seeds = [YES_VAULT_SEED, market.market_id.as_ref()], bump = market.yes_vault_bump)]
    pub yes_vault: SystemAccount<'info>,
    #[account(mut, seeds = [NO_VAULT_SEED, market.market_id.as_ref()], bump = market.no_vault_bump)]
    pub no_vault: SystemAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// Computes and books the claim; the caller moves the value. Returns the payout and the event.
pub fn record_claim(market: &mut Market, backing: &mut Backing) -> Result<(Payout, Claimed)> {
    require!(!backing.claimed, BinaryError::AlreadyClaimed);
    require!(
        backing.market_id == market.market_id,
        BinaryError::WrongMarket
    );
    let payout = claim_payout(market, backing.side, backing.amount)?;
    let total = payout.total()?;
    backing.claimed = true;
    backing.payout = total;
    market.total_paid_out = market.total_paid_out.safe_add(total)?;
    market.claims_count = market.claims_count.safe_add(1)?;
    Ok((
        payout,
        Claimed {
            market_id: market.market_id,
            backer: backing.backer,
            side: backing.side,
            principal: backing.amount,
            payout: total,
        },
    ))
}

pub fn handler(mut ctx: Context<Claim>) -> Result<()> {
    let accounts = &mut ctx.accounts;
    let (payout, event) = record_claim(&mut accounts.market, &mut accounts.backing)?;
    let side = accounts.backing.side;
    let market_id = accounts.market.market_id;
    let (own, other) = match side {
        Side::Yes => (&accounts.yes_vault, &accounts.no_vault),
        Side::No => (&accounts.no_vault, &accounts.yes_vault),
    };
    let own_bump = [accounts.market.vault_bump(side)];
    let other_bump = [accounts.market.vault_bump(side.opposite())];
    vault_common::transfer_sol(
        own.to_account_info(),
        accounts.backer.to_account_info(),
        payout.from_own_side,
        &[&[side.vault_seed(), &market_id, &own_bump]],
    )?;
    vault_common::transfer_sol(
        other.to_account_info(),
        accounts.backer.to_account_info(),
        payout.from_other_side,
        &[&[side.opposite().vault_seed(), &market_id, &other_bump]],
    )?;
    emit_cpi!(event);
    Ok(())
}
