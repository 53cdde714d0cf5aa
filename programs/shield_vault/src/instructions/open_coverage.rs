use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::CoverageOpened;
use crate::state::{Coverage, CoverageStatus, ShieldKind, ShieldProgramState, SidePool};

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug)]
pub struct OpenCoverageArgs {
    /// Identifies this coverage period (the api derives it from the protocol and period).
    pub protocol_id: [u8; 32],
    pub kind: ShieldKind,
    /// The protected protocol's wallet; ignored on a community shield.
    pub protocol_wallet: Pubkey,
    /// 30, 60 or 90.
    pub period_days: u16,
    /// Coverage fee, paid by `fee_payer` to the treasury now, at period start.
    pub fee_lamports: u64,
}

/// Opens a coverage period for a protocol: the shield state, its SAFE and EXPLOIT vaults (with
/// rent reserves from the admin), and the fee collected at period start.
#[event_cpi]
#[derive(Accounts)]
#[instruction(args: OpenCoverageArgs)]
pub struct OpenCoverage<'info> {
    #[account(mut)]
    pub admin: Signer<'info>,
    #[account(mut)]
    pub fee_payer: Signer<'info>,
    #[account(
        mut,
        seeds = [PROGRAM_STATE_SEED],
        bump = program_state.bump,
        has_one = admin @ ShieldError::NotAdmin,
    )]
    pub program_state: Account<'info, ShieldProgramState>,
    /// CHECK: created by the handler at this PDA (see vault_common::account).
    #[account(mut, seeds = [SHIELD_STATE_SEED, args.protocol_id.as_ref()], bump)]
    pub coverage: UncheckedAccount<'info>,
    #[account(mut, seeds = [SAFE_VAULT_SEED, args.protocol_id.as_ref()], bump)]
    pub safe_vault: SystemAccount<'info>,
    #[account(mut, seeds = [EXPLOIT_VAULT_SEED, args.protocol_id.as_ref()], bump)]
    pub exploit_vault: SystemAccount<'info>,
    /// CHECK: receives the fee; must be the configured treasury.
    #[account(mut, address = program_state.treasury @ ShieldError::WrongTreasury)]
    pub treasury: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

pub fn handler(mut ctx: Context<OpenCoverage>, args: OpenCoverageArgs) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let accounts = &mut ctx.accounts;
    require!(!accounts.program_state.paused, ShieldError::Paused);
    require!(
        PERIOD_DAYS.contains(&args.period_days),
        ShieldError::InvalidPeriod
    );
    let protocol_wallet = match args.kind {
        ShieldKind::Partnership => {
            require_keys_neq!(
                args.protocol_wallet,
                Pubkey::default(),
                ShieldError::MissingProtocolWallet
            );
            args.protocol_wallet
        }
        ShieldKind::Community => Pubkey::default(),
    };
    let coverage = Coverage {
        version: crate::state::CoverageVersion::CURRENT,
        protocol_id: args.protocol_id,
        kind: args.kind,
        protocol_wallet,
        period_days: args.period_days,
        period_start: now,
        period_end: now.safe_add((args.period_days as i64).safe_mul(DAY_SECS)?)?,
        fee_lamports: args.fee_lamports,
        status: CoverageStatus::Active,
        outcome: None,
        safe_votes: 0,
        exploit_votes: 0,
        outcome_proposed_at: 0,
        finalized_at: 0,
        safe: SidePool::default(),
        exploit: SidePool::default(),
        winner_bonus_pool: 0,
        protocol_payout: 0,
        treasury_payout: 0,
        seam_payout: 0,
        principal_returned: 0,
        bonus_paid: 0,
        claims_count: 0,
        bump: ctx.bumps.coverage,
        safe_vault_bump: ctx.bumps.safe_vault,
        exploit_vault_bump: ctx.bumps.exploit_vault,
        seam_forwarded: false,
        unresolvable_votes: 0,
        oracles: accounts.program_state.coverage_oracles(),
        treasury_forwarded: false,
        protocol_forwarded: false,
    };
    let admin = accounts.admin.to_account_info();
    vault_common::init_account(
        &admin,
        &accounts.coverage,
        &[
            SHIELD_STATE_SEED,
            args.protocol_id.as_ref(),
            &[coverage.bump],
        ],
        &coverage,
    )?;
    // System-owned vaults keep a rent reserve that is never accounted, so the last claim can
    // drain everything above it.
    let reserve = Rent::get()?.minimum_balance(0);
    for vault in [&accounts.safe_vault, &accounts.exploit_vault] {
        vault_common::transfer_sol(
            admin.clone(),
            vault.to_account_info(),
            reserve.saturating_sub(vault.lamports()),
            &[],
        )?;
    }
    vault_common::transfer_sol(
        accounts.fee_payer.to_account_info(),
        accounts.treasury.to_account_info(),
        args.fee_lamports,
        &[],
    )?;
    accounts.program_state.coverage_count = accounts.program_state.coverage_count.safe_add(1)?;
    emit_cpi!(CoverageOpened {
        protocol_id: args.protocol_id,
        kind: args.kind,
        protocol_wallet,
        period_start: coverage.period_start,
        period_end: coverage.period_end,
        fee_lamports: args.fee_lamports,
    });
    Ok(())
}
