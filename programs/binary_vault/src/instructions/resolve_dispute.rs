use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::{DisputeOpened, DisputeSettled};
use crate::state::{ruling_from, Dispute, DisputeAction, DisputeStatus, Market, ProgramState};

/// Opens a dispute (anyone but the admin and the market's oracles, during the hold, posting the
/// bond copied into the market at creation: status 3) or settles it (admin): uphold keeps the
/// outcome and its hold and forfeits the bond to the treasury (it waits in the dispute account
/// for `forward_dispute_bond`, so no treasury can stop a ruling), at any time; overturn flips the
/// outcome, restarts the hold and returns the bond; refund sends the market to status 4 and
/// returns the bond. Those two change what backers hold, so they wait
/// `MIN_DISPUTE_RULING_DELAY_SECS` after the dispute opened: the admin cannot open and decide a
/// dispute in one transaction, nor through a key it controls in the next slot. A dispute the
/// admin leaves unruled until `max_resolution_delay_secs` after the hold's end may be lapsed by
/// anyone (`lapse_dispute`): it counts as upheld, so silence neither refunds the market nor
/// returns the bond. Disputes are bounded: an outcome that stood cannot be disputed again, and a market
/// sees at most `MAX_DISPUTES_PER_MARKET`.
#[event_cpi]
#[derive(Accounts)]
pub struct ResolveDispute<'info> {
    /// The disputer when opening (pays the bond), the admin when settling.
    #[account(mut)]
    pub authority: Signer<'info>,
    #[account(seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ProgramState>,
    #[account(mut, seeds = [MARKET_SEED, market.market_id.as_ref()], bump = market.bump)]
    pub market: Account<'info, Market>,
    /// CHECK: the market's dispute record: created by the first dispute (see
    /// vault_common::account), loaded and checked as a `Dispute` afterwards. Holds the bond.
    #[account(mut, seeds = [DISPUTE_SEED, market.market_id.as_ref()], bump)]
    pub dispute: UncheckedAccount<'info>,
    /// CHECK: receives the bond back; must be the recorded disputer (checked in the handler).
    #[account(mut)]
    pub disputer: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

pub fn handler(ctx: Context<ResolveDispute>, action: DisputeAction) -> Result<()> {
    match action {
        DisputeAction::Open => open(ctx),
        DisputeAction::Uphold => settle(ctx, Ruling::Uphold),
        DisputeAction::Overturn => settle(ctx, Ruling::Overturn),
        DisputeAction::Refund => settle(ctx, Ruling::Refund),
        DisputeAction::Lapse => err!(BinaryError::LapseIsItsOwnInstruction),
    }
}

/// The admin's three possible decisions on an open dispute, and the lapse of an unruled one.
#[derive(Clone, Copy)]
pub(crate) enum Ruling {
    Uphold,
    Overturn,
    Refund,
    Lapse,
}

impl Ruling {
    fn action(self) -> DisputeAction {
        match self {
            Ruling::Uphold => DisputeAction::Uphold,
            Ruling::Overturn => DisputeAction::Overturn,
            Ruling::Refund => DisputeAction::Refund,
            Ruling::Lapse => DisputeAction::Lapse,
        }
    }
}

fn open(mut ctx: Context<ResolveDispute>) -> Result<()> {
    let event = open_dispute(&mut ctx)?;
    emit_cpi!(event);
    Ok(())
}

