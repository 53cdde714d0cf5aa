//! With `INDEXER_SOURCE=rpc` the api runs the indexer in its own process: a coverage account
//! served by a local JSON-RPC node appears in `GET /v1/shield/protocols`, and the indexer's
//! metrics are part of `/metrics`.

mod common;

use std::sync::Arc;

use anchor_lang::AccountSerialize;
use base64::Engine;
use common::TestServer;
use narrative_indexer::config::SourceKind;
use narrative_sdk::shield_vault::state::{Coverage, CoverageStatus, ShieldKind, SidePool};
use narrative_sdk::{ids, pda, Pubkey};
use poem::web::{Data, Json};
use poem::{handler, post, EndpointExt, Route};
use reqwest::StatusCode;
use serde_json::{json, Value};

struct Node {
    coverage: (Pubkey, Vec<u8>),
}

/// getProgramAccounts (with its context slot) and an empty signature history.
#[handler]
fn rpc(Json(request): Json<Value>, Data(node): Data<&Arc<Node>>) -> Json<Value> {
    let program = request["params"][0].as_str().unwrap_or_default();
    let result = match request["method"].as_str().unwrap_or_default() {
        "getProgramAccounts" => {
            let accounts = if program == ids::SHIELD_VAULT.to_string() {
                let (address, data) = &node.coverage;
                vec![json!({"pubkey": address.to_string(), "account": {
                    "lamports": 3_000_000, "owner": program, "executable": false, "rentEpoch": 0,
                    "space": data.len(),
                    "data": [base64::engine::general_purpose::STANDARD.encode(data), "base64"],
                }})]
            } else {
                vec![]
            };
            json!({"context": {"slot": 500}, "value": accounts})
        }
        "getSignaturesForAddress" => json!([]),
        _ => Value::Null,
    };
    Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
}

#[tokio::test]
async fn the_api_process_indexes_when_a_source_is_configured() {
    let now = chrono::Utc::now().timestamp();
    let protocol_id = [0x42u8; 32];
    let pool = |principal: u64| SidePool {
        principal,
        total_assets: principal,
        shares_total: principal as u128 * 1_000,
        ..Default::default()
    };
    let coverage = Coverage {
        protocol_id,
        kind: ShieldKind::Community,
        protocol_wallet: Pubkey::default(),
        period_days: 30,
        period_start: now - 3_600,
        period_end: now + 29 * 86_400,
        fee_lamports: 0,
        status: CoverageStatus::Active,
        outcome: None,
        safe_votes: 0,
        exploit_votes: 0,
        outcome_proposed_at: 0,
        finalized_at: 0,
        safe: pool(7_000_000_000),
        exploit: pool(1_000_000_000),
        winner_bonus_pool: 0,
        protocol_payout: 0,
        treasury_payout: 0,
        seam_payout: 0,
        principal_returned: 0,
        bonus_paid: 0,
        claims_count: 0,
        bump: 255,
        safe_vault_bump: 254,
        exploit_vault_bump: 253,
        seam_forwarded: false,
    };
    let mut data = Vec::new();
    coverage.try_serialize(&mut data).unwrap();
    let node = Arc::new(Node {
        coverage: (pda::shield::coverage(&protocol_id), data),
    });
    let node_url = common::serve_locally(Route::new().at("/", post(rpc)).data(node)).await;

    let server = TestServer::start(|c| {
        c.indexer_source = Some(SourceKind::Rpc);
        c.indexer_endpoint = Some(node_url.into());
    })
    .await;
    let path = format!("/v1/shield/protocols/{}", hex::encode(protocol_id));
    let found = common::eventually_some("the coverage indexed", || async {
        let (status, body) = server.get(&path).await;
        (status == StatusCode::OK).then_some(body)
    })
    .await;
    assert_eq!(
        found["protocol"]["safe"]["principal_lamports"], 7_000_000_000i64,
        "{found}"
    );
    assert_eq!(
        found["protocol"]["exploit"]["principal_lamports"],
        1_000_000_000i64
    );
    let metrics = server
        .http
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("indexer_committed_slot 500"), "{metrics}");
    // The only api process on this database holds the checkpoint's lease.
    assert!(metrics.contains("indexer_leader 1"), "{metrics}");
    assert!(metrics.contains("http_requests_total"));
    server.stop().await;
}
