//! Backing a narrative over HTTP against a program-test bank: the pre-market gate, the
//! minimum and side spelling, then a prepared `back_market` signed, processed and confirmed.

mod common;

use common::chain::{self, index_from_bank};
use common::eventually;
use narrative_sdk::binary_vault::state::MarketVariant;
use narrative_sdk::pda;
use reqwest::StatusCode;
use sea_orm::{ActiveModelTrait, IntoActiveModel};
use serde_json::json;
use solana_signer::Signer;

#[tokio::test]
async fn a_narrative_is_backed_through_a_prepared_transaction_once_open() {
    let (server, ledger) = chain::start_on_bank(|c| c.binary_markets_enabled = true).await;
    let (market_id, backer) = {
        let mut h = ledger.harness.lock().await;
        let creator = h.wallets[2].insecure_clone();
        let market_id = h
            .create_sol_market(&creator, MarketVariant::Yield, 7 * 86_400)
            .await;
        (market_id, h.wallets[0].insecure_clone())
    };
    index_from_bank(&server, &ledger, &[pda::binary::market(&market_id)]).await;
    let id = narrative_sdk::market_id::uuid_from_market_id(&market_id)
        .unwrap()
        .to_string();
    let now = chrono::Utc::now().timestamp();
    let row = {
        let uuid = uuid::Uuid::parse_str(&id).unwrap();
        let mut n = common::fixtures::narrative(
            &uuid,
            &backer.pubkey().to_string(),
            "Kestrel ships",
            "TECHNOLOGY",
            "open",
            now,
        );
        n.opens_at = Some(now + 3_600);
        n
    };
    row.clone()
        .into_active_model()
        .insert(server.db.store.db())
        .await
        .unwrap();
    let path = format!("/v1/narratives/{id}/back");
    let body = json!({"wallet_address": backer.pubkey().to_string(), "amount_sol": 0.5, "token_type": "SOL", "side": "true"});

    let (status, refused) = server.post(&path, &body).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["error"], "market_not_open");
    assert!(refused["opens_at"].as_str().unwrap().ends_with('Z'));

    // The market opens.
    let mut open = row.clone().into_active_model();
    open.opens_at = sea_orm::ActiveValue::Set(None);
    open.update(server.db.store.db()).await.unwrap();

    for (change, expected) in [
        (json!({"amount_sol": 0.005}), StatusCode::BAD_REQUEST),
        (json!({"side": "yes"}), StatusCode::BAD_REQUEST),
        (json!({"token_type": "USDC"}), StatusCode::BAD_REQUEST),
    ] {
        let mut bad = body.clone();
        for (k, v) in change.as_object().unwrap() {
            bad[k] = v.clone();
        }
        let (status, answer) = server.post(&path, &bad).await;
        assert_eq!(status, expected, "{change}: {answer}");
    }

    let (status, prepared) = server.post(&path, &body).await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(prepared["side"], "yes");
    let signature = ledger
        .process(chain::sign(&prepared, &backer))
        .await
        .expect("the backing lands")
        .to_string();
    let confirm = json!({"prepared_id": prepared["prepared_id"], "signature": signature});

    // A narrative backing is a write of `narratives` whichever route confirms it: halted, the
    // binary route (same transaction kind) refuses it too.
    let halt = |halted: bool| {
        let server = &server;
        async move {
            let (status, _) = server
                .admin_post(
                    "/v1/admin/system/halt",
                    &json!({"component": "narratives", "halted": halted}),
                )
                .await;
            assert_eq!(status, StatusCode::OK);
        }
    };
    halt(true).await;
    for route in [
        format!("{path}/confirm"),
        "/v1/binary/back/confirm".to_owned(),
    ] {
        let (status, refused) = server.post(&route, &confirm).await;
        assert_eq!(
            status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{route}: {refused}"
        );
        assert_eq!(refused["error"], "system_halted");
        assert_eq!(refused["component"], "narratives");
    }
    halt(false).await;
    let (status, confirmed) = server.post(&format!("{path}/confirm"), &confirm).await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    let on_chain = ledger.harness.lock().await.market(&market_id).await;
    assert_eq!(on_chain.yes_total, 500_000_000);
    eventually("the feed to show the backing", || async {
        let (_, body) = server.get(&format!("/v1/narratives/{id}")).await;
        body["narrative"]["sol_backed"] == 0.5
    })
    .await;
    server.stop().await;
}
