//! The money path over HTTP against solana-program-test: prepare a shield backing, sign it as
//! the wallet, process it on the bank, confirm it, and read the protocol's pool state back,
//! indexed from the ledger by the confirm's follow-up job. Replays, failed and foreign
//! transactions, and signatures the ledger never saw are refused without recording anything.

mod common;

use std::sync::Arc;

use common::bank::BankLedger;
use common::{chain, TestServer};
use integration_tests::harness::{HarnessOptions, SOL};
use narrative_api::chain::ledger::Ledger;
use narrative_api::clock::{ManualClock, SharedClock, SystemClock};
use narrative_sdk::{pda, shield, Pubkey};
use narrative_store::entities::{jobs, prepared_transactions, shield_positions};
use reqwest::StatusCode;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::{json, Value};
use shield_vault::state::{ShieldKind, ShieldSide};
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction::Transaction;

struct Flow {
    server: TestServer,
    ledger: Arc<BankLedger>,
    protocol_id: [u8; 32],
    wallet: Keypair,
}

impl Flow {
    /// A bank at the wall clock (the api checks coverage windows against it) with one open
    /// community shield, indexed into the api's store, and a wallet that accepted the terms.
    async fn start() -> Flow {
        Flow::start_at(Arc::new(SystemClock)).await
    }

    /// [`Flow::start`] with the server's time from `clock`, the bank starting at it.
    async fn start_at(clock: SharedClock) -> Flow {
        let (server, ledger) =
            chain::start_on_bank_at(clock, HarnessOptions::default(), |_, _| {}).await;
        let (protocol_id, wallet) = {
            let mut h = ledger.harness.lock().await;
            let admin = h.admin.insecure_clone();
            let protocol_id = h
                .open_shield(ShieldKind::Community, Pubkey::default(), 30, 0, &admin)
                .await
                .expect("shield opens");
            (protocol_id, h.wallets[0].insecure_clone())
        };
        let flow = Flow {
            server,
            ledger,
            protocol_id,
            wallet,
        };
        flow.index(&[pda::shield::coverage(&protocol_id)]).await;
        flow.accept_terms(&flow.wallet).await;
        flow
    }

    async fn index(&self, addresses: &[Pubkey]) {
        chain::index_from_bank(&self.server, &self.ledger, addresses).await;
    }

