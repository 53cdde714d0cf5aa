//! shield_vault refusals: every caller check, the bounds, the timelocks and the claim rules.

use anchor_lang::error::ErrorCode as Anchor;
use anchor_lang::prelude::Pubkey;
use integration_tests::*;
use narrative_sdk::decode::{ProgramEvent, ShieldEvent};
use narrative_sdk::shield::Claim;
use narrative_sdk::{pda, shield};
use shield_vault::constants::*;
use shield_vault::error::ShieldError;
use shield_vault::instructions::{InitializeProgramArgs, OpenCoverageArgs};
use shield_vault::state::{AdminChange, PayoutRecipient, ShieldKind, ShieldSide, ShieldVerdict};
use solana_account::Account;
use solana_instruction_error::InstructionError;
use solana_keypair::Keypair;
use solana_signer::Signer;

const SAFE: ShieldSide = ShieldSide::Safe;
const EXPLOIT: ShieldSide = ShieldSide::Exploit;

async fn community(h: &mut Harness) -> [u8; 32] {
    let admin = h.admin.insecure_clone();
    h.open_shield(ShieldKind::Community, Default::default(), 30, 0, &admin)
        .await
        .unwrap()
}

/// A community shield with SAFE 2 SOL (wallet 0) and EXPLOIT 1 SOL (wallet 1), resolved SAFE.
async fn resolved_safe(h: &mut Harness) -> [u8; 32] {
    let id = community(h).await;
    let [a, c] = [0, 1].map(|i| h.wallets[i].insecure_clone());
    h.back_shield(&a, &id, SAFE, 2 * SOL).await.unwrap();
    h.back_shield(&c, &id, EXPLOIT, SOL).await.unwrap();
    let end = h.coverage(&id).await.period_end;
    h.warp_to(end).await;
    h.shield_vote(0, &id, SAFE).await.unwrap();
    h.warp_by(RESOLUTION_TIMELOCK_SECS).await;
    h.shield_finalize(&id).await.unwrap();
    id
}

#[tokio::test]
async fn backing_bounds_are_0_1_and_100_sol_per_deposit_and_position() {
    let mut h = Harness::start().await;
    let id = community(&mut h).await;
    let w = h.wallets[0].insecure_clone();
    for amount in [0, MIN_BACKING_LAMPORTS - 1, MAX_BACKING_LAMPORTS + 1] {
        assert_custom_error(
            h.back_shield(&w, &id, SAFE, amount).await,
            ShieldError::BackingOutOfBounds,
        );
    }
    h.back_shield(&w, &id, SAFE, MIN_BACKING_LAMPORTS)
        .await
        .unwrap();
    h.back_shield(&w, &id, EXPLOIT, MAX_BACKING_LAMPORTS)
        .await
        .unwrap();
    // A second deposit may not take the position past 100 SOL.
    assert_custom_error(
        h.back_shield(&w, &id, EXPLOIT, MIN_BACKING_LAMPORTS).await,
        ShieldError::BackingOutOfBounds,
    );
    h.back_shield(&w, &id, SAFE, MAX_BACKING_LAMPORTS - MIN_BACKING_LAMPORTS)
        .await
        .unwrap();
    let c = h.coverage(&id).await;
    assert_eq!(
        (c.safe.principal, c.exploit.principal),
        (MAX_BACKING_LAMPORTS, MAX_BACKING_LAMPORTS)
    );
}

#[tokio::test]
async fn backing_after_the_period_or_while_paused_is_rejected() {
    let mut h = Harness::start().await;
    let id = community(&mut h).await;
    let w = h.wallets[0].insecure_clone();
    let admin = h.admin.insecure_clone();
    h.process(&[shield::pause_program(admin.pubkey(), true)], &[&admin])
        .await
        .unwrap();
    assert_custom_error(h.back_shield(&w, &id, SAFE, SOL).await, ShieldError::Paused);
    assert_custom_error(
        h.open_shield(ShieldKind::Community, Pubkey::default(), 30, 0, &admin)
            .await,
        ShieldError::Paused,
    );
    h.process(&[shield::pause_program(admin.pubkey(), false)], &[&admin])
        .await
        .unwrap();
    h.warp_to(START_TIME + 30 * DAY).await;
    assert_custom_error(
        h.back_shield(&w, &id, SAFE, SOL).await,
        ShieldError::PeriodEnded,
    );
}

