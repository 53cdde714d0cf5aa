//! The shield keeper end to end on a program-test bank: the api's perpetual job (paid by
//! `KEEPER_KEYPAIR`) finalises an exploit outcome once its timelock has passed, forwards the
//! seam share into crucible_pool's open epoch, and sends a coverage nobody resolved to refund
//! once its resolution delay has passed; the protocol read shows each stage. The ledger's clock
//! and the server's move together; nothing waits on a fixed sleep.

mod common;

use std::sync::Arc;

use common::bank::{BankLedger, TappedLedger};
use common::chain::{self, run_indexed};
use common::{eventually, TestServer};
use integration_tests::harness::{HarnessOptions, DAY, SOL};
use narrative_api::clock::{iso, Clock, ManualClock};
use narrative_api::domain::shield::keeper::{ShieldTender, RECHECK_SECS};
use narrative_api::jobs::shield_keeper::ShieldKeeper;
use narrative_api::jobs::{Handler, JobOutcome, Leased};
use narrative_sdk::crucible_pool::SOL_MINT;
use narrative_sdk::shield_vault::constants::{
    COMMUNITY_TREASURY_BPS, RESOLUTION_DELAY_SECS, RESOLUTION_TIMELOCK_SECS, SEAM_POOL_BPS,
};
use narrative_sdk::shield_vault::state::{CoverageStatus, ShieldKind, ShieldSide};
use narrative_sdk::{pda, shield, Pubkey};
use reqwest::StatusCode;
use serde_json::Value;
use solana_keypair::Keypair;
use solana_signer::Signer;

/// One run of the keeper's job, as the worker would run it, paid by `keeper`: what it
/// answered and how many transactions it sent (the background keepers, which pay with the same
/// key, may send at the same time; they are not counted).
async fn run_keeper(
    server: &TestServer,
    ledger: &Arc<BankLedger>,
    clock: &Arc<ManualClock>,
    keeper: &Keypair,
) -> (JobOutcome, usize) {
    let tapped = TappedLedger::new(ledger.clone());
    let tender = ShieldTender {
        store: server.db.store.clone(),
        ledger: tapped.clone(),
        keeper: Some(keeper.insecure_clone().into()),
        clock: clock.clone(),
    };
    let leased = Leased {
        id: 0,
        attempt: 1,
        job: ShieldKeeper::default(),
    };
    let outcome = tender.run(leased).await.unwrap();
    (outcome, tapped.sent())
}

/// Moves the bank's clock and the server's by `secs`.
async fn advance(ledger: &BankLedger, clock: &ManualClock, secs: i64) {
    ledger.harness.lock().await.warp_by(secs).await;
    clock.advance(secs);
}

async fn protocol(server: &TestServer, id: &[u8; 32]) -> Value {
    let (status, body) = server
        .get(&format!("/v1/shield/protocols/{}", hex::encode(id)))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["protocol"].clone()
}

/// A 30-day community shield opened by the admin and indexed.
async fn open(server: &TestServer, ledger: &BankLedger) -> [u8; 32] {
    let id = {
        let mut h = ledger.harness.lock().await;
        let admin = h.admin.insecure_clone();
        h.open_shield(ShieldKind::Community, Pubkey::default(), 30, 0, &admin)
            .await
            .expect("shield opens")
    };
    chain::index_from_bank(server, ledger, &[pda::shield::coverage(&id)]).await;
    id
}

async fn back(
    server: &TestServer,
    ledger: &BankLedger,
    who: &Keypair,
    id: &[u8; 32],
    side: ShieldSide,
    amount: u64,
) {
    let ix = shield::back_shield(who.pubkey(), id, side, amount);
    run_indexed(server, ledger, &[ix], &[who]).await;
}

