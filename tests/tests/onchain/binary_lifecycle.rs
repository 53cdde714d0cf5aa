//! binary_vault happy paths: every instruction, with the exact lamports that move and the
//! account fields it writes.

use anchor_lang::Space;
use binary_vault::constants::*;
use binary_vault::error::BinaryError;
use binary_vault::instructions::{ConfigUpdate, CreateMarketArgs};
use binary_vault::state::{
    Backing, Dispute, DisputeAction, DisputeStatus, Market, MarketSource, MarketVariant, OracleSet,
    OracleVote, Side,
};
use crucible_pool::SOL_MINT;
use integration_tests::*;
use narrative_sdk::decode::{BinaryEvent, CrucibleEvent, ProgramEvent};
use narrative_sdk::{binary, crucible, pda};
use solana_keypair::Keypair;
use solana_signer::Signer;

const HOLD: i64 = DEFAULT_RESOLUTION_TIMELOCK_SECS;

fn binary_events(events: &[ProgramEvent]) -> Vec<BinaryEvent> {
    events
        .iter()
        .filter_map(|e| match e {
            ProgramEvent::Binary(b) => Some(b.clone()),
            _ => None,
        })
        .collect()
}

async fn reserve(h: &mut Harness) -> u64 {
    h.rent_for(0).await
}

#[tokio::test]
async fn initialize_sets_defaults_roles_and_crucible_source() {
    let mut h = Harness::start().await;
    let state = h.program_state().await;
    assert_eq!(state.admin, h.admin.pubkey());
    assert!(!state.paused);
    assert_eq!(state.market_count, 0);
    let (_, cpi_bump) = anchor_lang::prelude::Pubkey::find_program_address(
        &[CPI_AUTHORITY_SEED],
        &binary_vault::ID,
    );
    assert_eq!(state.cpi_authority_bump, cpi_bump);

    let config = h.config().await;
    assert_eq!(config.capital_loss_bps, 3_500);
    assert_eq!(config.crucible_share_bps, 5_000);
    assert_eq!(config.resolution_timelock_secs, 172_800);
    assert_eq!(config.max_resolution_delay_secs, MAX_RESOLUTION_DELAY);
    assert_eq!(config.dispute_bond_lamports, DISPUTE_BOND);
    assert_eq!(config.treasury, h.treasury);
    assert_eq!((config.oracle_count, config.oracle_threshold), (3, 2));
    let oracles: Vec<_> = h.oracles.iter().map(|o| o.pubkey()).collect();
    assert_eq!(config.listed_oracles(), oracles.as_slice());

    let crucible: crucible_pool::state::CrucibleState = h.account(pda::crucible::state()).await;
    assert!(crucible.is_authorized(&pda::binary::cpi_authority()));
    assert_eq!(crucible.keeper, h.keeper.pubkey());
    let epoch = h.epoch(&SOL_MINT, 0).await;
    assert_eq!(epoch.started_at, START_TIME);
    assert_eq!(epoch.deposited, 0);
}

#[tokio::test]
async fn admin_changes_config_and_oracles_after_the_timelock_and_pauses_with_events() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let new_treasury = Keypair::new().pubkey();
    let new_oracles = vec![Keypair::new().pubkey(), Keypair::new().pubkey()];
    let update = ConfigUpdate {
        capital_loss_bps: Some(4_000),
        crucible_share_bps: Some(2_500),
        resolution_timelock_secs: Some(3 * DAY),
        max_resolution_delay_secs: Some(3 * DAY),
        dispute_bond_lamports: Some(2 * SOL),
        treasury: Some(new_treasury),
        oracle_set: Some(OracleSet::new(&new_oracles, 1).unwrap()),
    };
    let events = h
        .process_with_events(
            &[binary::propose_config_change(admin.pubkey(), update)],
            &[&admin],
        )
        .await
        .unwrap();
    let proposed_at = h.now().await;
    match binary_events(&events).as_slice() {
        [BinaryEvent::ConfigChangeProposed(e)] => {
            assert_eq!(
                (e.update, e.applies_at),
                (update, proposed_at + ADMIN_ACTION_TIMELOCK_SECS)
            );
        }
        other => panic!("unexpected events {other:?}"),
    }
    // Nothing changes until it is applied.
    assert_eq!(h.config().await.capital_loss_bps, 3_500);
    h.warp_by(ADMIN_ACTION_TIMELOCK_SECS).await;
    let events = h
        .process_with_events(&[binary::apply_config_change(admin.pubkey())], &[&admin])
        .await
        .unwrap();
    let config = h.config().await;
    assert_eq!(
        (config.capital_loss_bps, config.crucible_share_bps),
        (4_000, 2_500)
    );
    assert_eq!(config.resolution_timelock_secs, 3 * DAY);
    assert_eq!(config.max_resolution_delay_secs, 3 * DAY);
    assert_eq!(config.dispute_bond_lamports, 2 * SOL);
    assert_eq!(config.treasury, new_treasury);
    assert_eq!(config.listed_oracles(), new_oracles.as_slice());
    assert_eq!(config.oracle_threshold, 1);
    assert_eq!(config.oracles[2], Default::default());
    assert_eq!(config.pending_change, None);
    match binary_events(&events).as_slice() {
        [BinaryEvent::ConfigUpdated(c), BinaryEvent::OraclesUpdated(o)] => {
            assert_eq!((c.capital_loss_bps, c.treasury), (4_000, new_treasury));
            assert_eq!((o.oracles.clone(), o.threshold), (new_oracles, 1));
        }
        other => panic!("unexpected events {other:?}"),
    }

    let events = h
        .process_with_events(&[binary::set_paused(admin.pubkey(), true)], &[&admin])
        .await
        .unwrap();
    assert!(h.program_state().await.paused);
    assert!(
        matches!(binary_events(&events).as_slice(), [BinaryEvent::PauseChanged(e)] if e.paused)
    );
    h.process(&[binary::set_paused(admin.pubkey(), false)], &[&admin])
        .await
        .unwrap();
    assert!(!h.program_state().await.paused);
}