#[tokio::test]
async fn protocol_self_hedge_beyond_the_cap_is_rejected() {
    let mut h = Harness::start().await;
    let protocol = h.wallets[3].insecure_clone();
    let other = h.wallets[1].insecure_clone();
    let id = h
        .open_shield(ShieldKind::Partnership, protocol.pubkey(), 30, 0, &protocol)
        .await
        .unwrap();
    // Alone it would hold 100 % of EXPLOIT.
    assert_custom_error(
        h.back_shield(&protocol, &id, EXPLOIT, SOL).await,
        ShieldError::SelfHedgeCapExceeded,
    );
    h.back_shield(&other, &id, EXPLOIT, SOL).await.unwrap();
    // 1 SOL of 2 is exactly the 5000 bps cap; a further lamport is not.
    h.back_shield(&protocol, &id, EXPLOIT, SOL).await.unwrap();
    assert_custom_error(
        h.back_shield(&protocol, &id, EXPLOIT, MIN_BACKING_LAMPORTS)
            .await,
        ShieldError::SelfHedgeCapExceeded,
    );
    // SAFE is not a hedge.
    h.back_shield(&protocol, &id, SAFE, SOL).await.unwrap();
}

#[tokio::test]
async fn open_coverage_checks_the_admin_the_period_and_the_protocol_wallet() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let outsider = h.wallets[0].insecure_clone();
    for days in [0, 29, 45, 91] {
        assert_custom_error(
            h.open_shield(ShieldKind::Community, Pubkey::default(), days, 0, &admin)
                .await,
            ShieldError::InvalidPeriod,
        );
    }
    assert_custom_error(
        h.open_shield(ShieldKind::Partnership, Pubkey::default(), 30, 0, &admin)
            .await,
        ShieldError::MissingProtocolWallet,
    );
    let args = OpenCoverageArgs {
        protocol_id: h.next_protocol_id(),
        kind: ShieldKind::Community,
        protocol_wallet: Pubkey::default(),
        period_days: 30,
        fee_lamports: 0,
    };
    let ix = shield::open_coverage(
        outsider.pubkey(),
        outsider.pubkey(),
        h.treasury,
        args.clone(),
    );
    assert_custom_error(h.process(&[ix], &[&outsider]).await, ShieldError::NotAdmin);
    let ix = shield::open_coverage(admin.pubkey(), admin.pubkey(), outsider.pubkey(), args);
    assert_custom_error(
        h.process(&[ix], &[&admin]).await,
        ShieldError::WrongTreasury,
    );
}

#[tokio::test]
async fn vote_before_period_end_by_a_non_oracle_or_twice_is_rejected() {
    // Threshold 2, so that one vote leaves voting open and a repeat reaches the vote account.
    let mut h = Harness::start_with(HarnessOptions {
        shield_threshold: 2,
        ..HarnessOptions::default()
    })
    .await;
    let id = community(&mut h).await;
    assert_custom_error(
        h.shield_vote(0, &id, SAFE).await,
        ShieldError::PeriodNotEnded,
    );
    h.warp_to(START_TIME + 30 * DAY).await;
    let outsider = h.wallets[0].insecure_clone();
    let ix = shield::submit_oracle_resolution(outsider.pubkey(), &id, EXPLOIT.into());
    assert_custom_error(h.process(&[ix], &[&outsider]).await, ShieldError::NotOracle);
    h.shield_vote(0, &id, SAFE).await.unwrap();
    assert_instruction_error(
        h.shield_vote(0, &id, SAFE).await,
        InstructionError::AccountAlreadyInitialized,
    );
    h.shield_vote(1, &id, SAFE).await.unwrap();
    // The threshold was met: the outcome is proposed and voting is closed.
    assert_eq!(h.coverage(&id).await.outcome, Some(SAFE));
    assert_custom_error(
        h.shield_vote(2, &id, EXPLOIT).await,
        ShieldError::OutcomeAlreadyProposed,
    );
}

#[tokio::test]
async fn finalize_before_the_timelock_or_without_a_proposal_is_rejected() {
    let mut h = Harness::start().await;
    let id = community(&mut h).await;
    let w = h.wallets[0].insecure_clone();
    h.back_shield(&w, &id, SAFE, SOL).await.unwrap();
    h.warp_to(START_TIME + 30 * DAY).await;
    assert_custom_error(h.shield_finalize(&id).await, ShieldError::ThresholdNotMet);
    h.shield_vote(0, &id, SAFE).await.unwrap();
    h.warp_by(RESOLUTION_TIMELOCK_SECS - 1).await;
    assert_custom_error(
        h.shield_finalize(&id).await,
        ShieldError::TimelockNotElapsed,
    );
    h.warp_by(1).await;
    h.shield_finalize(&id).await.unwrap();
    assert_custom_error(h.shield_finalize(&id).await, ShieldError::CoverageNotActive);
}

