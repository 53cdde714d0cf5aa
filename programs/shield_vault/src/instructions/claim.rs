//! The four claims: SAFE winner, EXPLOIT winner, loser yield, refund. Each pays from the
//! backing's own side vault only (the winners' share of the losing principal was moved there
//! at finalisation), once per backing, to the backer.

use anchor_lang::prelude::*;

use vault_common::{mul_div_floor, SafeMath};

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::ShieldClaimed;
use crate::math::{assets_for_shares, claim_yield};
use crate::state::{Coverage, CoverageStatus, ShieldBacking, ShieldSide};

#[event_cpi]
#[derive(Accounts)]
pub struct ShieldClaim<'info> {
    #[account(mut)]
    pub backer: Signer<'info>,
    #[account(mut, seeds = [SHIELD_STATE_SEED, coverage.protocol_id.as_ref()], bump = coverage.bump)]
    pub coverage: Account<'info, Coverage>,
    #[account(
        mut,
        seeds = [
            BACKING_SEED,
            coverage.protocol_id.as_ref(),
            backer.key().as_ref(),
            &[backing.side.seed_byte()],
        ],
        bump = backing.bump,
        has_one = backer,
    )]
    pub backing: Account<'info, ShieldBacking>,
    /// The backing's own side vault.
    #[account(
        mut,
        seeds = [backing.side.vault_seed(), coverage.protocol_id.as_ref()],
        bump = coverage.vault_bump(backing.side),
    )]
    pub vault: SystemAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// Which claim is being made; each has its own condition.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ClaimKind {
    SafeWinner,
    ExploitWinner,
    LoserYield,
    Refund,
}

fn check(kind: ClaimKind, coverage: &Coverage, side: ShieldSide) -> Result<()> {
    let resolved = coverage.status == CoverageStatus::Resolved;
    match kind {
        ClaimKind::Refund => require!(
            coverage.status == CoverageStatus::Refunding,
            ShieldError::NotRefunding
        ),
        ClaimKind::SafeWinner | ClaimKind::ExploitWinner => {
            require!(resolved, ShieldError::NotResolved);
            let claimed_side = if kind == ClaimKind::SafeWinner {
                ShieldSide::Safe
            } else {
                ShieldSide::Exploit
            };
            require!(
                coverage.outcome == Some(claimed_side) && side == claimed_side,
                ShieldError::NotWinner
            );
        }
        ClaimKind::LoserYield => {
            require!(resolved, ShieldError::NotResolved);
            require!(coverage.outcome != Some(side), ShieldError::NotLoser);
        }
    }
    Ok(())
}

pub fn handler(mut ctx: Context<ShieldClaim>, kind: ClaimKind) -> Result<()> {
    let event = claim(&mut ctx, kind)?;
    emit_cpi!(event);
    Ok(())
}

fn claim(ctx: &mut Context<ShieldClaim>, kind: ClaimKind) -> Result<ShieldClaimed> {
    let accounts = &mut ctx.accounts;
    let coverage = &mut accounts.coverage;
    let backing = &mut accounts.backing;
    require!(!backing.claimed, ShieldError::AlreadyClaimed);
    let side = backing.side;
    check(kind, coverage, side)?;

    let winner = matches!(kind, ClaimKind::SafeWinner | ClaimKind::ExploitWinner);
    let winner_bonus_pool = coverage.winner_bonus_pool;
    let pool = coverage.pool_mut(side);
    let assets = assets_for_shares(backing.shares, pool.total_assets, pool.shares_total)?;
    let yield_paid = claim_yield(assets, backing.amount_lamports, pool.yield_unpaid());
    let principal = if kind == ClaimKind::LoserYield {
        0
    } else {
        backing.amount_lamports
    };
    let bonus = if winner {
        mul_div_floor(backing.amount_lamports, winner_bonus_pool, pool.principal)?
    } else {
        0
    };
    let total = principal.safe_add(bonus)?.safe_add(yield_paid)?;
    // Burn the shares: the remaining holders' price is unchanged (floors favour them).
    pool.total_assets = pool.total_assets.safe_sub(assets)?;
    pool.shares_total = pool.shares_total.safe_sub(backing.shares)?;
    pool.yield_paid = pool.yield_paid.safe_add(yield_paid)?;
    pool.held = pool.held.safe_sub(total)?;
    coverage.principal_returned = coverage.principal_returned.safe_add(principal)?;
    coverage.bonus_paid = coverage.bonus_paid.safe_add(bonus)?;
    coverage.claims_count = coverage.claims_count.safe_add(1)?;
    backing.claimed = true;
    backing.principal_paid = principal;
    backing.bonus_paid = bonus;
    backing.yield_paid = yield_paid;

    let protocol_id = coverage.protocol_id;
    let vault_bump = [coverage.vault_bump(side)];
    vault_common::transfer_sol(
        accounts.vault.to_account_info(),
        accounts.backer.to_account_info(),
        total,
        &[&[side.vault_seed(), &protocol_id, &vault_bump]],
    )?;
    Ok(ShieldClaimed {
        protocol_id,
        backer: backing.backer,
        side,
        principal_returned: principal,
        bonus,
        yield_paid,
    })
}
