//! Agent webhooks against a local receiver: registration with its refusals, and a
//! `narrative.resolved` delivery signed with HMAC-SHA256, retried after the receiver fails, with
//! every attempt recorded.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::TestServer;
use hmac::{Hmac, Mac};
use narrative_store::entities::webhook_deliveries;
use poem::http::{HeaderMap, StatusCode as PoemStatus};
use poem::web::Data;
use poem::{handler, post, EndpointExt, Route};
use reqwest::StatusCode;
use sea_orm::{ActiveModelTrait, EntityTrait, IntoActiveModel, QueryOrder};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const AGENT_WALLET: &str = "C9QjHcuPyyncqkpSqKdQpFJjUNTgbwmbEN4GeGUoSpjN";

#[derive(Default)]
struct Receiver {
    /// (x-nms-event, x-nms-signature, body) of every request.
    seen: Mutex<Vec<(String, String, String)>>,
}

/// Fails the first delivery with 500, accepts the next ones.
#[handler]
fn receive(headers: &HeaderMap, body: String, Data(receiver): Data<&Arc<Receiver>>) -> PoemStatus {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let mut seen = receiver.seen.lock().unwrap();
    seen.push((header("x-nms-event"), header("x-nms-signature"), body));
    if seen.len() == 1 {
        PoemStatus::INTERNAL_SERVER_ERROR
    } else {
        PoemStatus::OK
    }
}

#[tokio::test]
async fn a_resolution_is_delivered_signed_and_retried_until_accepted() {
    let receiver = Arc::new(Receiver::default());
    let base = common::serve_locally(
        Route::new()
            .at("/hook", post(receive))
            .data(receiver.clone()),
    )
    .await;
    let server = TestServer::start(|c| c.oracle_agent_wallets = vec![AGENT_WALLET.into()]).await;
    let (status, registered) = server
        .post(
            "/v1/agent/register",
            &json!({"wallet_address": AGENT_WALLET, "name": "listener"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let key = registered["agent"]["api_key"].as_str().unwrap().to_owned();
    let url = format!("{base}/hook");

    for (body, why) in [
        (
            json!({"url": url, "events": ["narrative.exploded"]}),
            "unknown event",
        ),
        (json!({"url": url, "events": []}), "no event"),
        (
            json!({"url": "ftp://example.com/x", "events": ["narrative.resolved"]}),
            "not http",
        ),
    ] {
        let (status, answer) = server.key_post("/v1/agent/webhook", &key, &body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{why}: {answer}");
        assert_eq!(answer["ok"], false);
    }
    let (status, answer) = server
        .key_post(
            "/v1/agent/webhook",
            &key,
            &json!({"url": url, "events": ["narrative.resolved", "narrative.resolved"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer,
        json!({"ok": true, "message": "webhook registered", "url": url, "events": ["narrative.resolved"]})
    );

    let id = uuid::Uuid::new_v4();
    let now = chrono::Utc::now().timestamp();
    common::fixtures::narrative(
        &id,
        AGENT_WALLET,
        "Kestrel ships",
        "TECHNOLOGY",
        "live",
        now,
    )
    .into_active_model()
    .insert(server.db.store.db())
    .await
    .unwrap();
    let (status, answer) = server
        .key_post(
            "/v1/agent/resolve",
            &key,
            &json!({"narrative_id": id.to_string(), "resolution": "false", "confidence": 0.8}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");

    // The first attempt gets a 500; the retry (after the 2 s backoff) is accepted.
    let mut delivered = false;
    for _ in 0..200 {
        if receiver.seen.lock().unwrap().len() >= 2 {
            delivered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(delivered, "two attempts within 10 s");
    let seen = receiver.seen.lock().unwrap().clone();
    assert_eq!(seen[0].2, seen[1].2, "a retry sends the same body");
    let body: Value = serde_json::from_str(&seen[1].2).unwrap();
    assert_eq!(body["event"], "narrative.resolved");
    assert_eq!(body["data"]["narrative_id"], id.to_string());
    assert_eq!(body["data"]["oracle_status"], "resolved_false");
    for (event, signature, body) in &seen {
        assert_eq!(event, "narrative.resolved");
        // t=<unix>,v1=<hex of HMAC-SHA256(key = SHA-256(api key), "<t>.<body>")>
        let (t, v1) = signature.split_once(',').unwrap();
        let t = t.strip_prefix("t=").unwrap();
        let mut mac = Hmac::<Sha256>::new_from_slice(&Sha256::digest(key.as_bytes())).unwrap();
        mac.update(format!("{t}.{body}").as_bytes());
        assert_eq!(
            v1.strip_prefix("v1=").unwrap(),
            hex::encode(mac.finalize().into_bytes())
        );
    }

    let mut attempts = Vec::new();
    for _ in 0..100 {
        attempts = webhook_deliveries::Entity::find()
            .order_by_asc(webhook_deliveries::Column::Id)
            .all(server.db.store.db())
            .await
            .unwrap();
        if attempts.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(attempts.len(), 2);
    assert_eq!(
        (attempts[0].attempt, attempts[0].status_code),
        (1, Some(500))
    );
    assert!(attempts[0].error.is_some());
    assert_eq!(
        (
            attempts[1].attempt,
            attempts[1].status_code,
            &attempts[1].error
        ),
        (2, Some(200), &None)
    );
    assert_eq!(attempts[0].job_id, attempts[1].job_id);
    server.stop().await;
}