#[tokio::test]
async fn payouts_go_only_to_their_own_wallet_from_the_losing_vault_after_finalisation() {
    let mut h = Harness::start().await;
    let protocol = h.wallets[3].insecure_clone();
    let [a, c] = [0, 1].map(|i| h.wallets[i].insecure_clone());
    let id = h
        .open_shield(ShieldKind::Partnership, protocol.pubkey(), 30, 0, &protocol)
        .await
        .unwrap();
    h.back_shield(&a, &id, SAFE, SOL).await.unwrap();
    h.back_shield(&c, &id, EXPLOIT, SOL).await.unwrap();
    h.warp_to(START_TIME + 30 * DAY).await;
    h.shield_vote(0, &id, EXPLOIT).await.unwrap();
    h.warp_by(RESOLUTION_TIMELOCK_SECS).await;
    let treasury = PayoutRecipient::Treasury;
    let ix = shield::forward_payout(&id, SAFE, treasury, h.treasury);
    assert_custom_error(h.process(&[ix], &[]).await, ShieldError::NotResolved);
    h.process(&[shield::finalize_resolution(&id)], &[])
        .await
        .unwrap();
    let thief = Keypair::new().pubkey();
    for (recipient, error) in [
        (treasury, ShieldError::WrongTreasury),
        (PayoutRecipient::Protocol, ShieldError::WrongProtocolWallet),
    ] {
        let ix = shield::forward_payout(&id, SAFE, recipient, thief);
        assert_custom_error(h.process(&[ix], &[]).await, error);
    }
    // The winners' vault pays nothing but the winners' claims.
    let ix = shield::forward_payout(&id, EXPLOIT, treasury, h.treasury);
    assert_custom_error(h.process(&[ix], &[]).await, ShieldError::WrongVault);
    assert_eq!(h.lamports(thief).await, 0);
    let cov = h.coverage(&id).await;
    assert!(!cov.treasury_forwarded && !cov.protocol_forwarded);
}

#[tokio::test]
async fn winner_claim_by_a_loser_and_loser_claim_by_a_winner_are_rejected() {
    let mut h = Harness::start().await;
    let id = resolved_safe(&mut h).await;
    let [a, c] = [0, 1].map(|i| h.wallets[i].insecure_clone());
    assert_custom_error(
        h.shield_claim(Claim::SafeWinner, &c, &id, EXPLOIT).await,
        ShieldError::NotWinner,
    );
    assert_custom_error(
        h.shield_claim(Claim::ExploitWinner, &c, &id, EXPLOIT).await,
        ShieldError::NotWinner,
    );
    assert_custom_error(
        h.shield_claim(Claim::ExploitWinner, &a, &id, SAFE).await,
        ShieldError::NotWinner,
    );
    assert_custom_error(
        h.shield_claim(Claim::LoserYield, &a, &id, SAFE).await,
        ShieldError::NotLoser,
    );
    assert_custom_error(
        h.shield_claim(Claim::Refund, &a, &id, SAFE).await,
        ShieldError::NotRefunding,
    );
    assert!(!h.shield_backing(&id, &c.pubkey(), EXPLOIT).await.claimed);
}

#[tokio::test]
async fn claim_twice_is_rejected() {
    let mut h = Harness::start().await;
    let id = resolved_safe(&mut h).await;
    let a = h.wallets[0].insecure_clone();
    h.shield_claim(Claim::SafeWinner, &a, &id, SAFE)
        .await
        .unwrap();
    let before = h.lamports(a.pubkey()).await;
    assert_custom_error(
        h.shield_claim(Claim::SafeWinner, &a, &id, SAFE).await,
        ShieldError::AlreadyClaimed,
    );
    assert_eq!(h.lamports(a.pubkey()).await, before);
}

#[tokio::test]
async fn claim_of_another_wallets_backing_is_rejected() {
    let mut h = Harness::start().await;
    let id = resolved_safe(&mut h).await;
    let owner = h.wallets[0].pubkey();
    let thief = h.wallets[2].insecure_clone();
    let mut ix = shield::claim(Claim::SafeWinner, thief.pubkey(), &id, SAFE);
    let theirs = pda::shield::backing(&id, &thief.pubkey(), SAFE);
    ix.accounts
        .iter_mut()
        .find(|m| m.pubkey == theirs)
        .unwrap()
        .pubkey = pda::shield::backing(&id, &owner, SAFE);
    assert_custom_error(h.process(&[ix], &[&thief]).await, Anchor::ConstraintSeeds);
}

