//! The response cache never serves an answer a commit changed: a confirmed backing, an indexed
//! account change and an admin halt are in the very next read, from this api process and from a
//! second one sharing the database; a seeded run interleaving writes and reads on both finds no
//! stale answer; an answer that changes with time is not served past its moment; and clients get
//! an ETag and `304 Not Modified`. On SQLite and on Postgres.

mod common;

use std::sync::Arc;

use common::bank::BankLedger;
use common::{chain, TestServer};
use integration_tests::harness::{HarnessOptions, SOL};
use narrative_api::clock::ManualClock;
use narrative_sdk::{pda, Pubkey};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reqwest::{header, StatusCode};
use sea_orm::ConnectionTrait;
use serde_json::{json, Value};
use shield_vault::state::{ShieldKind, ShieldSide};
use solana_keypair::Keypair;
use solana_signer::Signer;

/// A bank with one open community shield indexed into a server's store.
async fn shield_on_bank(
    clock: Option<Arc<ManualClock>>,
) -> (TestServer, Arc<BankLedger>, [u8; 32]) {
    let (server, ledger) = match clock {
        Some(clock) => chain::start_on_bank_at(clock, HarnessOptions::default(), |_, _| {}).await,
        None => chain::start_on_bank(|_| {}).await,
    };
    let protocol_id = {
        let mut h = ledger.harness.lock().await;
        let admin = h.admin.insecure_clone();
        h.open_shield(ShieldKind::Community, Pubkey::default(), 30, 0, &admin)
            .await
            .expect("shield opens")
    };
    chain::index_from_bank(&server, &ledger, &[pda::shield::coverage(&protocol_id)]).await;
    (server, ledger, protocol_id)
}

async fn get(http: &reqwest::Client, url: &str) -> Value {
    let response = http.get(url).send().await.expect("request");
    assert_eq!(response.status(), StatusCode::OK, "{url}");
    response.json().await.expect("json")
}

fn safe_principal(detail: &Value) -> u64 {
    detail["protocol"]["safe"]["principal_lamports"]
        .as_u64()
        .unwrap()
}

fn halted(status: &Value) -> bool {
    status["components"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["name"] == "shield" && c["halted"] == true)
}

