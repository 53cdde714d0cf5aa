//! Binary markets behind `BINARY_MARKETS_ENABLED`, against a program-test bank: a prepared
//! backing, signed, processed and confirmed, shows in the wallet's positions; after resolution
//! a prepared claim pays out. While the flag is off, every route answers 503 whatever it is sent.

mod common;

use common::chain::{self, index_from_bank};
use common::eventually;
use common::TestServer;
use integration_tests::harness::SOL;
use narrative_sdk::binary_vault::state::{MarketVariant, Side};
use narrative_sdk::pda;
use reqwest::StatusCode;
use serde_json::json;
use solana_signer::Signer;

#[tokio::test]
async fn every_binary_route_is_503_while_gated_even_with_a_malformed_body() {
    let server = TestServer::start(|_| {}).await;
    for path in [
        "/v1/binary/back",
        "/v1/binary/withdraw",
        "/v1/binary/back/confirm",
    ] {
        let response = server
            .http
            .post(server.url(path))
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE, "{path}");
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(body["error"], "coming_soon");
        assert_eq!(body["feature"], "coming_soon");
    }
}

/// A server with binary markets on, over a bank where wallet 2 created a Yield market that
/// closes in three days; the market's id.
async fn yield_market_on_bank() -> (
    TestServer,
    std::sync::Arc<common::bank::BankLedger>,
    [u8; 32],
) {
    let (server, ledger) = chain::start_on_bank(|c| c.binary_markets_enabled = true).await;
    let market_id = {
        let mut h = ledger.harness.lock().await;
        let creator = h.wallets[2].insecure_clone();
        h.create_sol_market(&creator, MarketVariant::Yield, 3 * 86_400)
            .await
    };
    (server, ledger, market_id)
}

/// Indexes the market as the indexer would; the id the api names it by.
async fn index_market(
    server: &TestServer,
    ledger: &common::bank::BankLedger,
    market_id: &[u8; 32],
) -> String {
    index_from_bank(server, ledger, &[pda::binary::market(market_id)]).await;
    narrative_sdk::market_id::uuid_from_market_id(market_id)
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn back_then_claim_through_prepared_transactions() {
    let (server, ledger, market_id) = yield_market_on_bank().await;
    let backer = {
        let mut h = ledger.harness.lock().await;
        let loser = h.wallets[3].insecure_clone();
        h.back(&loser, &market_id, Side::No, 2 * SOL).await.unwrap();
        h.wallets[0].insecure_clone()
    };
    let uuid = index_market(&server, &ledger, &market_id).await;

    let (status, body) = server
        .post("/v1/binary/back", &json!({"wallet": backer.pubkey().to_string(), "market_id": uuid, "side": "yes", "amount_sol": 0.001}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "below the minimum: {body}");
    let (status, prepared) = server
        .post("/v1/binary/back", &json!({"wallet": backer.pubkey().to_string(), "market_id": uuid, "side": "yes", "amount_sol": 1.5}))
        .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    // The backer signs and sends; then an operator halts binary markets before the confirm.
    let signature = ledger
        .process(chain::sign(&prepared, &backer))
        .await
        .expect("the backing lands")
        .to_string();
    let confirm = json!({"prepared_id": prepared["prepared_id"], "signature": signature});
    let halt = |halted: bool| {
        let server = &server;
        async move {
            let (status, _) = server
                .admin_post(
                    "/v1/admin/system/halt",
                    &json!({"component": "binary", "halted": halted}),
                )
                .await;
            assert_eq!(status, StatusCode::OK);
        }
    };
    halt(true).await;
    let (status, refused) = server.post("/v1/binary/back/confirm", &confirm).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    assert_eq!(refused["error"], "system_halted");
    // Nothing was recorded: once resumed, the same confirm records it.
    halt(false).await;
    let (status, confirmed) = server.post("/v1/binary/back/confirm", &confirm).await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["side"], "yes");
    // What is recorded still answers while halted: a replay writes nothing.
    halt(true).await;
    let (status, replayed) = server.post("/v1/binary/back/confirm", &confirm).await;
    assert_eq!(status, StatusCode::OK, "{replayed}");
    assert_eq!(replayed, confirmed);
    halt(false).await;

    let path = format!("/v1/binary/positions/{}", backer.pubkey());
    eventually("the backing to show in positions", || async {
        let (_, body) = server.get(&path).await;
        body["positions"][0]["amount_lamports"] == 1_500_000_000i64
    })
    .await;
    let (_, listing) = server.get("/v1/binary/narratives").await;
    assert_eq!(
        listing["markets"][0]["yes_total_lamports"],
        1_500_000_000i64
    );
    assert_eq!(listing["markets"][0]["no_total_lamports"], 2_000_000_000i64);

    // Not settled yet: nothing to claim.
    let withdraw = json!({"wallet": backer.pubkey().to_string(), "market_id": uuid, "side": "yes"});
    let (status, body) = server.post("/v1/binary/withdraw", &withdraw).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"], "market_not_settled");

    ledger
        .harness
        .lock()
        .await
        .resolve_and_finalize(&market_id, Side::Yes)
        .await;
    index_market(&server, &ledger, &market_id).await;
    let before = ledger.harness.lock().await.lamports(backer.pubkey()).await;
    let (status, prepared) = server.post("/v1/binary/withdraw", &withdraw).await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    let (status, confirmed) = chain::sign_send_confirm(
        &server,
        &ledger,
        &prepared,
        &backer,
        "/v1/binary/withdraw/confirm",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    let after = ledger.harness.lock().await.lamports(backer.pubkey()).await;
    assert!(
        after > before + SOL,
        "the winner got principal and winnings back: {before} → {after}"
    );
    eventually("the claim to show", || async {
        let (_, body) = server.get(&path).await;
        body["positions"][0]["claimed"] == true
    })
    .await;

    // The backer has no NO backing: there is nothing of theirs to claim on that side.
    let (status, _) = server
        .post(
            "/v1/binary/withdraw",
            &json!({"wallet": backer.pubkey().to_string(), "market_id": uuid, "side": "no"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    server.stop().await;
}

#[tokio::test]
async fn a_wallet_blocked_by_a_write_elsewhere_is_refused_its_next_prepare() {
    use sea_orm::{ConnectionTrait, EntityTrait, PaginatorTrait};
    let (server, ledger, market_id) = yield_market_on_bank().await;
    let backer = ledger.harness.lock().await.wallets[0].insecure_clone();
    let uuid = index_market(&server, &ledger, &market_id).await;
    let back = json!({"wallet": backer.pubkey().to_string(), "market_id": uuid, "side": "yes",
                      "amount_sol": 1.0});
    let db = server.db.store.db();
    let rows = || async {
        narrative_store::entities::prepared_transactions::Entity::find()
            .count(db)
            .await
            .unwrap()
    };
    let (status, body) = server.post("/v1/binary/back", &back).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(rows().await, 1);

    // Blocked by a write no api process made (no request here has seen its generation): the
    // prepare's write reads the new generation, checks again and takes its row back.
    db.execute_unprepared(&format!(
        "INSERT INTO blocked_wallets (wallet, reason, source, blocked_at) \
         VALUES ('{}', 'test', 'screening', 1)",
        backer.pubkey()
    ))
    .await
    .unwrap();
    let (status, body) = server.post("/v1/binary/back", &back).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"], "wallet_blocked");
    assert_eq!(rows().await, 1);
}