#[tokio::test]
async fn winner_path_after_refund_all_is_rejected() {
    let mut h = Harness::start().await;
    let id = community(&mut h).await;
    let a = h.wallets[0].insecure_clone();
    h.back_shield(&a, &id, SAFE, SOL).await.unwrap();
    h.shield_vote(0, &id, ShieldVerdict::Unresolvable)
        .await
        .unwrap();
    assert_custom_error(
        h.shield_claim(Claim::SafeWinner, &a, &id, SAFE).await,
        ShieldError::NotResolved,
    );
    h.warp_to(START_TIME + 30 * DAY).await;
    assert_custom_error(
        h.shield_vote(1, &id, SAFE).await,
        ShieldError::CoverageNotActive,
    );
    h.warp_by(RESOLUTION_TIMELOCK_SECS).await;
    assert_custom_error(h.shield_finalize(&id).await, ShieldError::CoverageNotActive);
    h.shield_claim(Claim::Refund, &a, &id, SAFE).await.unwrap();
}

#[tokio::test]
async fn refund_all_by_anyone_but_the_admin_and_pause_by_outsiders_are_rejected() {
    let mut h = Harness::start().await;
    let id = community(&mut h).await;
    h.warp_to(START_TIME + 30 * DAY + ADMIN_REFUND_DELAY_SECS)
        .await;
    let oracle = h.oracles[0].insecure_clone();
    let outsider = h.wallets[0].insecure_clone();
    for key in [&outsider, &oracle] {
        let ix = shield::refund_all(key.pubkey(), &id);
        assert_custom_error(h.process(&[ix], &[key]).await, ShieldError::NotAdmin);
    }
    let ix = shield::pause_program(outsider.pubkey(), true);
    assert_custom_error(
        h.process(&[ix], &[&outsider]).await,
        ShieldError::NotOracleOrAdmin,
    );
}

#[tokio::test]
async fn harvest_by_a_non_authority_of_nothing_or_of_a_loss_is_rejected() {
    let mut h = Harness::start().await;
    let id = community(&mut h).await;
    let w = h.wallets[0].insecure_clone();
    assert_custom_error(h.harvest(&id, SAFE).await, ShieldError::NothingToHarvest);
    h.send_lamports(pda::shield::vault(&id, SAFE), SOL).await;
    assert_custom_error(h.harvest(&id, SAFE).await, ShieldError::NoBackers);
    h.back_shield(&w, &id, SAFE, SOL).await.unwrap();
    let ix = shield::harvest_yield(w.pubkey(), &id, SAFE);
    assert_custom_error(
        h.process(&[ix], &[&w]).await,
        ShieldError::NotHarvestAuthority,
    );
    // The vault holds less than its books (as if a venue lost funds): a loss is not booked.
    let vault = pda::shield::vault(&id, SAFE);
    let mut account = h.raw_account(vault).await.unwrap();
    account.lamports -= SOL + 1;
    h.plant_account(vault, account);
    assert_custom_error(
        h.harvest(&id, SAFE).await,
        ShieldError::HarvestWouldBookLoss,
    );
    assert_eq!(h.coverage(&id).await.safe.yield_harvested, 0);
}

#[tokio::test]
async fn admin_changes_by_others_out_of_bounds_or_early_are_rejected() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let outsider = h.wallets[0].insecure_clone();
    let ix = shield::set_max_self_hedge_bps(outsider.pubkey(), 100);
    assert_custom_error(h.process(&[ix], &[&outsider]).await, ShieldError::NotAdmin);
    let ix = shield::set_max_self_hedge_bps(admin.pubkey(), MAX_SELF_HEDGE_BPS + 1);
    assert_custom_error(
        h.process(&[ix], &[&admin]).await,
        ShieldError::SelfHedgeCapTooHigh,
    );
    for change in [
        AdminChange::Treasury(Pubkey::default()),
        AdminChange::HarvestAuthority(Pubkey::default()),
    ] {
        let ix = shield::propose_admin_change(admin.pubkey(), change);
        assert_custom_error(h.process(&[ix], &[&admin]).await, ShieldError::ZeroKey);
    }
    let bad_set = AdminChange::OracleSet {
        oracles: [Pubkey::default(); MAX_ORACLES],
        count: 0,
        threshold: 1,
    };
    let ix = shield::propose_admin_change(admin.pubkey(), bad_set);
    assert_custom_error(
        h.process(&[ix], &[&admin]).await,
        ShieldError::InvalidOracleSet,
    );
    assert!(AdminChange::oracle_set(&[Keypair::new().pubkey()], 2).is_none());
    assert_custom_error(
        h.process(&[shield::apply_admin_change(admin.pubkey())], &[&admin])
            .await,
        ShieldError::NoPendingChange,
    );
    h.process(
        &[shield::set_max_self_hedge_bps(admin.pubkey(), 100)],
        &[&admin],
    )
    .await
    .unwrap();
    assert_custom_error(
        h.process(&[shield::apply_admin_change(admin.pubkey())], &[&admin])
            .await,
        ShieldError::AdminTimelockNotElapsed,
    );
}

