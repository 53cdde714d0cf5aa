use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::{DisputeOpened, DisputeSettled};
use crate::state::{Config, Dispute, DisputeAction, DisputeStatus, Market, ProgramState};

/// Opens a dispute (anyone, during the hold, posting the bond: status 3) or settles it (admin):
/// uphold keeps the outcome, restarts the hold and sends the bond to the treasury; overturn
/// flips the outcome, restarts the hold and returns the bond; refund sends the market to
/// status 4 and returns the bond.
#[event_cpi]
#[derive(Accounts)]
pub struct ResolveDispute<'info> {
    /// The disputer when opening (pays the bond), the admin when settling.
    #[account(mut)]
    pub authority: Signer<'info>,
    #[account(seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ProgramState>,
    #[account(seeds = [CONFIG_SEED], bump = config.bump)]
    pub config: Account<'info, Config>,
    #[account(mut, seeds = [MARKET_SEED, market.market_id.as_ref()], bump = market.bump)]
    pub market: Account<'info, Market>,
    #[account(
        init_if_needed,
        payer = authority,
        space = 8 + Dispute::INIT_SPACE,
        seeds = [DISPUTE_SEED, market.market_id.as_ref()],
        bump,
    )]
    pub dispute: Account<'info, Dispute>,
    /// CHECK: receives the bond back; must be the recorded disputer (checked in the handler).
    #[account(mut)]
    pub disputer: UncheckedAccount<'info>,
    /// CHECK: receives an upheld dispute's bond; must be the configured treasury.
    #[account(mut, address = config.treasury @ BinaryError::WrongTreasury)]
    pub treasury: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

pub fn handler(ctx: Context<ResolveDispute>, action: DisputeAction) -> Result<()> {
    match action {
        DisputeAction::Open => open(ctx),
        DisputeAction::Uphold => settle(ctx, Ruling::Uphold),
        DisputeAction::Overturn => settle(ctx, Ruling::Overturn),
        DisputeAction::Refund => settle(ctx, Ruling::Refund),
    }
}

/// The admin's three possible decisions on an open dispute.
#[derive(Clone, Copy)]
enum Ruling {
    Uphold,
    Overturn,
    Refund,
}

impl Ruling {
    fn action(self) -> DisputeAction {
        match self {
            Ruling::Uphold => DisputeAction::Uphold,
            Ruling::Overturn => DisputeAction::Overturn,
            Ruling::Refund => DisputeAction::Refund,
        }
    }
}

fn open(mut ctx: Context<ResolveDispute>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let accounts = &mut ctx.accounts;
    let market = &mut accounts.market;
    require_keys_eq!(
        accounts.disputer.key(),
        accounts.authority.key(),
        BinaryError::WrongDisputer
    );
    require!(!market.finalized, BinaryError::AlreadyFinalized);
    require!(
        market.oracle_status != ORACLE_STATUS_DISPUTED,
        BinaryError::DisputeOpen
    );
    require!(
        market.oracle_status == ORACLE_STATUS_OPEN,
        BinaryError::MarketNotOpen
    );
    require!(market.outcome.is_some(), BinaryError::NoOutcomeProposed);
    let hold_ends_at = market
        .hold_ends_at()
        .ok_or(ProgramError::ArithmeticOverflow)?;
    require!(now < hold_ends_at, BinaryError::DisputeWindowClosed);

    let bond = accounts.config.dispute_bond_lamports;
    vault_common::transfer_sol(
        accounts.authority.to_account_info(),
        accounts.dispute.to_account_info(),
        bond,
        &[],
    )?;
    let dispute = &mut accounts.dispute;
    dispute.market_id = market.market_id;
    dispute.disputer = accounts.authority.key();
    dispute.status = DisputeStatus::Open;
    dispute.bond_lamports = bond;
    dispute.opened_at = now;
    dispute.settled_at = 0;
    dispute.dispute_count = dispute.dispute_count.safe_add(1)?;
    dispute.bump = ctx.bumps.dispute;
    market.oracle_status = ORACLE_STATUS_DISPUTED;

    emit_cpi!(DisputeOpened {
        market_id: ctx.accounts.market.market_id,
        disputer: ctx.accounts.authority.key(),
        bond_lamports: bond,
    });
    Ok(())
}

fn settle(mut ctx: Context<ResolveDispute>, ruling: Ruling) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let accounts = &mut ctx.accounts;
    require_keys_eq!(
        accounts.authority.key(),
        accounts.program_state.admin,
        BinaryError::NotAdmin
    );
    require!(
        accounts.market.oracle_status == ORACLE_STATUS_DISPUTED
            && accounts.dispute.status == DisputeStatus::Open,
        BinaryError::NoOpenDispute
    );
    require_keys_eq!(
        accounts.disputer.key(),
        accounts.dispute.disputer,
        BinaryError::WrongDisputer
    );

    let market = &mut accounts.market;
    let dispute = &mut accounts.dispute;
    let bond_to = match ruling {
        Ruling::Uphold => {
            market.oracle_status = ORACLE_STATUS_OPEN;
            market.resolution_proposed_at = now;
            dispute.status = DisputeStatus::Upheld;
            accounts.treasury.to_account_info()
        }
        Ruling::Overturn => {
            market.outcome = market.outcome.map(|side| side.opposite());
            market.oracle_status = ORACLE_STATUS_OPEN;
            market.resolution_proposed_at = now;
            dispute.status = DisputeStatus::Overturned;
            accounts.disputer.to_account_info()
        }
        Ruling::Refund => {
            market.oracle_status = ORACLE_STATUS_REFUND;
            market.finalized = true;
            market.finalized_at = now;
            dispute.status = DisputeStatus::Refunded;
            accounts.disputer.to_account_info()
        }
    };
    // The dispute account is this program's, so the bond moves without a CPI; its rent stays
    // so the record remains for indexers and a later dispute.
    dispute.sub_lamports(dispute.bond_lamports)?;
    bond_to.add_lamports(dispute.bond_lamports)?;
    dispute.settled_at = now;

    let hold_ends_at = if market.oracle_status == ORACLE_STATUS_REFUND {
        0
    } else {
        market
            .hold_ends_at()
            .ok_or(ProgramError::ArithmeticOverflow)?
    };
    emit_cpi!(DisputeSettled {
        market_id: ctx.accounts.market.market_id,
        action: ruling.action(),
        outcome: ctx.accounts.market.outcome,
        oracle_status: ctx.accounts.market.oracle_status,
        hold_ends_at,
    });
    Ok(())
}