#[tokio::test]
async fn config_changes_do_not_alter_existing_markets() {
    let mut h = Harness::start().await;
    let creator = h.wallets[0].insecure_clone();
    let id = h
        .create_sol_market(&creator, MarketVariant::Yield, 7 * DAY)
        .await;
    h.change_config(ConfigUpdate {
        capital_loss_bps: Some(MAX_CAPITAL_LOSS_BPS),
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(h.market(&id).await.capital_loss_bps, 3_500);
    let later = h
        .create_sol_market(&creator, MarketVariant::Yield, DAY)
        .await;
    assert_eq!(
        h.market(&later).await.capital_loss_bps,
        MAX_CAPITAL_LOSS_BPS
    );
}

#[tokio::test]
async fn yield_market_opens_at_once_and_its_creator_funds_the_vault_reserves() {
    let mut h = Harness::start().await;
    let creator = h.wallets[0].insecure_clone();
    let before = h.lamports(creator.pubkey()).await;
    let market_id = h.next_market_id();
    let deadline = START_TIME + 10 * DAY;
    let ix = binary::create_market(
        creator.pubkey(),
        None,
        CreateMarketArgs {
            market_id,
            variant: MarketVariant::Yield,
            source: MarketSource::Seed,
            deadline,
        },
    );
    let events = h.process_with_events(&[ix], &[&creator]).await.unwrap();

    let market_rent = h.rent_for(8 + Market::INIT_SPACE).await;
    let reserve = reserve(&mut h).await;
    assert_eq!(
        before - h.lamports(creator.pubkey()).await,
        market_rent + 2 * reserve
    );
    for side in [Side::Yes, Side::No] {
        assert_eq!(
            h.lamports(pda::binary::sol_vault(&market_id, side)).await,
            reserve
        );
    }
    let m = h.market(&market_id).await;
    assert_eq!(m.market_id, market_id);
    assert_eq!(m.creator, creator.pubkey());
    assert_eq!(
        (m.variant, m.source),
        (MarketVariant::Yield, MarketSource::Seed)
    );
    assert!(m.approved && m.is_sol() && !m.finalized);
    assert_eq!(m.oracle_status, ORACLE_STATUS_OPEN);
    assert_eq!((m.created_at, m.deadline), (START_TIME, deadline));
    assert_eq!(m.min_backing, MIN_BACKING_LAMPORTS);
    assert_eq!(
        (
            m.capital_loss_bps,
            m.crucible_share_bps,
            m.resolution_timelock_secs
        ),
        (3_500, 5_000, HOLD)
    );
    assert_eq!(
        (m.yes_total, m.no_total, m.total_yield, m.outcome),
        (0, 0, 0, None)
    );
    assert_eq!(h.program_state().await.market_count, 1);
    match binary_events(&events).as_slice() {
        [BinaryEvent::MarketCreated(e)] => {
            assert_eq!(e.market, pda::binary::market(&market_id));
            assert_eq!(
                (e.deadline, e.approved, e.variant),
                (deadline, true, MarketVariant::Yield)
            );
        }
        other => panic!("unexpected events {other:?}"),
    }
}

#[tokio::test]
async fn classic_market_opens_only_after_admin_review() {
    let mut h = Harness::start().await;
    let creator = h.wallets[0].insecure_clone();
    let backer = h.wallets[1].insecure_clone();
    let admin = h.admin.insecure_clone();

    // Without the admin's co-signature it waits for review.
    let market_id = h.next_market_id();
    let args = CreateMarketArgs {
        market_id,
        variant: MarketVariant::Classic,
        source: MarketSource::Seed,
        deadline: START_TIME + DAY,
    };
    h.process(
        &[binary::create_market(creator.pubkey(), None, args)],
        &[&creator],
    )
    .await
    .unwrap();
    assert!(!h.market(&market_id).await.approved);
    assert_custom_error(
        h.back(&backer, &market_id, Side::Yes, SOL).await,
        BinaryError::MarketNotApproved,
    );
    // The review is the admin's: its creator cannot approve it, nor can a backer.
    for outsider in [&creator, &backer] {
        assert_custom_error(
            h.process(
                &[binary::approve_market(outsider.pubkey(), &market_id)],
                &[outsider],
            )
            .await,
            BinaryError::NotAdmin,
        );
    }
    assert!(!h.market(&market_id).await.approved);

    let events = h
        .process_with_events(
            &[binary::approve_market(admin.pubkey(), &market_id)],
            &[&admin],
        )
        .await
        .unwrap();
    assert!(
        matches!(binary_events(&events).as_slice(), [BinaryEvent::MarketApproved(e)] if e.market_id == market_id)
    );
    assert!(h.market(&market_id).await.approved);
    h.back(&backer, &market_id, Side::Yes, SOL).await.unwrap();
    assert_eq!(h.market(&market_id).await.yes_total, SOL);

    // With the admin co-signing, it is approved at creation.
    let co_signed = h
        .create_sol_market(&creator, MarketVariant::Classic, DAY)
        .await;
    assert!(h.market(&co_signed).await.approved);
}

#[tokio::test]
async fn backings_accumulate_per_side_and_move_exact_lamports() {
    let mut h = Harness::start().await;
    let creator = h.wallets[0].insecure_clone();
    let w = h.wallets[1].insecure_clone();
    let id = h
        .create_sol_market(&creator, MarketVariant::Yield, DAY)
        .await;
    let backing_rent = h.rent_for(8 + Backing::INIT_SPACE).await;

    let before = h.lamports(w.pubkey()).await;
    let events = h
        .process_with_events(
            &[binary::back_market(w.pubkey(), &id, Side::Yes, SOL / 2)],
            &[&w],
        )
        .await
        .unwrap();
    assert_eq!(
        before - h.lamports(w.pubkey()).await,
        SOL / 2 + backing_rent
    );
    assert_eq!(h.vault_balance(&id, Side::Yes).await, SOL / 2);
    match binary_events(&events).as_slice() {
        [BinaryEvent::MarketBacked(e)] => {
            assert_eq!(
                (e.backer, e.side, e.amount, e.backing_amount),
                (w.pubkey(), Side::Yes, SOL / 2, SOL / 2)
            );
            assert_eq!(
                (e.yes_total, e.no_total, e.timestamp),
                (SOL / 2, 0, START_TIME)
            );
        }
        other => panic!("unexpected events {other:?}"),
    }

    let before = h.lamports(w.pubkey()).await;
    h.back(&w, &id, Side::Yes, SOL / 4).await.unwrap();
    assert_eq!(
        before - h.lamports(w.pubkey()).await,
        SOL / 4,
        "no second rent"
    );
    h.back(&w, &id, Side::No, MIN_BACKING_LAMPORTS)
        .await
        .unwrap();

    let yes = h.backing(&id, &w.pubkey(), Side::Yes).await;
    assert_eq!(
        (yes.amount, yes.side, yes.backer, yes.claimed),
        (3 * SOL / 4, Side::Yes, w.pubkey(), false)
    );
    assert_eq!((yes.market_id, yes.first_backed_at), (id, START_TIME));
    let no = h.backing(&id, &w.pubkey(), Side::No).await;
    assert_eq!(no.amount, MIN_BACKING_LAMPORTS);
    let m = h.market(&id).await;
    assert_eq!(
        (m.yes_total, m.no_total),
        (3 * SOL / 4, MIN_BACKING_LAMPORTS)
    );
    assert_eq!((m.yes_backers, m.no_backers), (1, 1));
    assert_eq!(h.vault_balance(&id, Side::No).await, MIN_BACKING_LAMPORTS);
}

#[tokio::test]
async fn oracle_votes_propose_the_first_side_to_reach_the_threshold() {
    let mut h = Harness::start().await;
    let creator = h.wallets[0].insecure_clone();
    let id = h
        .create_sol_market(&creator, MarketVariant::Yield, DAY)
        .await;
    h.back(&creator, &id, Side::Yes, SOL).await.unwrap();
    let deadline = START_TIME + DAY;
    h.warp_to(deadline).await;

    h.vote(0, &id, Side::Yes, 7_000).await.unwrap();
    let vote: OracleVote = h
        .account(pda::binary::oracle_vote(&id, &h.oracles[0].pubkey()))
        .await;
    assert_eq!(
        (
            vote.oracle,
            vote.vote,
            vote.confidence_bps,
            vote.submitted_at
        ),
        (h.oracles[0].pubkey(), Side::Yes, 7_000, deadline)
    );
    h.vote(1, &id, Side::No, 10_000).await.unwrap();
    let m = h.market(&id).await;
    assert_eq!((m.yes_votes, m.no_votes, m.outcome), (1, 1, None));

    h.warp_by(60).await;
    let oracle = h.oracles[2].insecure_clone();
    let ix = binary::submit_oracle_resolution(oracle.pubkey(), &id, Side::Yes, 9_500);
    let events = h.process_with_events(&[ix], &[&oracle]).await.unwrap();
    let m = h.market(&id).await;
    assert_eq!(
        (m.yes_votes, m.outcome, m.resolution_proposed_at),
        (2, Some(Side::Yes), deadline + 60)
    );
    assert_eq!(m.oracle_status, ORACLE_STATUS_OPEN);
    match binary_events(&events).as_slice() {
        [BinaryEvent::OracleVoteSubmitted(v), BinaryEvent::ResolutionProposed(p)] => {
            assert_eq!((v.yes_votes, v.no_votes, v.confidence_bps), (2, 1, 9_500));
            assert_eq!(
                (p.outcome, p.hold_ends_at),
                (Side::Yes, deadline + 60 + HOLD)
            );
        }
        other => panic!("unexpected events {other:?}"),
    }
}

/// YES: a 3 SOL, b 1 SOL; NO: c 2 SOL; YES wins. Forfeit 35 % of 2 SOL = 0.7 SOL, half to
/// crucible_pool; winners share 0.35 SOL pro rata; c keeps 1.3 SOL.
#[tokio::test]
async fn yield_market_settles_with_the_spec_split_and_forwards_the_crucible_share() {
    let mut h = Harness::start().await;
    let [a, b, c, creator] = [0, 1, 2, 3].map(|i| h.wallets[i].insecure_clone());
    let id = h
        .create_sol_market(&creator, MarketVariant::Yield, DAY)
        .await;
    h.back(&a, &id, Side::Yes, 3 * SOL).await.unwrap();
    h.back(&b, &id, Side::Yes, SOL).await.unwrap();
    h.back(&c, &id, Side::No, 2 * SOL).await.unwrap();
    h.resolve(&id, Side::Yes).await;
    assert_custom_error(h.finalize(&id).await, BinaryError::HoldNotElapsed);
    h.warp_by(HOLD).await;

    let crucible_vault_before = h.lamports(pda::crucible::sol_vault()).await;
    let events = h
        .process_with_events(&[binary::finalize_resolution(&id)], &[])
        .await
        .unwrap();
    let m = h.market(&id).await;
    assert_eq!(
        (m.oracle_status, m.finalized, m.outcome),
        (ORACLE_STATUS_RESOLVED, true, Some(Side::Yes))
    );
    assert_eq!(
        (m.crucible_amount, m.winner_bonus_pool, m.loser_refund_pool),
        (350_000_000, 350_000_000, 1_300_000_000)
    );
    assert!(binary_events(&events).iter().any(|e| matches!(e,
        BinaryEvent::MarketFinalized(f) if f.crucible_amount == 350_000_000 && f.oracle_status == ORACLE_STATUS_RESOLVED)));
    // Finalisation moves no money: the crucible share waits in the losing vault.
    assert!(!m.crucible_forwarded);
    assert_eq!(h.vault_balance(&id, Side::No).await, 2 * SOL);

    let target = h.crucible_target(SOL_MINT).await;
    let events = h
        .process_with_events(&[binary::forward_crucible_share(&id, &target)], &[])
        .await
        .unwrap();
    assert!(h.market(&id).await.crucible_forwarded);
    assert!(binary_events(&events).iter().any(|e| matches!(e,
        BinaryEvent::CrucibleShareForwarded(f) if f.amount == 350_000_000 && f.market_id == id)));
    assert_custom_error(
        h.process(&[binary::forward_crucible_share(&id, &target)], &[])
            .await,
        BinaryError::NothingToForward,
    );
    assert_eq!(
        h.lamports(pda::crucible::sol_vault()).await - crucible_vault_before,
        350_000_000
    );
    assert_eq!(h.epoch(&SOL_MINT, 0).await.deposited, 350_000_000);
    assert_eq!(h.asset_pool(&SOL_MINT).await.total_deposited, 350_000_000);
    assert_eq!(h.vault_balance(&id, Side::No).await, 1_650_000_000);
    let deposit = events.iter().find_map(|e| match e {
        ProgramEvent::Crucible(CrucibleEvent::Deposited(d)) => Some(d.clone()),
        _ => None,
    });
    let deposit = deposit.expect("crucible emitted its deposit event inside the CPI");
    assert_eq!(
        (deposit.amount, deposit.source, deposit.epoch),
        (350_000_000, pda::binary::cpi_authority(), 0)
    );

    for (wallet, side, expected) in [
        (&a, Side::Yes, 3 * SOL + 262_500_000),
        (&b, Side::Yes, SOL + 87_500_000),
        (&c, Side::No, 1_300_000_000),
    ] {
        let before = h.lamports(wallet.pubkey()).await;
        h.claim(wallet, &id, side).await.unwrap();
        assert_eq!(h.lamports(wallet.pubkey()).await - before, expected);
        let backing = h.backing(&id, &wallet.pubkey(), side).await;
        assert!(backing.claimed);
        assert_eq!(backing.payout, expected);
    }
    let m = h.market(&id).await;
    assert_eq!((m.total_paid_out, m.claims_count), (5_650_000_000, 3));
    assert_eq!(h.vault_balance(&id, Side::Yes).await, 0);
    assert_eq!(h.vault_balance(&id, Side::No).await, 0);
}

#[tokio::test]
async fn classic_market_gives_the_whole_losing_side_to_winners_and_nothing_to_crucible() {
    let mut h = Harness::start().await;
    let [a, b, c, creator] = [0, 1, 2, 3].map(|i| h.wallets[i].insecure_clone());
    let id = h
        .create_sol_market(&creator, MarketVariant::Classic, DAY)
        .await;
    h.back(&a, &id, Side::Yes, SOL).await.unwrap();
    h.back(&b, &id, Side::No, 3 * SOL / 2).await.unwrap();
    h.back(&c, &id, Side::No, 3 * SOL / 2).await.unwrap();
    let crucible_before = h.lamports(pda::crucible::sol_vault()).await;
    h.resolve_and_finalize(&id, Side::No).await;
    assert_eq!(
        h.lamports(pda::crucible::sol_vault()).await,
        crucible_before
    );
    let m = h.market(&id).await;
    assert_eq!(
        (m.winner_bonus_pool, m.loser_refund_pool, m.crucible_amount),
        (SOL, 0, 0)
    );

    for wallet in [&b, &c] {
        let before = h.lamports(wallet.pubkey()).await;
        h.claim(wallet, &id, Side::No).await.unwrap();
        assert_eq!(h.lamports(wallet.pubkey()).await - before, 2 * SOL);
    }
    assert_custom_error(
        h.claim(&a, &id, Side::Yes).await,
        BinaryError::ClassicLoserCannotClaim,
    );
    assert_eq!(h.vault_balance(&id, Side::Yes).await, 0);
}

#[tokio::test]
async fn a_market_whose_winning_side_is_empty_refunds_everyone() {
    let mut h = Harness::start().await;
    let [a, b, creator] = [0, 1, 2].map(|i| h.wallets[i].insecure_clone());
    let id = h
        .create_sol_market(&creator, MarketVariant::Yield, DAY)
        .await;
    h.back(&a, &id, Side::No, SOL).await.unwrap();
    h.back(&b, &id, Side::No, 2 * SOL).await.unwrap();
    h.resolve_and_finalize(&id, Side::Yes).await;
    let m = h.market(&id).await;
    assert_eq!(
        (m.oracle_status, m.finalized, m.crucible_amount),
        (ORACLE_STATUS_REFUND, true, 0)
    );
    for (w, amount) in [(&a, SOL), (&b, 2 * SOL)] {
        let before = h.lamports(w.pubkey()).await;
        h.claim(w, &id, Side::No).await.unwrap();
        assert_eq!(h.lamports(w.pubkey()).await - before, amount);
    }
}

async fn market_on_hold(h: &mut Harness, outcome: Side) -> ([u8; 32], Keypair, Keypair) {
    let yes = h.wallets[0].insecure_clone();
    let no = h.wallets[1].insecure_clone();
    let id = h.create_sol_market(&yes, MarketVariant::Yield, DAY).await;
    h.back(&yes, &id, Side::Yes, 2 * SOL).await.unwrap();
    h.back(&no, &id, Side::No, 2 * SOL).await.unwrap();
    h.resolve(&id, outcome).await;
    (id, yes, no)
}

#[tokio::test]
async fn opened_dispute_holds_the_bond_and_an_upheld_one_pays_it_to_the_treasury() {
    let mut h = Harness::start().await;
    let (id, _, _) = market_on_hold(&mut h, Side::Yes).await;
    let proposed_at = h.market(&id).await.resolution_proposed_at;
    let disputer = h.wallets[2].insecure_clone();
    let dispute_rent = h.rent_for(8 + Dispute::INIT_SPACE).await;

    let before = h.lamports(disputer.pubkey()).await;
    let ix = binary::open_dispute(disputer.pubkey(), &id);
    let events = h.process_with_events(&[ix], &[&disputer]).await.unwrap();
    let opened_at = h.now().await;
    assert_eq!(
        before - h.lamports(disputer.pubkey()).await,
        DISPUTE_BOND + dispute_rent
    );
    assert_eq!(
        h.lamports(pda::binary::dispute(&id)).await,
        dispute_rent + DISPUTE_BOND
    );
    let d = h.dispute(&id).await;
    assert_eq!(
        (
            d.disputer,
            d.status,
            d.bond_lamports,
            d.opened_at,
            d.dispute_count
        ),
        (
            disputer.pubkey(),
            DisputeStatus::Open,
            DISPUTE_BOND,
            opened_at,
            1
        )
    );
    assert_eq!(h.market(&id).await.oracle_status, ORACLE_STATUS_DISPUTED);
    assert!(
        matches!(binary_events(&events).as_slice(), [BinaryEvent::DisputeOpened(e)] if e.bond_lamports == DISPUTE_BOND)
    );

    h.warp_by(HOLD).await;
    assert_custom_error(h.finalize(&id).await, BinaryError::DisputeOpen);

    let treasury_before = h.lamports(h.treasury).await;
    h.settle_dispute(&id, &disputer.pubkey(), DisputeAction::Uphold)
        .await
        .unwrap();
    let ruled_at = h.now().await;
    // The ruling pays nobody: the forfeit bond waits in the dispute account...
    assert_eq!(h.lamports(h.treasury).await, treasury_before);
    assert_eq!(
        h.lamports(pda::binary::dispute(&id)).await,
        dispute_rent + DISPUTE_BOND
    );
    let d = h.dispute(&id).await;
    assert_eq!(
        (d.status, d.settled_at, d.bond_forwarded),
        (DisputeStatus::Upheld, ruled_at, false)
    );
    // ...until anyone forwards it to the treasury, once.
    h.forward_dispute_bond(&id).await.unwrap();
    assert_eq!(h.lamports(h.treasury).await - treasury_before, DISPUTE_BOND);
    assert_eq!(h.lamports(pda::binary::dispute(&id)).await, dispute_rent);
    assert!(h.dispute(&id).await.bond_forwarded);
    h.warp_by(1).await;
    assert_custom_error(
        h.forward_dispute_bond(&id).await,
        BinaryError::NoForfeitBond,
    );
    let m = h.market(&id).await;
    assert_eq!(
        (m.oracle_status, m.outcome, m.resolution_proposed_at),
        (ORACLE_STATUS_OPEN, Some(Side::Yes), proposed_at)
    );

    // The outcome stood: it cannot be disputed again, and its hold (already over) does not
    // restart, so the market finalises at once.
    let other = h.wallets[3].insecure_clone();
    assert_custom_error(
        h.open_dispute(&other, &id).await,
        BinaryError::DisputeLimitReached,
    );
    h.finalize(&id).await.unwrap();
    assert_eq!(h.market(&id).await.oracle_status, ORACLE_STATUS_RESOLVED);
}

#[tokio::test]
async fn a_market_sees_at_most_two_disputes_each_outcome_once() {
    let mut h = Harness::start().await;
    let (id, _, _) = market_on_hold(&mut h, Side::Yes).await;
    let [first, second, third] = [2, 3, 0].map(|i| h.wallets[i].insecure_clone());
    h.open_dispute(&first, &id).await.unwrap();
    h.warp_by(MIN_DISPUTE_RULING_DELAY_SECS).await;
    h.settle_dispute(&id, &first.pubkey(), DisputeAction::Overturn)
        .await
        .unwrap();
    assert_eq!(h.market(&id).await.outcome, Some(Side::No));
    // The overturned outcome is a new proposal with its own hold: it may be disputed once.
    h.open_dispute(&second, &id).await.unwrap();
    assert_eq!(h.dispute(&id).await.dispute_count, 2);
    h.warp_by(MIN_DISPUTE_RULING_DELAY_SECS).await;
    h.settle_dispute(&id, &second.pubkey(), DisputeAction::Overturn)
        .await
        .unwrap();
    assert_eq!(h.market(&id).await.outcome, Some(Side::Yes));
    assert_custom_error(
        h.open_dispute(&third, &id).await,
        BinaryError::DisputeLimitReached,
    );
    h.warp_by(HOLD).await;
    h.finalize(&id).await.unwrap();
    let m = h.market(&id).await;
    assert_eq!(
        (m.oracle_status, m.outcome),
        (ORACLE_STATUS_RESOLVED, Some(Side::Yes))
    );
}

#[tokio::test]
async fn overturned_dispute_flips_the_outcome_and_returns_the_bond() {
    let mut h = Harness::start().await;
    let (id, yes, no) = market_on_hold(&mut h, Side::Yes).await;
    let disputer = h.wallets[2].insecure_clone();
    h.open_dispute(&disputer, &id).await.unwrap();
    h.warp_by(MIN_DISPUTE_RULING_DELAY_SECS).await;
    let before = h.lamports(disputer.pubkey()).await;
    h.settle_dispute(&id, &disputer.pubkey(), DisputeAction::Overturn)
        .await
        .unwrap();
    assert_eq!(h.lamports(disputer.pubkey()).await - before, DISPUTE_BOND);
    assert_eq!(h.dispute(&id).await.status, DisputeStatus::Overturned);
    assert_eq!(h.market(&id).await.outcome, Some(Side::No));
    h.warp_by(HOLD).await;
    h.finalize(&id).await.unwrap();

    // NO now wins 2 SOL + 0.35 SOL; YES keeps 1.3 SOL.
    let before = h.lamports(no.pubkey()).await;
    h.claim(&no, &id, Side::No).await.unwrap();
    assert_eq!(
        h.lamports(no.pubkey()).await - before,
        2 * SOL + 350_000_000
    );
    let before = h.lamports(yes.pubkey()).await;
    h.claim(&yes, &id, Side::Yes).await.unwrap();
    assert_eq!(h.lamports(yes.pubkey()).await - before, 1_300_000_000);
}

#[tokio::test]
async fn refund_ruling_returns_the_bond_and_every_principal() {
    let mut h = Harness::start().await;
    let (id, yes, no) = market_on_hold(&mut h, Side::No).await;
    let disputer = h.wallets[2].insecure_clone();
    h.open_dispute(&disputer, &id).await.unwrap();
    h.warp_by(MIN_DISPUTE_RULING_DELAY_SECS).await;
    let before = h.lamports(disputer.pubkey()).await;
    h.settle_dispute(&id, &disputer.pubkey(), DisputeAction::Refund)
        .await
        .unwrap();
    assert_eq!(h.lamports(disputer.pubkey()).await - before, DISPUTE_BOND);
    let m = h.market(&id).await;
    assert_eq!((m.oracle_status, m.finalized), (ORACLE_STATUS_REFUND, true));
    assert_eq!(h.dispute(&id).await.status, DisputeStatus::Refunded);
    for (w, side) in [(&yes, Side::Yes), (&no, Side::No)] {
        let before = h.lamports(w.pubkey()).await;
        h.claim(w, &id, side).await.unwrap();
        assert_eq!(h.lamports(w.pubkey()).await - before, 2 * SOL);
    }
}

#[tokio::test]
async fn timeout_refund_opens_when_oracles_never_resolve() {
    let mut h = Harness::start().await;
    let w = h.wallets[0].insecure_clone();
    let id = h.create_sol_market(&w, MarketVariant::Yield, DAY).await;
    h.back(&w, &id, Side::Yes, SOL).await.unwrap();
    let refund_from = START_TIME + DAY + MAX_RESOLUTION_DELAY;
    h.warp_to(refund_from - 1).await;
    let ix = binary::trigger_timeout_refund(&id);
    assert_custom_error(
        h.process(std::slice::from_ref(&ix), &[]).await,
        BinaryError::ResolutionDelayNotElapsed,
    );
    h.warp_to(refund_from).await;
    let events = h.process_with_events(&[ix], &[]).await.unwrap();
    let m = h.market(&id).await;
    assert_eq!(
        (m.oracle_status, m.finalized, m.finalized_at),
        (ORACLE_STATUS_REFUND, true, refund_from)
    );
    assert!(
        matches!(binary_events(&events).as_slice(), [BinaryEvent::RefundTriggered(e)] if e.timestamp == refund_from)
    );
    let before = h.lamports(w.pubkey()).await;
    h.claim(&w, &id, Side::Yes).await.unwrap();
    assert_eq!(h.lamports(w.pubkey()).await - before, SOL);
}

#[tokio::test]
async fn a_dispute_left_unruled_lapses_the_outcome_stands_and_the_bond_is_forfeit() {
    let mut h = Harness::start().await;
    let (id, yes, no) = market_on_hold(&mut h, Side::Yes).await;
    let disputer = h.wallets[2].insecure_clone();
    let anyone = h.wallets[3].insecure_clone();
    h.open_dispute(&disputer, &id).await.unwrap();
    // Silence is not a refund: the timeout exit refuses a disputed market.
    assert_custom_error(
        h.process(&[binary::trigger_timeout_refund(&id)], &[]).await,
        BinaryError::DisputeOpen,
    );
    // The lapse clock runs from the hold's end, however early in the hold the dispute opened
    // (finding, info: it ran from the opening, so a dispute opened at once lapsed before a
    // late one would have).
    let lapse = binary::lapse_dispute(&id);
    let hold_ends_at = h.market(&id).await.hold_ends_at().unwrap();
    assert!(h.dispute(&id).await.opened_at < hold_ends_at);
    h.warp_to(hold_ends_at + MAX_RESOLUTION_DELAY - 1).await;
    assert_custom_error(
        h.process(std::slice::from_ref(&lapse), &[]).await,
        BinaryError::ResolutionDelayNotElapsed,
    );
    // Only the admin rules, and a lapse is not a ruling a stranger can send as one.
    for action in [DisputeAction::Refund, DisputeAction::Lapse] {
        let ruling = binary::resolve_dispute(anyone.pubkey(), &id, disputer.pubkey(), action);
        assert_custom_error(
            h.process(&[ruling], &[&anyone]).await,
            match action {
                DisputeAction::Lapse => BinaryError::LapseIsItsOwnInstruction,
                _ => BinaryError::NotAdmin,
            },
        );
    }
    h.warp_by(1).await;
    let (treasury_before, disputer_before) = (
        h.lamports(h.treasury).await,
        h.lamports(disputer.pubkey()).await,
    );
    h.process(&[lapse], &[]).await.unwrap();
    assert_eq!(h.lamports(disputer.pubkey()).await, disputer_before);
    assert_eq!(h.dispute(&id).await.status, DisputeStatus::Lapsed);
    h.forward_dispute_bond(&id).await.unwrap();
    assert_eq!(h.lamports(h.treasury).await - treasury_before, DISPUTE_BOND);
    let m = h.market(&id).await;
    assert_eq!(
        (m.oracle_status, m.outcome, m.finalized),
        (ORACLE_STATUS_OPEN, Some(Side::Yes), false)
    );
    assert_custom_error(
        h.open_dispute(&disputer, &id).await,
        BinaryError::DisputeLimitReached,
    );
    h.finalize(&id).await.unwrap();
    // YES wins 2 SOL + 0.35 SOL; NO keeps 1.3 SOL.
    let before = h.lamports(yes.pubkey()).await;
    h.claim(&yes, &id, Side::Yes).await.unwrap();
    assert_eq!(
        h.lamports(yes.pubkey()).await - before,
        2 * SOL + 350_000_000
    );
    let before = h.lamports(no.pubkey()).await;
    h.claim(&no, &id, Side::No).await.unwrap();
    assert_eq!(h.lamports(no.pubkey()).await - before, 1_300_000_000);
}

#[tokio::test]
async fn yield_scaffold_refuses_and_moves_nothing() {
    let mut h = Harness::start().await;
    let w = h.wallets[0].insecure_clone();
    let admin = h.admin.insecure_clone();
    let id = h.create_sol_market(&w, MarketVariant::Yield, DAY).await;
    h.back(&w, &id, Side::Yes, SOL).await.unwrap();
    for ix in [
        binary::deposit_to_yield(admin.pubkey(), &id, Side::Yes, SOL),
        binary::withdraw_from_yield(admin.pubkey(), &id, Side::Yes, SOL),
    ] {
        assert_custom_error(
            h.process(&[ix], &[&admin]).await,
            BinaryError::YieldVenueNotConfigured,
        );
    }
    assert_custom_error(
        h.process(
            &[binary::deposit_to_yield(w.pubkey(), &id, Side::Yes, SOL)],
            &[&w],
        )
        .await,
        BinaryError::NotAdmin,
    );
    assert_eq!(h.market(&id).await.total_yield, 0);
    assert_eq!(h.vault_balance(&id, Side::Yes).await, SOL);
}

#[tokio::test]
async fn claim_emits_its_payout() {
    let mut h = Harness::start().await;
    let w = h.wallets[0].insecure_clone();
    let id = h.create_sol_market(&w, MarketVariant::Yield, DAY).await;
    h.back(&w, &id, Side::Yes, SOL).await.unwrap();
    h.resolve_and_finalize(&id, Side::Yes).await;
    let events = h
        .process_with_events(&[binary::claim(w.pubkey(), &id, Side::Yes)], &[&w])
        .await
        .unwrap();
    match binary_events(&events).as_slice() {
        [BinaryEvent::Claimed(e)] => {
            assert_eq!((e.backer, e.principal, e.payout), (w.pubkey(), SOL, SOL))
        }
        other => panic!("unexpected events {other:?}"),
    }
}

#[tokio::test]
async fn oracles_reclaim_vote_rent_only_after_finalisation() {
    let mut h = Harness::start().await;
    let w = h.wallets[0].insecure_clone();
    let id = h.create_sol_market(&w, MarketVariant::Yield, DAY).await;
    h.back(&w, &id, Side::Yes, SOL).await.unwrap();
    h.resolve(&id, Side::Yes).await;
    let oracle = h.oracles[0].insecure_clone();
    let close = binary::close_oracle_vote(oracle.pubkey(), &id);
    assert_custom_error(
        h.process(std::slice::from_ref(&close), &[&oracle]).await,
        BinaryError::MarketNotFinalized,
    );

    h.warp_by(HOLD).await;
    h.finalize(&id).await.unwrap();
    let vote_rent = h.rent_for(8 + OracleVote::INIT_SPACE).await;
    let before = h.lamports(oracle.pubkey()).await;
    let events = h.process_with_events(&[close], &[&oracle]).await.unwrap();
    assert_eq!(h.lamports(oracle.pubkey()).await - before, vote_rent);
    assert!(h
        .raw_account(pda::binary::oracle_vote(&id, &oracle.pubkey()))
        .await
        .is_none());
    assert!(
        matches!(binary_events(&events).as_slice(), [BinaryEvent::OracleVoteClosed(e)] if e.oracle == oracle.pubkey())
    );
    // A finalised market takes no new vote in its place.
    assert_custom_error(
        h.vote(0, &id, Side::No, 9_000).await,
        BinaryError::MarketNotOpen,
    );
}

#[tokio::test]
async fn a_revoked_crucible_source_freezes_nothing_and_the_share_forwards_once_allowed_again() {
    let mut h = Harness::start().await;
    let [a, c, creator] = [0, 2, 3].map(|i| h.wallets[i].insecure_clone());
    let id = h
        .create_sol_market(&creator, MarketVariant::Yield, DAY)
        .await;
    h.back(&a, &id, Side::Yes, SOL).await.unwrap();
    h.back(&c, &id, Side::No, 2 * SOL).await.unwrap();
    // crucible_pool's admin removes binary_vault from its sources after the backings.
    let admin = h.admin.insecure_clone();
    let revoke =
        crucible::set_authorized_source(admin.pubkey(), pda::binary::cpi_authority(), false);
    h.process(std::slice::from_ref(&revoke), &[&admin])
        .await
        .unwrap();
    h.resolve(&id, Side::Yes).await;
    h.warp_by(HOLD).await;
    h.finalize_only(&id).await.unwrap();
    assert_custom_error(
        h.forward_crucible_share(&id).await,
        crucible_pool::error::CrucibleError::UnauthorizedSource,
    );
    // Every backer claims in full; the crucible share (0.35 SOL) waits in the NO vault.
    let before = h.lamports(a.pubkey()).await;
    h.claim(&a, &id, Side::Yes).await.unwrap();
    assert_eq!(h.lamports(a.pubkey()).await - before, SOL + 350_000_000);
    let before = h.lamports(c.pubkey()).await;
    h.claim(&c, &id, Side::No).await.unwrap();
    assert_eq!(h.lamports(c.pubkey()).await - before, 1_300_000_000);
    assert_eq!(h.vault_balance(&id, Side::No).await, 350_000_000);
    assert_eq!(h.vault_balance(&id, Side::Yes).await, 0);
    // Allowed again, anyone forwards it, once.
    h.allow_source(pda::binary::cpi_authority()).await.unwrap();
    h.forward_crucible_share(&id).await.unwrap();
    assert_eq!(h.vault_balance(&id, Side::No).await, 0);
    assert_eq!(h.epoch(&SOL_MINT, 0).await.deposited, 350_000_000);
    // New Yield markets are refused while crucible_pool would refuse their forfeit.
    h.process(&[revoke], &[&admin]).await.unwrap();
    let refused = binary::create_market(
        creator.pubkey(),
        None,
        CreateMarketArgs {
            market_id: h.next_market_id(),
            variant: MarketVariant::Yield,
            source: MarketSource::Seed,
            deadline: h.now().await + DAY,
        },
    );
    assert_custom_error(
        h.process(&[refused], &[&creator]).await,
        BinaryError::CrucibleRefusesForfeits,
    );
    // A Classic market forfeits nothing and is still allowed.
    h.create_sol_market(&creator, MarketVariant::Classic, DAY)
        .await;
}

/// A treasury the runtime never lets a transaction credit (a sysvar; a builtin program fails the
/// same way) holds up no dispute: it is opened, ruled and the market finalised and claimed, and
/// only the forfeit bond waits, in the dispute account, until the treasury is a wallet again.
#[tokio::test]
async fn a_treasury_that_cannot_be_credited_holds_up_no_dispute_only_its_bond() {
    let mut h = Harness::start().await;
    let sysvar = CLOCK_SYSVAR;
    let to = |treasury| ConfigUpdate {
        treasury: Some(treasury),
        ..ConfigUpdate::default()
    };
    h.change_config(to(sysvar)).await.unwrap();
    let (id, yes, _) = market_on_hold(&mut h, Side::Yes).await;
    let disputer = h.wallets[2].insecure_clone();
    h.open_dispute(&disputer, &id).await.unwrap();
    h.settle_dispute(&id, &disputer.pubkey(), DisputeAction::Uphold)
        .await
        .unwrap();
    let dispute = pda::binary::dispute(&id);
    let held = h.lamports(dispute).await;
    let forward = binary::forward_dispute_bond(&id, sysvar);
    assert_custom_error(
        h.process(&[forward], &[]).await,
        anchor_lang::error::ErrorCode::ConstraintMut,
    );
    assert_eq!(h.lamports(dispute).await, held);
    h.warp_by(DEFAULT_RESOLUTION_TIMELOCK_SECS).await;
    h.finalize(&id).await.unwrap();
    let before = h.lamports(yes.pubkey()).await;
    h.claim(&yes, &id, Side::Yes).await.unwrap();
    assert!(h.lamports(yes.pubkey()).await > before);

    let treasury = Keypair::new().pubkey();
    h.change_config(to(treasury)).await.unwrap();
    let forward = binary::forward_dispute_bond(&id, treasury);
    let events = h.process_with_events(&[forward], &[]).await.unwrap();
    assert_eq!(h.lamports(treasury).await, DISPUTE_BOND);
    assert_eq!(h.lamports(dispute).await, held - DISPUTE_BOND);
    assert!(matches!(binary_events(&events).as_slice(),
        [BinaryEvent::DisputeBondForwarded(e)] if e.market_id == id && e.treasury == treasury && e.amount == DISPUTE_BOND));
}