#[tokio::test]
async fn donations_to_predictable_shield_addresses_do_not_block_them() {
    let mut h = Harness::start().await;
    let w = h.wallets[0].insecure_clone();
    let admin = h.admin.insecure_clone();
    // Protocol ids are a counter in the UUID's last byte: the next one is predictable, as a
    // real protocol id derived from a protocol and period would be.
    let mut next = h.next_protocol_id();
    next[15] += 1;
    for address in [
        pda::shield::coverage(&next),
        pda::shield::backing(&next, &w.pubkey(), SAFE),
        pda::shield::oracle_vote(&next, &h.oracles[0].pubkey()),
    ] {
        h.plant_account(
            address,
            Account {
                lamports: 1,
                data: vec![],
                owner: anchor_lang::system_program::ID,
                executable: false,
                rent_epoch: 0,
            },
        );
    }
    let id = h
        .open_shield(ShieldKind::Community, Pubkey::default(), 30, 0, &admin)
        .await
        .unwrap();
    assert_eq!(id, next, "the harness's next protocol id");
    h.back_shield(&w, &id, SAFE, SOL).await.unwrap();
    h.warp_to(START_TIME + 30 * DAY).await;
    h.shield_vote(0, &id, SAFE).await.unwrap();
    assert_eq!(h.coverage(&id).await.outcome, Some(SAFE));
}

#[tokio::test]
async fn one_oracle_cannot_undo_an_outcome_the_threshold_proposed() {
    let mut h = Harness::start_with(HarnessOptions {
        oracles: 4,
        shield_threshold: 3,
        ..HarnessOptions::default()
    })
    .await;
    let id = community(&mut h).await;
    let [a, c] = [0, 1].map(|i| h.wallets[i].insecure_clone());
    h.back_shield(&a, &id, SAFE, 2 * SOL).await.unwrap();
    h.back_shield(&c, &id, EXPLOIT, SOL).await.unwrap();
    h.warp_to(START_TIME + 30 * DAY).await;
    for oracle in 0..3 {
        h.shield_vote(oracle, &id, EXPLOIT).await.unwrap();
    }
    assert_eq!(h.coverage(&id).await.outcome, Some(EXPLOIT));
    assert_custom_error(
        h.shield_vote(3, &id, ShieldVerdict::Unresolvable).await,
        ShieldError::OutcomeAlreadyProposed,
    );
    h.warp_by(RESOLUTION_TIMELOCK_SECS).await;
    // Nor may the admin override the threshold.
    let admin = h.admin.insecure_clone();
    assert_custom_error(
        h.process(&[shield::refund_all(admin.pubkey(), &id)], &[&admin])
            .await,
        ShieldError::OutcomeProposed,
    );
    // The outcome stands: it finalises and the EXPLOIT backer is paid as a winner.
    h.shield_finalize(&id).await.unwrap();
    h.shield_claim(Claim::ExploitWinner, &c, &id, EXPLOIT)
        .await
        .unwrap();
}

/// Finding (medium): one listed oracle could refund any active coverage before an outcome was
/// proposed, mid-period and while the others voted EXPLOIT. Refunding is now the threshold's
/// decision (UNRESOLVABLE votes), or the admin's once the oracles had their 48 h.
#[tokio::test]
async fn one_oracle_cannot_refund_a_coverage_only_the_threshold_or_the_admin_after_its_delay() {
    let mut h = Harness::start_with(HarnessOptions {
        oracles: 4,
        shield_threshold: 3,
        ..HarnessOptions::default()
    })
    .await;
    let contested = community(&mut h).await;
    let abandoned = community(&mut h).await;
    let a = h.wallets[0].insecure_clone();
    h.back_shield(&a, &contested, EXPLOIT, SOL).await.unwrap();
    // Mid-period: a lone oracle's refund is refused whoever signs it.
    h.warp_to(START_TIME + 10 * DAY).await;
    let lone = h.oracles[1].insecure_clone();
    assert_custom_error(
        h.process(&[shield::refund_all(lone.pubkey(), &contested)], &[&lone])
            .await,
        ShieldError::NotAdmin,
    );
    // UNRESOLVABLE votes count against the threshold, mid-period too; two of three refund
    // nothing, and SAFE / EXPLOIT still wait for the period's end.
    for oracle in 0..2 {
        h.shield_vote(oracle, &contested, ShieldVerdict::Unresolvable)
            .await
            .unwrap();
    }
    assert_custom_error(
        h.shield_vote(2, &contested, EXPLOIT).await,
        ShieldError::PeriodNotEnded,
    );
    let c = h.coverage(&contested).await;
    assert_eq!(
        (c.status, c.unresolvable_votes),
        (shield_vault::state::CoverageStatus::Active, 2)
    );
    // The admin cannot refund mid-period either.
    let admin = h.admin.insecure_clone();
    assert_custom_error(
        h.process(&[shield::refund_all(admin.pubkey(), &abandoned)], &[&admin])
            .await,
        ShieldError::RefundTooEarly,
    );
    // The third UNRESOLVABLE vote meets the threshold: refunds, named after that oracle.
    let third = h.oracles[2].insecure_clone();
    let ix =
        shield::submit_oracle_resolution(third.pubkey(), &contested, ShieldVerdict::Unresolvable);
    let events = h.process_with_events(&[ix], &[&third]).await.unwrap();
    assert!(events.iter().any(|e| matches!(
        e,
        ProgramEvent::Shield(ShieldEvent::RefundAll(r)) if r.by == third.pubkey()
    )));
    assert_eq!(
        h.coverage(&contested).await.status,
        shield_vault::state::CoverageStatus::Refunding
    );
    h.shield_claim(Claim::Refund, &a, &contested, EXPLOIT)
        .await
        .unwrap();

    // The admin refunds a coverage nobody decided, 48 h after its period, not a second before.
    let period_end = h.coverage(&abandoned).await.period_end;
    h.warp_to(period_end + ADMIN_REFUND_DELAY_SECS - 1).await;
    assert_custom_error(
        h.process(&[shield::refund_all(admin.pubkey(), &abandoned)], &[&admin])
            .await,
        ShieldError::RefundTooEarly,
    );
    h.warp_by(1).await;
    h.process(&[shield::refund_all(admin.pubkey(), &abandoned)], &[&admin])
        .await
        .unwrap();
    assert_eq!(
        h.coverage(&abandoned).await.status,
        shield_vault::state::CoverageStatus::Refunding
    );
}