fn open_dispute(ctx: &mut Context<ResolveDispute>) -> Result<DisputeOpened> {
    let now = Clock::get()?.unix_timestamp;
    let accounts = &mut ctx.accounts;
    let market = &mut accounts.market;
    require_keys_eq!(
        accounts.disputer.key(),
        accounts.authority.key(),
        BinaryError::WrongDisputer
    );
    // Those who decide the outcome do not also dispute it: the admin would rule on its own
    // dispute, and an oracle already had its vote.
    let disputer = accounts.authority.key();
    require!(
        disputer != accounts.program_state.admin && !market.oracle_set.contains(&disputer),
        BinaryError::DisputerNotAllowed
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
    let previous = vault_common::load_existing::<Dispute>(&accounts.dispute)?;
    if let Some(previous) = &previous {
        require!(
            !previous.status.outcome_stood() && previous.dispute_count < MAX_DISPUTES_PER_MARKET,
            BinaryError::DisputeLimitReached
        );
    }
    let hold_ends_at = market
        .hold_ends_at()
        .ok_or(ProgramError::ArithmeticOverflow)?;
    require!(now < hold_ends_at, BinaryError::DisputeWindowClosed);

    let authority = accounts.authority.to_account_info();
    let bump = ctx.bumps.dispute;
    let dispute = Dispute {
        version: crate::state::DisputeVersion::CURRENT,
        market_id: market.market_id,
        disputer: authority.key(),
        status: DisputeStatus::Open,
        bond_lamports: market.dispute_bond_lamports,
        opened_at: now,
        settled_at: 0,
        dispute_count: previous.map_or(0, |d| d.dispute_count).safe_add(1)?,
        bump,
        bond_forwarded: false,
    };
    if dispute.dispute_count == 1 {
        vault_common::init_account(
            &authority,
            &accounts.dispute,
            &[DISPUTE_SEED, market.market_id.as_ref(), &[bump]],
            &dispute,
        )?;
    } else {
        vault_common::write_account(&accounts.dispute, &dispute)?;
    }
    // The bond waits in the dispute account itself, above its rent.
    vault_common::transfer_sol(
        authority,
        accounts.dispute.to_account_info(),
        dispute.bond_lamports,
        &[],
    )?;
    market.oracle_status = ORACLE_STATUS_DISPUTED;

    Ok(DisputeOpened {
        market_id: market.market_id,
        disputer: dispute.disputer,
        bond_lamports: dispute.bond_lamports,
    })
}

fn settle(mut ctx: Context<ResolveDispute>, ruling: Ruling) -> Result<()> {
    let event = settle_dispute(&mut ctx, ruling)?;
    emit_cpi!(event);
    Ok(())
}

fn settle_dispute(ctx: &mut Context<ResolveDispute>, ruling: Ruling) -> Result<DisputeSettled> {
    let now = Clock::get()?.unix_timestamp;
    let accounts = &mut ctx.accounts;
    require_keys_eq!(
        accounts.authority.key(),
        accounts.program_state.admin,
        BinaryError::NotAdmin
    );
    let mut dispute = vault_common::load_existing::<Dispute>(&accounts.dispute)?
        .ok_or(BinaryError::NoOpenDispute)?;
    require_keys_eq!(
        accounts.disputer.key(),
        dispute.disputer,
        BinaryError::WrongDisputer
    );
    let (settled, bond_to) = apply_ruling(&mut accounts.market, &mut dispute, ruling, now)?;
    // The dispute account is this program's, so the bond moves without a CPI; its rent stays
    // so the record remains for indexers and a later dispute. A forfeit bond stays too.
    if let BondTo::Disputer = bond_to {
        accounts.dispute.sub_lamports(dispute.bond_lamports)?;
        accounts.disputer.add_lamports(dispute.bond_lamports)?;
    }
    vault_common::write_account(&accounts.dispute, &dispute)?;
    Ok(settled)
}

/// Where a settled dispute's bond goes.
pub(crate) enum BondTo {
    /// Forfeit: it stays in the dispute account until `forward_dispute_bond`.
    Treasury,
    Disputer,
}

/// The effect of `ruling` on an open dispute and its market; the caller moves the bond.
pub(crate) fn apply_ruling(
    market: &mut Market,
    dispute: &mut Dispute,
    ruling: Ruling,
    now: i64,
) -> Result<(DisputeSettled, BondTo)> {
    require!(
        market.oracle_status == ORACLE_STATUS_DISPUTED && dispute.status == DisputeStatus::Open,
        BinaryError::NoOpenDispute
    );
    if matches!(ruling, Ruling::Overturn | Ruling::Refund) {
        let from = ruling_from(dispute.opened_at).ok_or(ProgramError::ArithmeticOverflow)?;
        require!(now >= from, BinaryError::RulingTooEarly);
    }
    let bond_to = match ruling {
        // The outcome stands and cannot be disputed again, so its hold runs on from the
        // proposal rather than restarting.
        Ruling::Uphold | Ruling::Lapse => {
            market.oracle_status = ORACLE_STATUS_OPEN;
            dispute.status = match ruling {
                Ruling::Lapse => DisputeStatus::Lapsed,
                _ => DisputeStatus::Upheld,
            };
            BondTo::Treasury
        }
        Ruling::Overturn => {
            market.outcome = market.outcome.map(|side| side.opposite());
            market.oracle_status = ORACLE_STATUS_OPEN;
            market.resolution_proposed_at = now;
            dispute.status = DisputeStatus::Overturned;
            BondTo::Disputer
        }
        Ruling::Refund => {
            market.oracle_status = ORACLE_STATUS_REFUND;
            market.finalized = true;
            market.finalized_at = now;
            dispute.status = DisputeStatus::Refunded;
            BondTo::Disputer
        }
    };
    dispute.settled_at = now;
    let hold_ends_at = if market.oracle_status == ORACLE_STATUS_REFUND {
        0
    } else {
        market
            .hold_ends_at()
            .ok_or(ProgramError::ArithmeticOverflow)?
    };
    let settled = DisputeSettled {
        market_id: market.market_id,
        action: ruling.action(),
        outcome: market.outcome,
        oracle_status: market.oracle_status,
        hold_ends_at,
    };
    Ok((settled, bond_to))
}