    async fn accept_terms(&self, wallet: &Keypair) {
        let now = self.server.clock.now();
        let message = format!(
            "narrative-market-service:shield-terms:2026-11:{}:issued-at:{now}",
            wallet.pubkey()
        );
        let signature = wallet.sign_message(message.as_bytes());
        let (status, body) = self
            .server
            .post(
                "/v1/shield/terms-ack",
                &json!({"wallet": wallet.pubkey().to_string(), "signature": signature.to_string(),
                        "issued_at": now}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    fn protocol_hex(&self) -> String {
        hex::encode(self.protocol_id)
    }

    async fn prepare(&self, wallet: &Keypair, side: &str, amount_sol: f64) -> (StatusCode, Value) {
        self.server
            .post(
                "/v1/shield/back",
                &json!({
                    "wallet": wallet.pubkey().to_string(),
                    "protocol_id": self.protocol_hex(),
                    "side": side,
                    "amount_sol": amount_sol,
                }),
            )
            .await
    }

    async fn confirm(&self, prepared_id: &str, signature: &str) -> (StatusCode, Value) {
        self.server
            .post(
                "/v1/shield/back/confirm",
                &json!({"prepared_id": prepared_id, "signature": signature}),
            )
            .await
    }

    async fn protocol(&self) -> Value {
        let (status, body) = self
            .server
            .get(&format!("/v1/shield/protocols/{}", self.protocol_hex()))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["protocol"].clone()
    }

    async fn positions(&self) -> u64 {
        shield_positions::Entity::find()
            .count(self.server.db.store.db())
            .await
            .unwrap()
    }

    /// Follow-up jobs queued (the perpetual ones are always there).
    async fn jobs(&self) -> u64 {
        jobs::Entity::find()
            .filter(jobs::Column::Singleton.is_null())
            .count(self.server.db.store.db())
            .await
            .unwrap()
    }
}

#[tokio::test]
async fn a_backing_prepared_signed_processed_and_confirmed_shows_in_the_pool() {
    let flow = Flow::start().await;
    let before = flow.protocol().await;
    assert_eq!(before["safe"]["principal_lamports"], 0);
    assert_eq!(before["backing_open"], true);

    let (status, prepared) = flow.prepare(&flow.wallet, "safe", 2.5).await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(prepared["ok"], true);
    assert_eq!(prepared["status"], "ready_to_confirm");
    assert_eq!(prepared["amount_lamports"], 2_500_000_000u64);
    let tx = chain::sign(&prepared, &flow.wallet);
    // Exactly the sdk's back_shield, and the memo of the prepared id.
    let expected = shield::back_shield(
        flow.wallet.pubkey(),
        &flow.protocol_id,
        shield_vault::state::ShieldSide::Safe,
        2_500_000_000,
    );
    assert_eq!(tx.message.instructions.len(), 2);
    assert_eq!(tx.message.instructions[0].data, expected.data);
    let memo = &tx.message.instructions[1];
    assert_eq!(
        tx.message.account_keys[usize::from(memo.program_id_index)],
        narrative_sdk::memo::MEMO_PROGRAM
    );
    assert_eq!(
        memo.data,
        prepared["prepared_id"].as_str().unwrap().as_bytes()
    );

    let signature = flow.ledger.process(tx).await.expect("backing lands");
    let (status, confirmed) = flow
        .confirm(
            prepared["prepared_id"].as_str().unwrap(),
            &signature.to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["status"], "confirmed");
    assert_eq!(confirmed["wallet"], flow.wallet.pubkey().to_string());
    assert_eq!(confirmed["side"], "safe");
    assert_eq!(confirmed["amount_lamports"], 2_500_000_000i64);
    assert_eq!(confirmed["window"], "discovery");

    // The follow-up job reads the changed accounts from the ledger into the store.
    common::eventually("the pool to show the backing", || async {
        flow.protocol().await["safe"]["principal_lamports"] == 2_500_000_000i64
    })
    .await;
    let after = flow.protocol().await;
    assert_eq!(after["safe"]["backers"], 1);
    assert_eq!(after["exploit"]["principal_lamports"], 0);
    assert_eq!(after["total_backed_sol"], 2.5);
    let on_chain = flow
        .ledger
        .harness
        .lock()
        .await
        .coverage(&flow.protocol_id)
        .await;
    assert_eq!(on_chain.safe.principal, 2_500_000_000);

    // Replaying the confirm answers the same and records nothing more.
    let jobs_before = flow.jobs().await;
    let (status, replay) = flow
        .confirm(
            prepared["prepared_id"].as_str().unwrap(),
            &signature.to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{replay}");
    assert_eq!(replay["position_id"], confirmed["position_id"]);
    assert_eq!(flow.positions().await, 1);
    assert_eq!(flow.jobs().await, jobs_before);

    // The same signature cannot confirm another prepared backing.
    let (_, second) = flow.prepare(&flow.wallet, "safe", 1.0).await;
    let (status, body) = flow
        .confirm(
            second["prepared_id"].as_str().unwrap(),
            &signature.to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"], "signature_already_used");
    flow.server.stop().await;
}

/// The window is the one the program counted the backing in: when its block was produced, not
/// when the wallet got round to confirming it.
#[tokio::test]
async fn a_backing_keeps_the_window_it_landed_in_however_late_it_is_confirmed() {
    let clock = ManualClock::at_system_time();
    let flow = Flow::start_at(clock.clone()).await;
    let coverage = {
        let mut h = flow.ledger.harness.lock().await;
        h.coverage(&flow.protocol_id).await
    };
    let discovery_ends = coverage.discovery_ends_at().unwrap();
    let land_at = |at: i64| {
        let (flow, clock) = (&flow, &clock);
        async move {
            clock.set(at);
            flow.ledger.harness.lock().await.warp_to(at).await;
            let (status, prepared) = flow.prepare(&flow.wallet, "safe", 1.0).await;
            assert_eq!(status, StatusCode::OK, "{prepared}");
            let tx = chain::sign(&prepared, &flow.wallet);
            let signature = flow.ledger.process(tx).await.expect("backing lands");
            (
                prepared["prepared_id"].as_str().unwrap().to_owned(),
                signature,
            )
        }
    };

    // Landed 30 s before discovery ends, confirmed 30 s after.
    let (early, early_signature) = land_at(discovery_ends - 30).await;
    clock.set(discovery_ends + 30);
    let (status, confirmed) = flow.confirm(&early, &early_signature.to_string()).await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["window"], "discovery");
    let on_chain = {
        let mut h = flow.ledger.harness.lock().await;
        h.shield_backing(&flow.protocol_id, &flow.wallet.pubkey(), ShieldSide::Safe)
            .await
    };
    assert_eq!(on_chain.discovery_lamports, SOL);

    // Landed 5 s after it ended, confirmed at once.
    let (late, late_signature) = land_at(discovery_ends + 35).await;
    let (status, confirmed) = flow.confirm(&late, &late_signature.to_string()).await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["window"], "standard");
    let windows: Vec<String> = shield_positions::Entity::find()
        .all(flow.server.db.store.db())
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.window)
        .collect();
    assert_eq!(windows.len(), 2);
    assert!(windows.contains(&"discovery".to_owned()) && windows.contains(&"standard".to_owned()));
    flow.server.stop().await;
}

#[tokio::test]
async fn failed_foreign_and_unknown_transactions_are_refused_and_record_nothing() {
    let flow = Flow::start().await;
    let (_, prepared) = flow.prepare(&flow.wallet, "exploit", 1.0).await;
    let id = prepared["prepared_id"].as_str().unwrap().to_owned();

    // Failed on chain: the program is paused when the backing arrives.
    {
        let mut h = flow.ledger.harness.lock().await;
        let admin = h.admin.insecure_clone();
        h.process(&[shield::pause_program(admin.pubkey(), true)], &[&admin])
            .await
            .unwrap();
    }
    let failed = chain::sign(&prepared, &flow.wallet);
    let failed_signature = failed.signatures[0];
    assert!(flow.ledger.process(failed).await.is_err());
    let (status, body) = flow.confirm(&id, &failed_signature.to_string()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"], "transaction_failed");

    // Foreign: a transaction of the wallet's that is not the prepared one.
    let foreign = {
        let treasury = flow.ledger.harness.lock().await.treasury;
        let ix = anchor_lang::solana_program::system_instruction::transfer(
            &flow.wallet.pubkey(),
            &treasury,
            SOL,
        );
        let blockhash = flow.ledger.latest_blockhash().await.unwrap();
        Transaction::new_signed_with_payer(
            &[ix],
            Some(&flow.wallet.pubkey()),
            &[&flow.wallet],
            blockhash,
        )
    };
    let foreign_signature = flow.ledger.process(foreign).await.unwrap();
    let (status, body) = flow.confirm(&id, &foreign_signature.to_string()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"], "transaction_mismatch");

    // Never sent: the ledger does not know it (after the configured wait).
    let unknown = solana_signature::Signature::from([9u8; 64]);
    let response = flow
        .server
        .http
        .post(flow.server.url("/v1/shield/back/confirm"))
        .json(&json!({"prepared_id": id, "signature": unknown.to_string()}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()["retry-after"], "2");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], "transaction_pending");

    // Malformed input and unknown ids.
    let (status, body) = flow.confirm(&id, "not-a-signature").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["ok"], false);
    let (status, _) = flow
        .confirm(
            &uuid::Uuid::new_v4().to_string(),
            &foreign_signature.to_string(),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    assert_eq!(flow.positions().await, 0);
    assert_eq!(flow.jobs().await, 0);
    let stored = prepared_transactions::Entity::find_by_id(id)
        .one(flow.server.db.store.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.status.as_str(), stored.signature),
        ("prepared", None)
    );
    flow.server.stop().await;
}

#[tokio::test]
async fn backing_needs_terms_bounds_an_open_period_and_a_running_shield() {
    let flow = Flow::start().await;
    let stranger = Keypair::new();
    let (status, body) = flow.prepare(&stranger, "safe", 1.0).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"], "terms_not_accepted");
    assert_eq!(body["terms_version"], "2026-11");

    for amount in [0.05, 100.5] {
        let (status, body) = flow.prepare(&flow.wallet, "safe", amount).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(
            body,
            json!({"ok": false, "error": "invalid request body: amount_sol: must be a number of SOL from 0.1 to 100"})
        );
    }
    for (amount, ok) in [(0.1, true), (100.0, true)] {
        let (status, body) = flow.prepare(&flow.wallet, "safe", amount).await;
        assert_eq!(status == StatusCode::OK, ok, "{body}");
    }
    let (status, body) = flow.prepare(&flow.wallet, "maybe", 1.0).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        body["error"],
        "invalid request body: side: must be one of safe, exploit"
    );

    let (status, body) = flow
        .server
        .post(
            "/v1/shield/back",
            &json!({"wallet": flow.wallet.pubkey().to_string(), "protocol_id": "ab".repeat(32), "side": "safe", "amount_sol": 1.0}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    let (status, _) = flow
        .server
        .admin_post(
            "/v1/admin/system/halt",
            &json!({"component": "shield", "halted": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = flow.prepare(&flow.wallet, "safe", 1.0).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "system_halted");
    flow.server.stop().await;
}

/// Protocol cover resolution (spec 5.6): the operator has the service's oracle key vote on a
/// coverage whose period ended; the vote lands on the ledger (threshold 1: the outcome is
/// proposed) and the re-read coverage answers; the program refuses a second vote.
#[tokio::test]
async fn an_operator_has_the_service_oracle_vote_on_an_ended_coverage() {
    let clock = narrative_api::clock::ManualClock::at_system_time();
    let (server, ledger) = chain::start_on_bank_at(
        clock.clone(),
        integration_tests::harness::HarnessOptions::default(),
        |h, c| {
            c.oracle_keypair = Some(bs58::encode(h.oracles[0].to_bytes()).into_string().into());
        },
    )
    .await;
    let (protocol_id, oracle) = {
        let mut h = ledger.harness.lock().await;
        let admin = h.admin.insecure_clone();
        let id = h
            .open_shield(ShieldKind::Community, Pubkey::default(), 30, 0, &admin)
            .await
            .expect("shield opens");
        (id, h.oracles[0].pubkey())
    };
    let path = format!("/v1/shield/protocols/{}/resolve", hex::encode(protocol_id));
    let vote = json!({"vote": "exploit"});
    let refused = server.post(&path, &vote).await;
    assert_eq!(refused.0, StatusCode::UNAUTHORIZED, "the admin pair");

    let (status, early) = server.admin_post(&path, &vote).await;
    assert_eq!(status, StatusCode::CONFLICT, "{early}");
    assert_eq!(early["error"], "coverage_not_ended");

    let month = 31 * 86_400;
    clock.advance(month);
    ledger.harness.lock().await.warp_by(month).await;
    let (status, voted) = server.admin_post(&path, &vote).await;
    assert_eq!(status, StatusCode::OK, "{voted}");
    assert_eq!(voted["vote"], "exploit");
    assert_eq!(voted["oracle"], oracle.to_string());
    assert_eq!(voted["exploit_votes"], 1);
    assert_eq!(voted["safe_votes"], 0);
    assert_eq!(
        voted["outcome"], "exploit",
        "threshold 1 proposes the outcome"
    );
    let coverage = ledger.harness.lock().await.coverage(&protocol_id).await;
    assert_eq!(coverage.exploit_votes, 1);

    let (status, again) = server.admin_post(&path, &json!({"vote": "safe"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    assert_eq!(again["error"], "vote_refused");
    let unknown = format!("/v1/shield/protocols/{}/resolve", "ab".repeat(32));
    let (status, _) = server.admin_post(&unknown, &vote).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let logged = narrative_store::entities::admin_actions::Entity::find()
        .all(server.db.store.db())
        .await
        .unwrap();
    assert_eq!(logged.len(), 1, "only the vote that landed is logged");
    assert_eq!(logged[0].action, "shield.resolve");
    assert_eq!(logged[0].subject, hex::encode(protocol_id));
    assert_eq!(logged[0].detail["signature"], voted["signature"]);
    server.stop().await;

    // Without an oracle key, or with the shield halted, nothing is sent.
    let keyless = TestServer::start(|_| {}).await;
    let (status, body) = keyless.admin_post(&path, &vote).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "oracle_not_configured");
    let (status, _) = keyless
        .admin_post(
            "/v1/admin/system/halt",
            &json!({"component": "shield", "halted": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = keyless.admin_post(&path, &vote).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "system_halted");
    keyless.stop().await;
}