/// Finding (low): shield_vault's oracle set was global, so a set or threshold change applied to
/// running coverages and new keys voted on top of the old tallies. Each coverage now votes
/// with the set it opened under.
#[tokio::test]
async fn a_coverage_is_decided_by_the_oracle_set_it_opened_under() {
    let mut h = Harness::start_with(HarnessOptions {
        oracles: 3,
        shield_threshold: 2,
        ..HarnessOptions::default()
    })
    .await;
    let running = community(&mut h).await;
    let a = h.wallets[0].insecure_clone();
    h.back_shield(&a, &running, SAFE, SOL).await.unwrap();
    // The admin swaps in two new keys with a threshold of one, through the timelock.
    let newcomers = [Keypair::new(), Keypair::new()];
    let change = AdminChange::oracle_set(&newcomers.each_ref().map(|k| k.pubkey()), 1).unwrap();
    h.change_shield(change).await.unwrap();
    let later = community(&mut h).await;

    let period_end = h.coverage(&running).await.period_end;
    h.warp_to(period_end).await;
    let newcomer = &newcomers[0];
    h.send_lamports(newcomer.pubkey(), SOL).await;
    let vote = |id: &[u8; 32]| {
        shield::submit_oracle_resolution(newcomer.pubkey(), id, ShieldVerdict::Exploit)
    };
    assert_custom_error(
        h.process(&[vote(&running)], &[newcomer]).await,
        ShieldError::NotOracle,
    );
    // The old set still decides the running coverage, against its threshold of two.
    h.shield_vote(0, &running, SAFE).await.unwrap();
    assert_eq!(h.coverage(&running).await.outcome, None);
    h.shield_vote(1, &running, SAFE).await.unwrap();
    assert_eq!(h.coverage(&running).await.outcome, Some(SAFE));
    // A coverage opened after the change is the new set's: one vote decides it, and an old
    // oracle has no say.
    let later_end = h.coverage(&later).await.period_end;
    h.warp_to(later_end).await;
    assert_custom_error(h.shield_vote(2, &later, SAFE).await, ShieldError::NotOracle);
    h.process(&[vote(&later)], &[newcomer]).await.unwrap();
    assert_eq!(h.coverage(&later).await.outcome, Some(EXPLOIT));
}

/// Finding (low): a pending admin change never expired. Past its apply window it must be
/// proposed again, and no longer blocks a new proposal.
#[tokio::test]
async fn a_pending_admin_change_past_its_apply_window_must_be_proposed_again() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let propose =
        |bps| shield::propose_admin_change(admin.pubkey(), AdminChange::MaxSelfHedgeBps(bps));
    h.process(&[propose(1_000)], &[&admin]).await.unwrap();
    h.warp_by(ADMIN_ACTION_TIMELOCK_SECS + vault_common::APPLY_WINDOW_SECS)
        .await;
    let apply = shield::apply_admin_change(admin.pubkey());
    assert_custom_error(
        h.process(std::slice::from_ref(&apply), &[&admin]).await,
        ShieldError::ChangeExpired,
    );
    h.process(&[propose(2_000)], &[&admin]).await.unwrap();
    h.warp_by(ADMIN_ACTION_TIMELOCK_SECS + vault_common::APPLY_WINDOW_SECS - 1)
        .await;
    h.process(&[apply], &[&admin]).await.unwrap();
    let state: shield_vault::state::ShieldProgramState =
        h.account(pda::shield::program_state()).await;
    assert_eq!(state.max_self_hedge_bps, 2_000);
}

