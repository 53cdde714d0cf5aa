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
    #[account(
        init_if_needed,
        payer = backer,
        space = 8 + Backing::INIT_SPACE,
        seeds = [
            BACKING_SEED,
            market.market_id.as_ref(),
            backer.key().as_ref(),
            &[side.seed_byte()],
        ],
        bump,
    )]
    pub backing: Account<'info, Backing>,
    pub system_program: Program<'info, System>,
}

/// Checks that the market takes this backing and books it; the caller moves the value.
pub fn record_backing(
    program_state: &ProgramState,
    market: &mut Market,
    backing: &mut Backing,
    backing_bump: u8,
    backer: Pubkey,
    side: Side,
    amount: u64,
) -> Result<MarketBacked> {
    let now = Clock::get()?.unix_timestamp;
    require!(!program_state.paused, BinaryError::Paused);
    require!(
        market.oracle_status == ORACLE_STATUS_OPEN && !market.finalized,
        BinaryError::MarketNotOpen
    );
    require!(market.approved, BinaryError::MarketNotApproved);
    require!(now < market.deadline, BinaryError::DeadlinePassed);
    require!(amount >= market.min_backing, BinaryError::BelowMinimum);

    if backing.amount == 0 {
        // First backing on this side: the account was just created by `init_if_needed`.
        backing.market_id = market.market_id;
        backing.backer = backer;
        backing.side = side;
        backing.first_backed_at = now;
        backing.bump = backing_bump;
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
        &mut accounts.backing,
        ctx.bumps.backing,
        accounts.backer.key(),
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