#[tokio::test]
async fn the_keeper_finalises_forwards_the_seam_share_and_refunds_what_nobody_resolved() {
    let clock = ManualClock::at_system_time();
    let (server, ledger) =
        chain::start_on_bank_at(clock.clone(), HarnessOptions::default(), |h, c| {
            c.keeper_keypair = Some(h.keeper.to_base58_string().into());
        })
        .await;
    let (safe, exploit, silent_backer, oracle) = {
        let h = ledger.harness.lock().await;
        (
            h.wallets[0].insecure_clone(),
            h.wallets[1].insecure_clone(),
            h.wallets[2].insecure_clone(),
            h.oracles[0].insecure_clone(),
        )
    };
    let hacked = open(&server, &ledger).await;
    back(&server, &ledger, &safe, &hacked, ShieldSide::Safe, 2 * SOL).await;
    back(
        &server,
        &ledger,
        &exploit,
        &hacked,
        ShieldSide::Exploit,
        SOL,
    )
    .await;
    let silent = open(&server, &ledger).await;
    back(
        &server,
        &ledger,
        &silent_backer,
        &silent,
        ShieldSide::Safe,
        SOL,
    )
    .await;
    let period_end = ledger
        .harness
        .lock()
        .await
        .coverage(&silent)
        .await
        .period_end;
    assert_eq!(
        protocol(&server, &silent).await["refundable_at"],
        iso(period_end + RESOLUTION_DELAY_SECS)
    );

    // The period ends and the oracle (threshold 1) proposes EXPLOIT: the read shows when it
    // may be finalised, and nothing moves before then.
    advance(&ledger, &clock, 30 * DAY + 60).await;
    // A run now knows of nothing due for two weeks (both resolution delays), yet looks again
    // within RECHECK_SECS: an oracle may propose an outcome (due after two days) at any time,
    // and the store learning of it does not wake the keeper.
    let keeper = ledger.harness.lock().await.keeper.insecure_clone();
    let (outcome, sent) = run_keeper(&server, &ledger, &clock, &keeper).await;
    assert!(
        matches!(outcome, JobOutcome::Later(at) if at == clock.now() + RECHECK_SECS),
        "{outcome:?}"
    );
    assert_eq!(sent, 0, "nothing is due yet");
    let vote =
        shield::submit_oracle_resolution(oracle.pubkey(), &hacked, ShieldSide::Exploit.into());
    run_indexed(&server, &ledger, &[vote], &[&oracle]).await;
    let proposed_at = ledger
        .harness
        .lock()
        .await
        .coverage(&hacked)
        .await
        .outcome_proposed_at;
    let shown = protocol(&server, &hacked).await;
    assert_eq!(shown["outcome"], "exploit");
    assert_eq!(
        shown["finalizes_at"],
        iso(proposed_at + RESOLUTION_TIMELOCK_SECS)
    );
    assert_eq!(shown["seam_share"], Value::Null);

    // The timelock passes: the keeper finalises and forwards the seam share (300 bps of the
    // losing SAFE principal) into crucible_pool's open epoch and the treasury's share to the
    // treasury, each exactly once and each in a transaction of its own.
    let (epoch_number, deposited_before, treasury, treasury_before) = {
        let mut h = ledger.harness.lock().await;
        let current = h.asset_pool(&SOL_MINT).await.current_epoch;
        let treasury = h.treasury;
        (
            current,
            h.epoch(&SOL_MINT, current).await.deposited,
            treasury,
            h.lamports(treasury).await,
        )
    };
    advance(&ledger, &clock, RESOLUTION_TIMELOCK_SECS + 60).await;
    eventually("the keeper to finalise and forward both shares", || async {
        let shown = protocol(&server, &hacked).await;
        shown["seam_share"]["stage"] == "forwarded"
            && shown["treasury_share"]["stage"] == "forwarded"
    })
    .await;
    let seam = 2 * SOL * u64::from(SEAM_POOL_BPS) / 10_000;
    let treasury_share = 2 * SOL * u64::from(COMMUNITY_TREASURY_BPS) / 10_000;
    {
        let mut h = ledger.harness.lock().await;
        let coverage = h.coverage(&hacked).await;
        assert_eq!(coverage.status, CoverageStatus::Resolved);
        assert_eq!(coverage.outcome, Some(ShieldSide::Exploit));
        assert_eq!(
            (coverage.seam_payout, coverage.seam_forwarded),
            (seam, true)
        );
        assert_eq!(coverage.treasury_payout, treasury_share);
        assert_eq!(
            h.lamports(treasury).await - treasury_before,
            treasury_share,
            "the treasury's share, once"
        );
        // A community shield has no protocol share; nothing else waits in the losing vault.
        assert_eq!((coverage.protocol_payout, coverage.safe.held), (0, 0));
        // The epoch the share went to may have been closed by the Echo Pool keeper since; the
        // share is in the one that was open when it was forwarded, or the one after it.
        let received = h.epoch(&SOL_MINT, epoch_number).await.deposited - deposited_before;
        let next = h.asset_pool(&SOL_MINT).await.current_epoch;
        let later: u64 = if next > epoch_number {
            h.epoch(&SOL_MINT, epoch_number + 1).await.deposited
        } else {
            0
        };
        assert_eq!(received + later, seam, "the seam share, once");
    }
    let shown = protocol(&server, &hacked).await;
    assert_eq!(shown["status"], "resolved");
    assert_eq!(shown["seam_share"]["lamports"], seam);
    assert_eq!(shown["treasury_share"]["lamports"], treasury_share);
    assert_eq!(shown["protocol_share"], Value::Null, "a community shield's");
    assert_eq!(shown["finalizes_at"], Value::Null);

    // Nobody resolved the other coverage: once its resolution delay has passed the keeper
    // sends it to refund, and its backer takes the principal back.
    advance(&ledger, &clock, RESOLUTION_DELAY_SECS).await;
    eventually("the keeper to refund the unresolved coverage", || async {
        protocol(&server, &silent).await["status"] == "refunding"
    })
    .await;
    assert_eq!(
        ledger.harness.lock().await.coverage(&silent).await.status,
        CoverageStatus::Refunding
    );
    assert_eq!(
        protocol(&server, &silent).await["refundable_at"],
        Value::Null
    );
    let before = ledger
        .harness
        .lock()
        .await
        .lamports(silent_backer.pubkey())
        .await;
    let refund = shield::claim(
        shield::Claim::Refund,
        silent_backer.pubkey(),
        &silent,
        ShieldSide::Safe,
    );
    run_indexed(&server, &ledger, &[refund], &[&silent_backer]).await;
    let after = ledger
        .harness
        .lock()
        .await
        .lamports(silent_backer.pubkey())
        .await;
    assert_eq!(after - before, SOL, "the principal back, exactly");

    // A run with nothing due sends nothing and sleeps, no longer than RECHECK_SECS. (Counted
    // at the ledger, not by the keeper's balance: the Echo Pool keeper pays with the same key
    // and may close an epoch meanwhile.)
    let (outcome, sent) = run_keeper(&server, &ledger, &clock, &keeper).await;
    assert!(
        matches!(outcome, JobOutcome::Later(at) if at == clock.now() + RECHECK_SECS),
        "{outcome:?}"
    );
    assert_eq!(sent, 0, "nothing is due");
}