#[tokio::test]
async fn anyone_may_refund_a_coverage_left_unresolved_past_the_delay() {
    let mut h = Harness::start().await;
    let unvoted = community(&mut h).await;
    let unfinalised = community(&mut h).await;
    let a = h.wallets[0].insecure_clone();
    h.back_shield(&a, &unvoted, SAFE, SOL).await.unwrap();
    let period_end = h.coverage(&unvoted).await.period_end;
    h.warp_to(period_end).await;
    h.shield_vote(0, &unfinalised, EXPLOIT).await.unwrap();
    let proposed_at = h.coverage(&unfinalised).await.outcome_proposed_at;

    // No outcome: refund mode opens RESOLUTION_DELAY_SECS after the period.
    let ix = shield::trigger_timeout_refund(&unvoted);
    h.warp_to(period_end + RESOLUTION_DELAY_SECS - 1).await;
    assert_custom_error(
        h.process(std::slice::from_ref(&ix), &[]).await,
        ShieldError::ResolutionDelayNotElapsed,
    );
    // A proposed outcome is finalised by anyone after its timelock; the timeout waits the delay
    // beyond that.
    let proposed = shield::trigger_timeout_refund(&unfinalised);
    assert_custom_error(
        h.process(std::slice::from_ref(&proposed), &[]).await,
        ShieldError::ResolutionDelayNotElapsed,
    );
    h.warp_to(period_end + RESOLUTION_DELAY_SECS).await;
    h.process(&[ix], &[]).await.unwrap();
    let coverage = h.coverage(&unvoted).await;
    assert_eq!(
        coverage.status,
        shield_vault::state::CoverageStatus::Refunding
    );
    let before = h.lamports(a.pubkey()).await;
    h.shield_claim(Claim::Refund, &a, &unvoted, SAFE)
        .await
        .unwrap();
    assert_eq!(h.lamports(a.pubkey()).await - before, SOL);

    h.warp_to(proposed_at + RESOLUTION_TIMELOCK_SECS + RESOLUTION_DELAY_SECS - 1)
        .await;
    assert_custom_error(
        h.process(std::slice::from_ref(&proposed), &[]).await,
        ShieldError::ResolutionDelayNotElapsed,
    );
    h.warp_by(1).await;
    h.process(&[proposed], &[]).await.unwrap();
    assert_custom_error(
        h.process(&[shield::trigger_timeout_refund(&unvoted)], &[])
            .await,
        ShieldError::CoverageNotActive,
    );
}

#[tokio::test]
async fn a_late_backer_earns_none_of_the_yield_that_arrived_before_it() {
    let mut h = Harness::start().await;
    let id = community(&mut h).await;
    let [early, late] = [0, 1].map(|i| h.wallets[i].insecure_clone());
    h.back_shield(&early, &id, SAFE, SOL).await.unwrap();
    // Yield reaches the vault, unbooked; a second backer arrives before any harvest.
    h.send_lamports(pda::shield::vault(&id, SAFE), SOL / 2)
        .await;
    h.back_shield(&late, &id, SAFE, SOL).await.unwrap();
    let pool = h.coverage(&id).await.safe;
    assert_eq!(
        pool.yield_harvested,
        SOL / 2,
        "booked before the late shares"
    );
    assert_custom_error(h.harvest(&id, SAFE).await, ShieldError::NothingToHarvest);
    h.shield_vote(0, &id, ShieldVerdict::Unresolvable)
        .await
        .unwrap();
    let before = h.lamports(late.pubkey()).await;
    h.shield_claim(Claim::Refund, &late, &id, SAFE)
        .await
        .unwrap();
    assert_eq!(
        h.lamports(late.pubkey()).await - before,
        SOL,
        "principal only"
    );
    let before = h.lamports(early.pubkey()).await;
    h.shield_claim(Claim::Refund, &early, &id, SAFE)
        .await
        .unwrap();
    let paid = h.lamports(early.pubkey()).await - before;
    // The whole half SOL, less the vault's rounding of the share price (a few lamports).
    assert!(
        (SOL + SOL / 2 - 10..=SOL + SOL / 2).contains(&paid),
        "{paid}"
    );
}

