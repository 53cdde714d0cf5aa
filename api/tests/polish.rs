//! Polishing over HTTP (the shared daily pool of 3 per wallet, the spec's 429) and the
//! OpenAI-compatible client against a local server.

mod common;

use std::sync::{Arc, Mutex};

use common::TestServer;
use narrative_api::providers::chat::ChatModel;
use narrative_api::providers::polisher::{ChatPolisher, Polisher, INSTRUCTION};
use poem::http::HeaderMap;
use poem::web::{Data, Json};
use poem::{handler, post, EndpointExt, IntoResponse, Route};
use reqwest::StatusCode;
use serde_json::{json, Value};

const WALLET: &str = "C9QjHcuPyyncqkpSqKdQpFJjUNTgbwmbEN4GeGUoSpjN";

#[tokio::test]
async fn text_and_voice_share_three_polishes_per_wallet_per_day() {
    // A fixed clock: the daily pool must not roll over mid-test.
    let server = TestServer::start_at(common::clock_at_hour_start(), |_| {}).await;
    let (status, body) = server
        .post(
            "/v1/narratives/polish-text",
            &json!({"thesis": "  sol   above 300 by june ", "wallet_address": WALLET}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"ok": true, "polished": "Sol above 300 by june.", "original": "sol   above 300 by june"}),
        "the original as received, without the blanks around it"
    );
    let (status, body) = server
        .post(
            "/v1/narratives/polish-voice",
            &json!({"transcript": "el bitcoin supera cien mil", "wallet_address": WALLET}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"ok": true, "polished": "El bitcoin supera cien mil."})
    );
    let (status, _) = server
        .post(
            "/v1/narratives/polish-text",
            &json!({"thesis": "third", "wallet_address": WALLET}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    let response = server
        .http
        .post(server.url("/v1/narratives/polish-voice"))
        .json(&json!({"transcript": "fourth", "wallet_address": WALLET}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(response.headers().contains_key("retry-after"));
    let refused: Value = response.json().await.unwrap();
    assert_eq!(refused["error"], "daily_limit_reached");
    assert!(
        refused["resets_at"]
            .as_str()
            .unwrap()
            .ends_with("T00:00:00Z"),
        "the UTC day ends"
    );

    let (status, _) = server
        .post("/v1/narratives/polish-text", &json!({"thesis": "another wallet", "wallet_address": "11111111111111111111111111111111"}))
        .await;
    assert_eq!(status, StatusCode::OK, "the pool is per wallet");
    let (status, body) = server
        .post(
            "/v1/narratives/polish-text",
            &json!({"thesis": "x", "wallet_address": "nope"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["ok"], false);
}

#[derive(Default)]
struct Seen {
    requests: Mutex<Vec<(String, Value)>>,
}

/// An OpenAI-compatible endpoint: echoes the user text upper-cased, or fails on demand.
#[handler]
fn completions(
    headers: &HeaderMap,
    Json(request): Json<Value>,
    Data(seen): Data<&Arc<Seen>>,
) -> poem::Response {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    seen.requests.lock().unwrap().push((auth, request.clone()));
    let text = request["messages"][1]["content"]
        .as_str()
        .unwrap_or_default();
    match text {
        "fail" => poem::http::StatusCode::BAD_GATEWAY.into_response(),
        "silent" => Json(json!({"choices": [{"message": {"role": "assistant", "content": "  "}}]})).into_response(),
        _ => Json(json!({"choices": [{"message": {"role": "assistant", "content": text.to_uppercase()}}]})).into_response(),
    }
}

#[tokio::test]
async fn the_chat_client_sends_the_instruction_and_reads_the_answer() {
    let seen = Arc::new(Seen::default());
    let base = common::serve_locally(
        Route::new()
            .at("/v1/chat/completions", post(completions))
            .data(seen.clone()),
    )
    .await;
    let client = ChatPolisher(
        ChatModel::new(
            &format!("{base}/v1/"),
            Some("sk-test".into()),
            "small-model".into(),
        )
        .unwrap(),
    );
    assert_eq!(
        client.polish("sol flips eth").await.unwrap(),
        "SOL FLIPS ETH"
    );
    let (auth, request) = seen.requests.lock().unwrap()[0].clone();
    assert_eq!(auth, "Bearer sk-test");
    assert_eq!(request["model"], "small-model");
    assert_eq!(
        request["messages"][0],
        json!({"role": "system", "content": INSTRUCTION})
    );
    assert_eq!(
        request["messages"][1],
        json!({"role": "user", "content": "sol flips eth"})
    );
    assert!(client.polish("fail").await.is_err(), "a 502 is an outage");
    assert!(
        client.polish("silent").await.is_err(),
        "an empty answer is not a polish"
    );
}

/// The wallet is named in the body, not proven: the pool is the named wallet's from the
/// caller's address, so naming someone else's wallet three times does not use up theirs.
#[tokio::test]
async fn naming_a_wallet_from_another_address_does_not_spend_its_pool() {
    let server = TestServer::start_at(common::clock_at_hour_start(), |c| {
        c.trusted_proxies = vec!["127.0.0.1/8".into()];
    })
    .await;
    let polish_from = |caller: &'static str| {
        server
            .http
            .post(server.url("/v1/narratives/polish-text"))
            .header("x-forwarded-for", caller)
            .json(&json!({"thesis": "sol above 300 by june", "wallet_address": WALLET}))
            .send()
    };
    // Someone else names the wallet until its pool is spent from their address...
    for _ in 0..3 {
        assert_eq!(
            polish_from("198.51.100.66").await.unwrap().status(),
            StatusCode::OK
        );
    }
    assert_eq!(
        polish_from("198.51.100.66").await.unwrap().status(),
        StatusCode::TOO_MANY_REQUESTS
    );
    // ...and the wallet's own caller still has its three.
    for _ in 0..3 {
        assert_eq!(
            polish_from("203.0.113.7").await.unwrap().status(),
            StatusCode::OK
        );
    }
    let refused = polish_from("203.0.113.7").await.unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let refused: Value = refused.json().await.unwrap();
    assert_eq!(refused["error"], "daily_limit_reached");
    server.stop().await;
}