/// An operator halts (or resumes) the shield through the api at `base`.
async fn set_shield_halt(http: &reqwest::Client, base: &str, halted: bool) {
    let response = http
        .post(format!("{base}/v1/admin/system/halt"))
        .header("x-admin-wallet", common::ADMIN_WALLET)
        .header("x-admin-secret", common::ADMIN_SECRET)
        .json(&json!({"component": "shield", "halted": halted}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

/// A shield backing of `amount` by `wallet` outside the api, and the coverage indexed.
async fn back_outside(
    server: &TestServer,
    ledger: &BankLedger,
    protocol_id: &[u8; 32],
    wallet: &Keypair,
    amount: u64,
) {
    {
        let mut h = ledger.harness.lock().await;
        h.back_shield(wallet, protocol_id, ShieldSide::Safe, amount)
            .await
            .expect("backed");
        // A slot of its own, as each change has on chain (the store keeps the newer write).
        h.next_slot().await;
    }
    chain::index_from_bank(server, ledger, &[pda::shield::coverage(protocol_id)]).await;
}

#[tokio::test]
async fn every_kind_of_write_is_in_the_next_read_of_both_processes() {
    let (server, ledger, protocol_id) = shield_on_bank(None).await;
    let beside = server.start_beside_with_background(|_| {}).await;
    let detail_path = format!("/v1/shield/protocols/{}", hex::encode(protocol_id));
    let (here, there) = (
        server.url(&detail_path),
        format!("{}{detail_path}", beside.base),
    );
    let http = reqwest::Client::new();
    // Both processes have the answer cached.
    assert_eq!(safe_principal(&get(&http, &here).await), 0);
    assert_eq!(safe_principal(&get(&http, &there).await), 0);

    // 1. A backing confirmed through this process's api.
    let wallet = ledger.harness.lock().await.wallets[0].insecure_clone();
    let now = server.clock.now();
    let message = format!(
        "narrative-market-service:shield-terms:2026-11:{}:issued-at:{now}",
        wallet.pubkey()
    );
    let (status, _) = server
        .post(
            "/v1/shield/terms-ack",
            &json!({"wallet": wallet.pubkey().to_string(),
                    "signature": wallet.sign_message(message.as_bytes()).to_string(),
                    "issued_at": now}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, prepared) = server
        .post(
            "/v1/shield/back",
            &json!({"wallet": wallet.pubkey().to_string(), "protocol_id": hex::encode(protocol_id),
                    "side": "safe", "amount_sol": 1.5}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    let (status, confirmed) = chain::sign_send_confirm(
        &server,
        &ledger,
        &prepared,
        &wallet,
        "/v1/shield/back/confirm",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(safe_principal(&get(&http, &here).await), 1_500_000_000);
    assert_eq!(safe_principal(&get(&http, &there).await), 1_500_000_000);

    // 2. An account change the indexer writes.
    let other = ledger.harness.lock().await.wallets[1].insecure_clone();
    back_outside(&server, &ledger, &protocol_id, &other, SOL / 2).await;
    assert_eq!(safe_principal(&get(&http, &there).await), 2_000_000_000);
    assert_eq!(safe_principal(&get(&http, &here).await), 2_000_000_000);

    // 3. An operator's halt, through the other process.
    let status_path = "/v1/system/status";
    assert!(!halted(&get(&http, &server.url(status_path)).await));
    assert!(!halted(
        &get(&http, &format!("{}{status_path}", beside.base)).await
    ));
    set_shield_halt(&http, &beside.base, true).await;
    assert!(halted(&get(&http, &server.url(status_path)).await));
    assert!(halted(
        &get(&http, &format!("{}{status_path}", beside.base)).await
    ));
    beside.stop().await;
    server.stop().await;
}

#[tokio::test]
async fn answers_carry_an_etag_and_an_unchanged_one_is_not_sent_again() {
    let (server, ledger, protocol_id) = shield_on_bank(None).await;
    let url = server.url("/v1/shield/protocols?limit=10&offset=0");
    let first = server.http.get(&url).send().await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    let etag = first.headers()[header::ETAG].clone();
    assert_eq!(first.headers()[header::CACHE_CONTROL], "no-cache");
    assert!(first.headers().get("x-fresh-until").is_none(), "internal");
    let body: Value = first.json().await.unwrap();
    let unchanged = server
        .http
        .get(&url)
        .header(header::IF_NONE_MATCH, etag.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(unchanged.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(unchanged.headers()[header::ETAG], etag);
    assert!(unchanged.bytes().await.unwrap().is_empty());
    // The same answer whatever the order of the parameters, and the same ETag.
    let reordered = server.url("/v1/shield/protocols?offset=0&limit=10");
    let again = server
        .http
        .get(&reordered)
        .header(header::IF_NONE_MATCH, etag.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(again.headers()[header::ETAG], etag);
    let again = server.http.get(&reordered).send().await.unwrap();
    assert_eq!(again.headers()[header::ETAG], etag);
    assert_eq!(again.json::<Value>().await.unwrap(), body);

    // After a change the old ETag no longer matches.
    let wallet = ledger.harness.lock().await.wallets[0].insecure_clone();
    back_outside(&server, &ledger, &protocol_id, &wallet, SOL).await;
    let changed = server
        .http
        .get(&url)
        .header(header::IF_NONE_MATCH, etag.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(changed.status(), StatusCode::OK);
    assert_ne!(changed.headers()[header::ETAG], etag);
    let body: Value = changed.json().await.unwrap();
    assert_eq!(body["protocols"][0]["safe"]["principal_lamports"], SOL);
    // Errors are not cached, and carry no ETag.
    let missing = server
        .http
        .get(server.url(&format!("/v1/shield/protocols/{}", "ab".repeat(32))))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert!(missing.headers().get(header::ETAG).is_none());
    server.stop().await;
}

#[tokio::test]
async fn an_answer_that_changes_with_time_is_not_served_past_its_moment() {
    let clock = ManualClock::at_system_time();
    let (server, ledger, protocol_id) = shield_on_bank(Some(clock.clone())).await;
    let path = format!("/v1/shield/protocols/{}", hex::encode(protocol_id));
    let (_, open) = server.get(&path).await;
    assert_eq!(open["protocol"]["backing_open"], true, "{open}");
    let period_end = {
        let mut h = ledger.harness.lock().await;
        h.coverage(&protocol_id).await.period_end
    };
    // Cached while open; served again until the period ends, not after.
    clock.set(period_end - 1);
    assert_eq!(server.get(&path).await.1["protocol"]["backing_open"], true);
    clock.set(period_end);
    assert_eq!(server.get(&path).await.1["protocol"]["backing_open"], false);
    server.stop().await;
}

/// Seeded interleavings of writes (backings indexed, halts through either process) and reads
/// (either process): every read answers the last committed state. `FRESHNESS_SEED` replays one.
#[tokio::test]
async fn a_cached_answer_is_never_served_after_its_invalidating_commit() {
    let seed: u64 = std::env::var("FRESHNESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    let steps: usize = std::env::var("FRESHNESS_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    let mut rng = StdRng::seed_from_u64(seed);
    let (server, ledger, protocol_id) = shield_on_bank(None).await;
    let beside = server.start_beside_with_background(|_| {}).await;
    let bases = [server.base.clone(), beside.base.clone()];
    let detail = format!("/v1/shield/protocols/{}", hex::encode(protocol_id));
    let http = reqwest::Client::new();
    let wallets: Vec<Keypair> = {
        let h = ledger.harness.lock().await;
        h.wallets.iter().map(|w| w.insecure_clone()).collect()
    };
    let (mut principal, mut is_halted) = (0u64, false);
    for step in 0..steps {
        let base = &bases[rng.gen_range(0..2)];
        match rng.gen_range(0..4) {
            0 => {
                let wallet = &wallets[rng.gen_range(0..wallets.len())];
                // 0.1 to 0.5 SOL; a wallet's position stays under the 100 SOL bound.
                let amount = rng.gen_range(1..=5) * SOL / 10;
                back_outside(&server, &ledger, &protocol_id, wallet, amount).await;
                principal += amount;
            }
            1 => {
                is_halted = !is_halted;
                set_shield_halt(&http, base, is_halted).await;
            }
            2 => {
                let read = get(&http, &format!("{base}{detail}")).await;
                assert_eq!(
                    safe_principal(&read),
                    principal,
                    "seed {seed}, step {step}: a stale coverage from {base}"
                );
            }
            _ => {
                let read = get(&http, &format!("{base}/v1/system/status")).await;
                assert_eq!(
                    halted(&read),
                    is_halted,
                    "seed {seed}, step {step}: a stale status from {base}"
                );
            }
        }
    }
    beside.stop().await;
    server.stop().await;
}

/// Postgres: a commit made through one process is announced to the other, which drops the
/// answers it made stale at once, before anyone reads them again (SQLite has no channel between
/// processes; there the generations alone keep answers fresh, as the tests above show).
#[tokio::test]
async fn a_commit_elsewhere_drops_the_stale_answers_without_a_read() {
    let (server, _ledger, protocol_id) = shield_on_bank(None).await;
    if !server.db.is_postgres() {
        return;
    }
    let beside = server.start_beside_with_background(|_| {}).await;
    let http = reqwest::Client::new();
    let listing = format!("{}/v1/shield/protocols", beside.base);
    let detail = format!(
        "{}/v1/shield/protocols/{}",
        beside.base,
        hex::encode(protocol_id)
    );
    let status = format!("{}/v1/system/status", beside.base);
    for url in [&listing, &detail, &status] {
        get(&http, url).await;
    }
    let metrics = beside.get_text("/metrics").await;
    assert_eq!(
        common::sample(&metrics, "http_cache_entries"),
        Some(3.0),
        "{metrics}"
    );

    // A halt through the first process changes the system topic only: the status goes, the
    // shield answers stay.
    set_shield_halt(&http, &server.base, true).await;
    let metrics = common::eventually_some("the status answer dropped", || async {
        let metrics = beside.get_text("/metrics").await;
        (common::sample(&metrics, "http_cache_entries") == Some(2.0)).then_some(metrics)
    })
    .await;
    assert_eq!(
        common::sample(&metrics, "http_cache_evictions_total{reason=\"change\"}"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        common::sample(&metrics, "http_cache_requests_total{outcome=\"miss\"}"),
        Some(3.0)
    );

    // A write no api process made (an operator's SQL, the standalone indexer): the same.
    server
        .db
        .store
        .db()
        .execute_unprepared("UPDATE shield_coverages SET safe_votes = safe_votes")
        .await
        .unwrap();
    common::eventually("the shield answers dropped", || async {
        common::sample(&beside.get_text("/metrics").await, "http_cache_entries") == Some(0.0)
    })
    .await;
    assert!(halted(&get(&http, &status).await));
    beside.stop().await;
    server.stop().await;
}

/// A shield prepare for `wallet` through the api at `base`.
async fn prepare(
    http: &reqwest::Client,
    base: &str,
    wallet: &Keypair,
    protocol_id: &[u8; 32],
) -> (StatusCode, Value) {
    let response = http
        .post(format!("{base}/v1/shield/back"))
        .json(&json!({
            "wallet": wallet.pubkey().to_string(),
            "protocol_id": hex::encode(protocol_id),
            "side": "safe",
            "amount_sol": 1.0,
        }))
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap())
}

async fn prepared_rows(server: &TestServer) -> u64 {
    use sea_orm::{EntityTrait, PaginatorTrait};
    narrative_store::entities::prepared_transactions::Entity::find()
        .count(server.db.store.db())
        .await
        .unwrap()
}

/// A prepare checks the halt flag, the terms and the coverage from memory and verifies them at
/// its write: each still answers what was committed before it, in the other process or by SQL.
#[tokio::test]
async fn a_prepare_answers_the_terms_halts_and_coverages_committed_before_it() {
    let (server, _ledger, protocol_id) = shield_on_bank(None).await;
    let beside = server.start_beside_with_background(|_| {}).await;
    let http = reqwest::Client::new();
    let wallet = Keypair::new();

    let (status, body) = prepare(&http, &server.base, &wallet, &protocol_id).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"], "terms_not_accepted");

    // Terms acknowledged through the other process: the very next prepare here is accepted
    // (the refusal kept in memory is checked again after the barrier).
    let now = server.clock.now();
    let message = format!(
        "narrative-market-service:shield-terms:2026-11:{}:issued-at:{now}",
        wallet.pubkey()
    );
    let acknowledged = http
        .post(format!("{}/v1/shield/terms-ack", beside.base))
        .json(&json!({
            "wallet": wallet.pubkey().to_string(),
            "signature": wallet.sign_message(message.as_bytes()).to_string(),
            "issued_at": now,
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(acknowledged.status(), StatusCode::OK);
    let (status, body) = prepare(&http, &server.base, &wallet, &protocol_id).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(prepared_rows(&server).await, 1);

    // Halted, then resumed, through the other process: each in the next prepare here.
    set_shield_halt(&http, &beside.base, true).await;
    let (status, body) = prepare(&http, &server.base, &wallet, &protocol_id).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "system_halted");
    set_shield_halt(&http, &beside.base, false).await;
    let (status, body) = prepare(&http, &server.base, &wallet, &protocol_id).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(prepared_rows(&server).await, 2);

    // The coverage closed by a write no api process made: refused at once, and nothing of the
    // refused prepare is left in the store.
    server
        .db
        .store
        .db()
        .execute_unprepared("UPDATE shield_coverages SET status = 'resolved'")
        .await
        .unwrap();
    let (status, body) = prepare(&http, &server.base, &wallet, &protocol_id).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"], "coverage_not_open");
    assert_eq!(prepared_rows(&server).await, 2);
    beside.stop().await;
    server.stop().await;
}

#[tokio::test]
async fn a_block_committed_anywhere_refuses_the_next_prepare_and_leaves_no_row() {
    let (server, _ledger, protocol_id) = shield_on_bank(None).await;
    let http = reqwest::Client::new();
    let wallet = Keypair::new();
    let address = wallet.pubkey().to_string();
    let now = server.clock.now();
    let message =
        format!("narrative-market-service:shield-terms:2026-11:{address}:issued-at:{now}");
    let (status, _) = server
        .post(
            "/v1/shield/terms-ack",
            &json!({"wallet": address,
                    "signature": wallet.sign_message(message.as_bytes()).to_string(),
                    "issued_at": now}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    // Accepted, and the wallet's standing is now kept in memory here.
    let (status, body) = prepare(&http, &server.base, &wallet, &protocol_id).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(prepared_rows(&server).await, 1);

    // Screening in the other process flags it: the next prepare here is refused, although
    // the generation this process knows is older than the block (the write sees the new one
    // and takes its row back).
    let flagged = address.clone();
    let beside = server
        .start_beside_with_background(move |c| c.screening_blocklist = vec![flagged])
        .await;
    let screened: Value = http
        .post(format!("{}/v1/kyc/screen", beside.base))
        .json(&json!({"wallet": address}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(screened["blocked"], true, "{screened}");
    let (status, body) = prepare(&http, &server.base, &wallet, &protocol_id).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"], "wallet_blocked");
    assert_eq!(
        prepared_rows(&server).await,
        1,
        "no row of the refused prepare is left"
    );

    // Lifted and blocked again by an operator's SQL: each shows in the next prepare.
    let db = server.db.store.db();
    db.execute_unprepared("UPDATE blocked_wallets SET lifted_at = 1, lifted_by = 'sql'")
        .await
        .unwrap();
    let (status, body) = prepare(&http, &server.base, &wallet, &protocol_id).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(prepared_rows(&server).await, 2);
    db.execute_unprepared("UPDATE blocked_wallets SET lifted_at = NULL, lifted_by = NULL")
        .await
        .unwrap();
    let (status, body) = prepare(&http, &server.base, &wallet, &protocol_id).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"], "wallet_blocked");
    assert_eq!(prepared_rows(&server).await, 2);
    beside.stop().await;
    server.stop().await;
}
