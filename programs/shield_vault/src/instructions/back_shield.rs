use anchor_lang::prelude::*;

use vault_common::{mul_div_floor, SafeMath};

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::{ShieldBacked, YieldHarvested};
use crate::math::shares_for_deposit;
use crate::state::{
    Coverage, CoverageStatus, ShieldBacking, ShieldKind, ShieldProgramState, ShieldSide,
};

/// Commits SOL to SAFE or EXPLOIT during the coverage period and mints yield shares at that
/// side's price. Each deposit and each position stays within 0.1–100 SOL; on a partnership
/// shield the protocol's own wallet may hold at most `max_self_hedge_bps` of the EXPLOIT side.
#[event_cpi]
#[derive(Accounts)]
#[instruction(side: ShieldSide)]
pub struct BackShield<'info> {
    #[account(mut)]
    pub backer: Signer<'info>,
    #[account(seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ShieldProgramState>,
    #[account(mut, seeds = [SHIELD_STATE_SEED, coverage.protocol_id.as_ref()], bump = coverage.bump)]
    pub coverage: Account<'info, Coverage>,
    #[account(
        mut,
        seeds = [side.vault_seed(), coverage.protocol_id.as_ref()],
        bump = coverage.vault_bump(side),
    )]
    pub vault: SystemAccount<'info>,
    /// CHECK: the backer's position on this side: created on the first backing (see
    /// vault_common::account), loaded and checked as a `ShieldBacking` afterwards.
    #[account(
        mut,
        seeds = [
            BACKING_SEED,
            coverage.protocol_id.as_ref(),
            backer.key().as_ref(),
            &[side.seed_byte()],
        ],
        bump,
    )]
    pub backing: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

pub fn handler(mut ctx: Context<BackShield>, side: ShieldSide, amount: u64) -> Result<()> {
    let (harvested, backed) = back(&mut ctx, side, amount)?;
    if let Some(harvested) = harvested {
        emit_cpi!(harvested);
    }
    emit_cpi!(backed);
    Ok(())
}

/// Books yield that reached the side's vault before this backing, so that it belongs to the
/// shares that were there when it arrived, not to the shares about to be minted.
fn book_pending_yield(
    coverage: &mut Coverage,
    side: ShieldSide,
    vault_balance: u64,
) -> Result<Option<YieldHarvested>> {
    let reserve = Rent::get()?.minimum_balance(0);
    let protocol_id = coverage.protocol_id;
    let pool = coverage.pool_mut(side);
    let pending = pool.unbooked(vault_balance, reserve).unwrap_or(0);
    // With no shares yet there is nobody to credit; the first backer's harvest books it.
    if pending == 0 || pool.shares_total == 0 {
        return Ok(None);
    }
    pool.book_yield(pending)?;
    Ok(Some(YieldHarvested {
        protocol_id,
        side,
        amount: pending,
        side_total_assets: pool.total_assets,
        side_yield_harvested: pool.yield_harvested,
    }))
}

fn back(
    ctx: &mut Context<BackShield>,
    side: ShieldSide,
    amount: u64,
) -> Result<(Option<YieldHarvested>, ShieldBacked)> {
    let now = Clock::get()?.unix_timestamp;
    let accounts = &mut ctx.accounts;
    let state = &accounts.program_state;
    let coverage = &mut accounts.coverage;
    let backer = accounts.backer.key();
    require!(!state.paused, ShieldError::Paused);
    require!(
        coverage.status == CoverageStatus::Active,
        ShieldError::CoverageNotActive
    );
    require!(now < coverage.period_end, ShieldError::PeriodEnded);
    let bounds = MIN_BACKING_LAMPORTS..=MAX_BACKING_LAMPORTS;
    require!(bounds.contains(&amount), ShieldError::BackingOutOfBounds);

    let existing = vault_common::load_existing::<ShieldBacking>(&accounts.backing)?;
    let first = existing.is_none();
    let mut backing = existing.unwrap_or(ShieldBacking {
        version: crate::state::ShieldBackingVersion::CURRENT,
        protocol_id: coverage.protocol_id,
        backer,
        side,
        amount_lamports: 0,
        shares: 0,
        multiplier_bps: DEFAULT_MULTIPLIER_BPS,
        discovery_lamports: 0,
        claimed: false,
        principal_paid: 0,
        bonus_paid: 0,
        yield_paid: 0,
        first_backed_at: now,
        last_backed_at: now,
        bump: ctx.bumps.backing,
    });
    let position = backing.amount_lamports.safe_add(amount)?;
    require!(bounds.contains(&position), ShieldError::BackingOutOfBounds);

    let side_principal = coverage.pool(side).principal.safe_add(amount)?;
    let self_hedging = coverage.kind == ShieldKind::Partnership
        && side == ShieldSide::Exploit
        && backer == coverage.protocol_wallet;
    if self_hedging {
        let cap = mul_div_floor(side_principal, state.max_self_hedge_bps as u64, 10_000)?;
        require!(position <= cap, ShieldError::SelfHedgeCapExceeded);
    }

    let discovery_ends_at = coverage
        .discovery_ends_at()
        .ok_or(ProgramError::ArithmeticOverflow)?;
    if now < discovery_ends_at {
        backing.discovery_lamports = backing.discovery_lamports.safe_add(amount)?;
    }
    // Amount-weighted: 2.0x on what was backed inside the window, 1.0x on the rest.
    let weighted = (backing.discovery_lamports as u128)
        .safe_mul(DISCOVERY_MULTIPLIER_BPS as u128)?
        .safe_add(
            (position.safe_sub(backing.discovery_lamports)? as u128)
                .safe_mul(DEFAULT_MULTIPLIER_BPS as u128)?,
        )?;
    backing.multiplier_bps = u16::try_from(weighted.safe_div(position as u128)?)
        .map_err(|_| ProgramError::ArithmeticOverflow)?;

    let harvested = book_pending_yield(coverage, side, accounts.vault.lamports())?;
    let protocol_id = coverage.protocol_id;
    let pool = coverage.pool_mut(side);
    let shares = shares_for_deposit(amount, pool.total_assets, pool.shares_total)?;
    require!(shares > 0, ShieldError::ZeroShares);
    pool.principal = side_principal;
    pool.total_assets = pool.total_assets.safe_add(amount)?;
    pool.shares_total = pool.shares_total.safe_add(shares)?;
    pool.held = pool.held.safe_add(amount)?;
    if first {
        pool.backers = pool.backers.safe_add(1)?;
    }
    let event = ShieldBacked {
        protocol_id,
        backer,
        side,
        amount,
        shares,
        multiplier_bps: backing.multiplier_bps,
        side_principal: pool.principal,
        side_total_assets: pool.total_assets,
        side_shares_total: pool.shares_total,
    };

    backing.amount_lamports = position;
    backing.shares = backing.shares.safe_add(shares)?;
    backing.last_backed_at = now;
    let backer_info = accounts.backer.to_account_info();
    if first {
        vault_common::init_account(
            &backer_info,
            &accounts.backing,
            &[
                BACKING_SEED,
                protocol_id.as_ref(),
                backer.as_ref(),
                &[side.seed_byte()],
                &[backing.bump],
            ],
            &backing,
        )?;
    } else {
        vault_common::write_account(&accounts.backing, &backing)?;
    }
    vault_common::transfer_sol(backer_info, accounts.vault.to_account_info(), amount, &[])?;
    Ok((harvested, event))
}
