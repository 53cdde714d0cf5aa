//! With `INDEXER_SOURCE=rpc` the api runs the indexer in its own process: a coverage account
//! served by a local JSON-RPC node appears in `GET /v1/shield/protocols`, and the indexer's
//! metrics are part of `/metrics`. Two api processes on one database index once: one holds the
//! checkpoint's lease, the other stands by and takes over when the first stops.

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

/// What the node serves: the coverage account and the slot of its snapshot.
struct Node {
    coverage: std::sync::Mutex<(Pubkey, Vec<u8>, u64)>,
}

/// getProgramAccounts (with its context slot) and an empty signature history.
#[handler]
fn rpc(Json(request): Json<Value>, Data(node): Data<&Arc<Node>>) -> Json<Value> {
    let program = request["params"][0].as_str().unwrap_or_default();
    let result = match request["method"].as_str().unwrap_or_default() {
        "getProgramAccounts" => {
            let (address, data, slot) = node.coverage.lock().unwrap().clone();
            let accounts = if program == ids::SHIELD_VAULT.to_string() {
                vec![json!({"pubkey": address.to_string(), "account": {
                    "lamports": 3_000_000, "owner": program, "executable": false, "rentEpoch": 0,
                    "space": data.len(),
                    "data": [base64::engine::general_purpose::STANDARD.encode(data), "base64"],
                }})]
            } else {
                vec![]
            };
            json!({"context": {"slot": slot}, "value": accounts})
        }
        "getSignaturesForAddress" => json!([]),
        _ => Value::Null,
    };
    Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
}

const PROTOCOL_ID: [u8; 32] = [0x42; 32];

/// A coverage account of PROTOCOL_ID with `safe` lamports on the safe side.
fn coverage_account(safe: u64) -> (Pubkey, Vec<u8>) {
    let now = chrono::Utc::now().timestamp();
    let protocol_id = PROTOCOL_ID;
    let pool = |principal: u64| SidePool {
        principal,
        total_assets: principal,
        shares_total: principal as u128 * 1_000,
        ..Default::default()
    };
    let coverage = Coverage {
        version: narrative_sdk::shield_vault::state::CoverageVersion::CURRENT,
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
        safe: pool(safe),
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
        unresolvable_votes: 0,
        oracles: Default::default(),
        treasury_forwarded: false,
        protocol_forwarded: false,
    };
    let mut data = Vec::new();
    coverage.try_serialize(&mut data).unwrap();
    (pda::shield::coverage(&protocol_id), data)
}

async fn local_node(safe: u64, slot: u64) -> (Arc<Node>, String) {
    let (address, data) = coverage_account(safe);
    let node = Arc::new(Node {
        coverage: std::sync::Mutex::new((address, data, slot)),
    });
    let url = common::serve_locally(Route::new().at("/", post(rpc)).data(node.clone())).await;
    (node, url)
}

fn path() -> String {
    format!("/v1/shield/protocols/{}", hex::encode(PROTOCOL_ID))
}

#[tokio::test]
async fn the_api_process_indexes_when_a_source_is_configured() {
    let (_node, node_url) = local_node(7_000_000_000, 500).await;

    let server = TestServer::start(|c| {
        c.indexer_source = Some(SourceKind::Rpc);
        c.indexer_endpoint = Some(node_url.into());
    })
    .await;
    let path = path();
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
    // The gauge is set just after the batch commits (the coverage may be read in between).
    common::eventually("the committed slot shown", || async {
        server
            .get_text("/metrics")
            .await
            .contains("indexer_committed_slot 500")
    })
    .await;
    let metrics = server.get_text("/metrics").await;
    // The only api process on this database holds the checkpoint's lease.
    assert_eq!(leader_gauge(&metrics), Some(1.0), "{metrics}");
    assert!(metrics.contains("http_requests_total"));
    server.stop().await;
}

#[tokio::test]
async fn two_api_processes_index_once_and_hand_over() {
    let (node, node_url) = local_node(7_000_000_000, 500).await;
    let indexing = |c: &mut narrative_api::Config| {
        c.indexer_source = Some(SourceKind::Rpc);
        c.indexer_endpoint = Some(node_url.clone().into());
    };
    let first = TestServer::start(indexing).await;
    common::eventually("the first process leads", || async {
        leader_gauge(&metrics_of(&first.base).await) == Some(1.0)
    })
    .await;
    let second = first.start_beside_with_background(indexing).await;
    // Running, and standing by: its gauge is there and says 0.
    common::eventually("the second process stands by", || async {
        leader_gauge(&second.get_text("/metrics").await) == Some(0.0)
    })
    .await;
    assert_eq!(leader_gauge(&metrics_of(&first.base).await), Some(1.0));

    // The leader goes away (a deploy, a scale-down): the standby takes over and indexes.
    let _db = first.stop().await;
    common::eventually("the second process leads", || async {
        leader_gauge(&second.get_text("/metrics").await) == Some(1.0)
    })
    .await;
    {
        let (address, data) = coverage_account(9_000_000_000);
        *node.coverage.lock().unwrap() = (address, data, 600);
    }
    let found = common::eventually_some("the change indexed by the new leader", || async {
        let (status, body) = second.get(&path()).await;
        (status == StatusCode::OK
            && body["protocol"]["safe"]["principal_lamports"] == 9_000_000_000i64)
            .then_some(body)
    })
    .await;
    assert_eq!(
        found["protocol"]["exploit"]["principal_lamports"],
        1_000_000_000i64
    );
    second.stop().await;
}

/// The `indexer_leader` gauge of a metrics page.
fn leader_gauge(metrics: &str) -> Option<f64> {
    common::sample(metrics, "indexer_leader")
}

async fn metrics_of(base: &str) -> String {
    reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}