#[tokio::test]
async fn the_shield_admin_role_moves_only_when_the_successor_accepts() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let [successor, outsider] = [2, 3].map(|i| h.wallets[i].insecure_clone());
    assert_custom_error(
        h.process(
            &[shield::propose_admin(
                outsider.pubkey(),
                Some(outsider.pubkey()),
            )],
            &[&outsider],
        )
        .await,
        ShieldError::NotAdmin,
    );
    h.process(
        &[shield::propose_admin(
            admin.pubkey(),
            Some(successor.pubkey()),
        )],
        &[&admin],
    )
    .await
    .unwrap();
    assert_custom_error(
        h.process(&[shield::accept_admin(outsider.pubkey())], &[&outsider])
            .await,
        ShieldError::NotPendingAdmin,
    );
    h.process(&[shield::accept_admin(successor.pubkey())], &[&successor])
        .await
        .unwrap();
    let state: shield_vault::state::ShieldProgramState =
        h.account(pda::shield::program_state()).await;
    assert_eq!(
        (state.admin, state.pending_admin),
        (successor.pubkey(), None)
    );
    assert_custom_error(
        h.process(&[shield::cancel_admin_change(admin.pubkey())], &[&admin])
            .await,
        ShieldError::NotAdmin,
    );
    assert_custom_error(
        h.process(
            &[shield::cancel_admin_change(successor.pubkey())],
            &[&successor],
        )
        .await,
        ShieldError::NoPendingChange,
    );
}

/// Between a deployment and its initialisation anyone could send `initialize_program`: only the
/// upgrade authority's is taken, with crucible_pool as the seam pool and settings that meet the
/// bounds later changes must meet.
#[tokio::test]
async fn initialize_program_is_the_upgrade_authoritys_and_checks_its_settings() {
    let authority = Keypair::new();
    let impostor = Keypair::new();
    let mut bank = Uninitialised::start(&authority.pubkey(), &[&authority, &impostor]).await;
    let keys: Vec<Pubkey> = (0..=MAX_ORACLES).map(|_| Keypair::new().pubkey()).collect();
    let valid = || InitializeProgramArgs {
        oracles: keys[..MAX_ORACLES].to_vec(),
        oracle_threshold: 1,
        treasury: Keypair::new().pubkey(),
        harvest_authority: Keypair::new().pubkey(),
        seam_pool_program: crucible_pool::ID,
        max_self_hedge_bps: SELF_HEDGE_BPS,
    };
    let by = |signer: &Keypair, args| shield::initialize_program(signer.pubkey(), args);
    assert_custom_error(
        bank.process(by(&impostor, valid()), &impostor).await,
        ShieldError::NotUpgradeAuthority,
    );
    for (refused, error) in [
        (
            InitializeProgramArgs {
                seam_pool_program: binary_vault::ID,
                ..valid()
            },
            ShieldError::WrongSeamPool,
        ),
        (
            InitializeProgramArgs {
                oracles: keys.clone(),
                ..valid()
            },
            ShieldError::InvalidOracleSet,
        ),
        (
            InitializeProgramArgs {
                treasury: Pubkey::default(),
                ..valid()
            },
            ShieldError::ZeroKey,
        ),
        (
            InitializeProgramArgs {
                harvest_authority: Pubkey::default(),
                ..valid()
            },
            ShieldError::ZeroKey,
        ),
        (
            InitializeProgramArgs {
                max_self_hedge_bps: MAX_SELF_HEDGE_BPS + 1,
                ..valid()
            },
            ShieldError::SelfHedgeCapTooHigh,
        ),
    ] {
        assert_custom_error(
            bank.process(by(&authority, refused), &authority).await,
            error,
        );
    }
    assert!(!bank.exists(pda::shield::program_state()).await);
    bank.process(by(&authority, valid()), &authority)
        .await
        .unwrap();
    assert!(bank.exists(pda::shield::program_state()).await);
}

/// A settled vote's rent goes back to the oracle that cast it: another oracle, or a stranger,
/// naming that vote is refused, and the vote and its rent stay.
#[tokio::test]
async fn a_vote_is_closed_only_by_the_oracle_that_cast_it() {
    let mut h = Harness::start().await;
    let id = resolved_safe(&mut h).await;
    let vote = pda::shield::oracle_vote(&id, &h.oracles[0].pubkey());
    let rent = h.lamports(vote).await;
    for other in [h.oracles[1].insecure_clone(), h.wallets[2].insecure_clone()] {
        let mut close = shield::close_shield_vote(other.pubkey(), &id);
        let own = pda::shield::oracle_vote(&id, &other.pubkey());
        close
            .accounts
            .iter_mut()
            .filter(|meta| meta.pubkey == own)
            .for_each(|meta| meta.pubkey = vote);
        assert_custom_error(
            h.process(&[close], &[&other]).await,
            Anchor::ConstraintSeeds,
        );
    }
    assert_eq!(h.lamports(vote).await, rent);
}
