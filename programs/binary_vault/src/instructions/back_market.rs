use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::MarketBacked;
use crate::state::{Backing, Market, ProgramState, Side};

/// Lamports on YES or NO of a SOL market. A wallet's backings on one side add up in one
/// account; its YES and NO positions are separate accounts.
#[event_cpi]
#[derive(Accounts)]
#[instruction(side: Side)]
pub struct BackMarket<'info> {
    #[account(mut)]
    pub backer: Signer<'info>,
    #[account(seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ProgramState>,
    #[account(
        mut,
        seeds = [MARKET_SEED, market.market_id.as_ref()],
        bump = market.bump,
        constraint = market.is_sol() @ BinaryError::WrongAsset,
    )]
    pub market: Account<'info, Market>,
    #[account(
        mut,
        seeds = [side.vault_seed(), market.market_id.as_ref()],
        bump = market.vault_bump(side),
    )]
    pub vault: SystemAccount<'info>,
    /// CHECK: the backer's position on this side: created on the first backing (see
    /// vault_common::account), loaded and checked as a `Backing` afterwards.
    #[account(
        mut,
        seeds = [
            BACKING_SEED,
            market.market_id.as_ref(),
            backer.key().as_ref(),
            &[side.seed_byte()],
        ],
        bump,
    )]
    pub backing: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

/// The backer (who pays the account's rent on a first backing) and its backing PDA.
pub struct BackingAccount<'a, 'info> {
    pub backer: &'a AccountInfo<'info>,
    pub account: &'a AccountInfo<'info>,
    pub bump: u8,
}

/// Checks that the market takes this backing, books it and writes (or creates) the backing
/// account; the caller moves the value.
pub fn record_backing(
    program_state: &ProgramState,
    market: &mut Market,
    target: BackingAccount,
    side: Side,
    amount: u64,
) -> Result<MarketBacked> {
    let backer = target.backer.key();
    let now = Clock::get()?.unix_timestamp;
    require!(!program_state.paused, BinaryError::Paused);
    require!(
        market.oracle_status == ORACLE_STATUS_OPEN && !market.finalized,
        BinaryError::MarketNotOpen
    );
    require!(market.approved, BinaryError::MarketNotApproved);
    require!(now < market.deadline, BinaryError::DeadlinePassed);
    require!(amount >= market.min_backing, BinaryError::BelowMinimum);

    let existing = vault_common::load_existing::<Backing>(target.account)?;
    let first = existing.is_none();
    let mut backing = existing.unwrap_or(Backing {
        version: crate::state::BackingVersion::CURRENT,
        market_id: market.market_id,
        backer,
        side,
        amount: 0,
        claimed: false,
        payout: 0,
        first_backed_at: now,
        last_backed_at: now,
        bump: target.bump,
    });
    if first {
        match side {
            Side::Yes => market.yes_backers = market.yes_backers.safe_add(1)?,
            Side::No => market.no_backers = market.no_backers.safe_add(1)?,
        }
    }
    backing.amount = backing.amount.safe_add(amount)?;
    backing.last_backed_at = now;
    match side {
        Side::Yes => market.yes_total = market.yes_total.safe_add(amount)?,
        Side::No => market.no_total = market.no_total.safe_add(amount)?,
    }
    if first {
        vault_common::init_account(
            target.backer,
            target.account,
            &[
                BACKING_SEED,
                market.market_id.as_ref(),
                backer.as_ref(),
                &[side.seed_byte()],
                &[target.bump],
            ],
            &backing,
        )?;
    } else {
        vault_common::write_account(target.account, &backing)?;
    }
    Ok(MarketBacked {
        market_id: market.market_id,
        backer,
        side,
        amount,
        backing_amount: backing.amount,
        yes_total: market.yes_total,
        no_total: market.no_total,
        timestamp: now,
    })
}

pub fn handler(mut ctx: Context<BackMarket>, side: Side, amount: u64) -> Result<()> {
    let accounts = &mut ctx.accounts;
    let event = record_backing(
        &accounts.program_state,
        &mut accounts.market,
        BackingAccount {
            backer: &accounts.backer.to_account_info(),
            account: &accounts.backing,
            bump: ctx.bumps.backing,
        },
        side,
        amount,
    )?;
    vault_common::transfer_sol(
        accounts.backer.to_account_info(),
        accounts.vault.to_account_info(),
        amount,
        &[],
    )?;
    emit_cpi!(event);
    Ok(())
}
