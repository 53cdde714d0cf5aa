use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::ShieldFinalized;
use crate::math::split;
use crate::state::{Coverage, CoverageStatus, ShieldProgramState, ShieldSide};

/// Executes the splits once the outcome's 172800 s timelock has elapsed (anyone may call). The
/// winners' share of the losing principal moves into the winning vault. On an exploit the
/// protocol wallet's (partnership), the treasury's and the seam pool's shares wait in the losing
/// vault for `forward_payout` and `forward_seam_share`: no recipient's account, nor
/// crucible_pool's state, can stop a coverage from finalising. Yield stays on its own side. If
/// nobody backed the winning side, the shield refunds instead.
#[event_cpi]
#[derive(Accounts)]
pub struct FinalizeResolution<'info> {
    #[account(seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ShieldProgramState>,
    #[account(mut, seeds = [SHIELD_STATE_SEED, coverage.protocol_id.as_ref()], bump = coverage.bump)]
    pub coverage: Account<'info, Coverage>,
    #[account(mut, seeds = [SAFE_VAULT_SEED, coverage.protocol_id.as_ref()], bump = coverage.safe_vault_bump)]
    pub safe_vault: SystemAccount<'info>,
    #[account(mut, seeds = [EXPLOIT_VAULT_SEED, coverage.protocol_id.as_ref()], bump = coverage.exploit_vault_bump)]
    pub exploit_vault: SystemAccount<'info>,
    pub system_program: Program<'info, System>,
}

pub fn handler(mut ctx: Context<FinalizeResolution>) -> Result<()> {
    let event = finalize(&mut ctx)?;
    emit_cpi!(event);
    Ok(())
}

fn finalize(ctx: &mut Context<FinalizeResolution>) -> Result<ShieldFinalized> {
    let now = Clock::get()?.unix_timestamp;
    let accounts = &mut ctx.accounts;
    let coverage = &mut accounts.coverage;
    require!(
        coverage.status == CoverageStatus::Active,
        ShieldError::CoverageNotActive
    );
    let winner = coverage.outcome.ok_or(ShieldError::ThresholdNotMet)?;
    require!(
        now >= coverage
            .outcome_proposed_at
            .safe_add(RESOLUTION_TIMELOCK_SECS)?,
        ShieldError::TimelockNotElapsed
    );
    coverage.finalized_at = now;
    if coverage.pool(winner).principal == 0 {
        coverage.status = CoverageStatus::Refunding;
        return Ok(ShieldFinalized {
            protocol_id: coverage.protocol_id,
            outcome: winner,
            refunded: true,
            winner_bonus_pool: 0,
            protocol_payout: 0,
            treasury_payout: 0,
            seam_payout: 0,
        });
    }

    let loser = winner.opposite();
    let loser_principal = coverage.pool(loser).principal;
    let parts = split(
        coverage.kind,
        winner == ShieldSide::Exploit,
        loser_principal,
    )?;
    coverage.status = CoverageStatus::Resolved;
    coverage.winner_bonus_pool = parts.winner_bonus_pool;
    coverage.protocol_payout = parts.protocol_payout;
    coverage.treasury_payout = parts.treasury_payout;
    coverage.seam_payout = parts.seam_payout;
    // The protocol's, the treasury's and the seam pool's shares stay in the losing vault, still
    // counted as held, until forwarded.
    let loser_pool = coverage.pool_mut(loser);
    loser_pool.held = loser_pool.held.safe_sub(parts.winner_bonus_pool)?;
    let winner_pool = coverage.pool_mut(winner);
    winner_pool.held = winner_pool.held.safe_add(parts.winner_bonus_pool)?;

    let protocol_id = coverage.protocol_id;
    let loser_bump = [coverage.vault_bump(loser)];
    let loser_seeds: &[&[u8]] = &[loser.vault_seed(), &protocol_id, &loser_bump];
    let (winner_vault, loser_vault) = match winner {
        ShieldSide::Safe => (
            accounts.safe_vault.to_account_info(),
            accounts.exploit_vault.to_account_info(),
        ),
        ShieldSide::Exploit => (
            accounts.exploit_vault.to_account_info(),
            accounts.safe_vault.to_account_info(),
        ),
    };
    vault_common::transfer_sol(
        loser_vault,
        winner_vault,
        parts.winner_bonus_pool,
        &[loser_seeds],
    )?;
    Ok(ShieldFinalized {
        protocol_id,
        outcome: winner,
        refunded: false,
        winner_bonus_pool: parts.winner_bonus_pool,
        protocol_payout: parts.protocol_payout,
        treasury_payout: parts.treasury_payout,
        seam_payout: parts.seam_payout,
    })
}
