//! Verification (spec 2.10, 4.8) over HTTP, against local servers that speak each source's
//! protocol: an identity pass provider's RFC 7662 introspection endpoint (HTTP Basic client
//! authentication), Human Passport's Stamps API v2 (`X-API-KEY`, decimal-string scores), and a
//! JSON-RPC node holding SAS attestation accounts and a loyalty token's accounts and
//! transaction history. Nothing is verified unless one of them says so.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine;
use common::{serve_locally, TestServer};
use narrative_api::chain::attestations::{
    attestation_address, Attestation, TrustedSchema, SAS_PROGRAM,
};
use narrative_api::chain::holdings::{associated_token_account, TOKEN_2022_PROGRAM, TOKEN_PROGRAM};
use narrative_api::clock::ManualClock;
use narrative_sdk::Pubkey;
use poem::http::StatusCode as PoemStatus;
use poem::web::{Data, Form, Json as PoemJson, Path};
use poem::{get, handler, post, EndpointExt, IntoResponse, Request, Response, Route};
use reqwest::StatusCode;
use serde_json::{json, Value};

const NOW: i64 = 1_795_000_000;
const DAY: i64 = 86_400;
const CLIENT_ID: &str = "narrative-market-service";
const CLIENT_SECRET: &str = "idpass-client-secret";
const PASSPORT_KEY: &str = "passport-test-key";
const SCORER: &str = "7331";
const WEBHOOK_SECRET: &str = "verify-webhook-secret";

fn wallet(seed: u8) -> String {
    Pubkey::new_from_array([seed; 32]).to_string()
}

/// An identity pass provider's introspection endpoint: the answer for each token it issued.
#[handler]
fn introspect(
    request: &Request,
    Form(form): Form<HashMap<String, String>>,
    Data(passes): Data<&Arc<HashMap<String, Value>>>,
) -> Response {
    let expected = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{CLIENT_ID}:{CLIENT_SECRET}"))
    );
    if request.header("authorization") != Some(expected.as_str()) {
        return (
            PoemStatus::UNAUTHORIZED,
            PoemJson(json!({"error": "invalid_client"})),
        )
            .into_response();
    }
    assert_eq!(
        form.get("token_type_hint").map(String::as_str),
        Some("access_token")
    );
    let token = form.get("token").cloned().unwrap_or_default();
    PoemJson(
        passes
            .get(&token)
            .cloned()
            .unwrap_or(json!({"active": false})),
    )
    .into_response()
}

async fn identity_pass_provider(passes: HashMap<String, Value>) -> String {
    let base = serve_locally(
        Route::new()
            .at("/introspect", post(introspect))
            .data(Arc::new(passes)),
    )
    .await;
    format!("{base}/introspect")
}

/// Scores by address, and how many reads the stand-in served.
type PassportState = (Arc<HashMap<String, &'static str>>, Arc<AtomicUsize>);

/// Human Passport's score read, counting calls.
#[handler]
fn passport_score(
    request: &Request,
    Path((scorer, address)): Path<(String, String)>,
    Data((scores, calls)): Data<&PassportState>,
) -> Response {
    calls.fetch_add(1, Ordering::SeqCst);
    if request.header("x-api-key") != Some(PASSPORT_KEY) {
        return (
            PoemStatus::UNAUTHORIZED,
            PoemJson(json!({"detail": "Invalid API Key."})),
        )
            .into_response();
    }
    if scorer != SCORER {
        return (
            PoemStatus::NOT_FOUND,
            PoemJson(json!({"detail": "No scorer"})),
        )
            .into_response();
    }
    let score = scores.get(&address).copied().unwrap_or("0.00000");
    PoemJson(json!({
        "address": address,
        "score": score,
        "passing_score": false,
        "threshold": "20.00000",
        "last_score_timestamp": "2026-11-20T10:00:00+00:00",
        "expiration_timestamp": null,
        "error": null,
        "stamps": {}
    }))
    .into_response()
}

async fn passport_provider(scores: HashMap<String, &'static str>) -> (String, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let base = serve_locally(
        Route::new()
            .at("/v2/stamps/:scorer/score/:address", get(passport_score))
            .data((Arc::new(scores), calls.clone())),
    )
    .await;
    (base, calls)
}

/// A JSON-RPC node: accounts by address, each address's signatures (newest first) and each
/// transaction.
#[derive(Default)]
struct Node {
    accounts: HashMap<String, (Pubkey, Vec<u8>)>,
    signatures: HashMap<String, Vec<Value>>,
    transactions: HashMap<String, Value>,
}

#[handler]
fn rpc(PoemJson(request): PoemJson<Value>, Data(node): Data<&Arc<Mutex<Node>>>) -> PoemJson<Value> {
    let node = node.lock().unwrap();
    let params = &request["params"];
    let result = match request["method"].as_str().unwrap_or_default() {
        "getMultipleAccounts" => {
            let accounts: Vec<Value> = params[0]
                .as_array()
                .unwrap()
                .iter()
                .map(|address| match node.accounts.get(address.as_str().unwrap()) {
                    None => Value::Null,
                    Some((owner, data)) => json!({
                        "lamports": 2_039_280u64,
                        "owner": owner.to_string(),
                        "data": [base64::engine::general_purpose::STANDARD.encode(data), "base64"],
                        "executable": false,
                        "rentEpoch": 0,
                        "space": data.len(),
                    }),
                })
                .collect();
            json!({"context": {"slot": 300}, "value": accounts})
        }
        "getSignaturesForAddress" => {
            let all = node
                .signatures
                .get(params[0].as_str().unwrap())
                .cloned()
                .unwrap_or_default();
            let limit = params[1]["limit"].as_u64().unwrap_or(1000) as usize;
            let start = match params[1]["before"].as_str() {
                Some(before) => all
                    .iter()
                    .position(|e| e["signature"] == before)
                    .map_or(all.len(), |i| i + 1),
                None => 0,
            };
            json!(all.into_iter().skip(start).take(limit).collect::<Vec<_>>())
        }
        "getTransaction" => node
            .transactions
            .get(params[0].as_str().unwrap())
            .cloned()
            .unwrap_or(Value::Null),
        other => panic!("the node was asked {other}"),
    };
    PoemJson(json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
}

async fn node(node: Node) -> (String, Arc<Mutex<Node>>) {
    let node = Arc::new(Mutex::new(node));
    (
        serve_locally(Route::new().at("/", post(rpc)).data(node.clone())).await,
        node,
    )
}

/// The providers' callback, with the shared webhook secret.
async fn confirmed(server: &TestServer, body: &Value) -> (StatusCode, Value) {
    server
        .webhook_post("/v1/verify/confirm", WEBHOOK_SECRET, body)
        .await
}

#[tokio::test]
async fn the_chain_is_read_off_the_address_and_a_new_wallet_has_nothing() {
    let server = TestServer::start(|_| {}).await;
    let solana = wallet(3);
    let (status, body) = server.get(&format!("/v1/verify/status/{solana}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["chain"], "solana");
    assert_eq!(
        body["available_methods"],
        json!(["idpass", "passport", "sas"])
    );
    assert_eq!(
        body["verification"],
        json!({"idpass_verified": false, "passport_score": 0.0, "passport_verified": false, "sas_verified": false})
    );
    assert_eq!(
        (
            body["fully_verified"].clone(),
            body["recommended_method"].clone()
        ),
        (json!(false), json!("idpass"))
    );

    let (status, body) = server
        .get("/v1/verify/status/0xAbCdEf0123456789abcdef0123456789ABCDEF01")
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["wallet"], "0xabcdef0123456789abcdef0123456789abcdef01");
    assert_eq!(body["chain"], "evm");
    assert_eq!(body["available_methods"], json!(["passport"]));
    assert_eq!(body["recommended_method"], "passport");

    for refused in [
        "0x1234",
        "cosmos1qypqxpq9qcrsszg2pvxq6rs0zqg3yyc5lzv7xu",
        "not-a-wallet",
    ] {
        let (status, _) = server.get(&format!("/v1/verify/status/{refused}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    }
}

#[tokio::test]
async fn an_identity_pass_verifies_only_the_wallet_it_was_issued_to_while_it_lives() {
    let (holder, other) = (wallet(4), wallet(5));
    let endpoint = identity_pass_provider(HashMap::from([
        (
            "good".to_owned(),
            json!({"active": true, "sub": holder, "exp": NOW + 3_600, "jti": "pass-7"}),
        ),
        (
            "theirs".to_owned(),
            json!({"active": true, "sub": other, "jti": "pass-8"}),
        ),
        ("revoked".to_owned(), json!({"active": false})),
        (
            "renewed".to_owned(),
            json!({"active": true, "sub": holder, "exp": NOW + 86_400, "jti": "pass-9"}),
        ),
    ]))
    .await;
    let clock = ManualClock::at(NOW);
    let server = TestServer::start_at(clock.clone(), |c| {
        c.idpass_introspection_url = Some(endpoint);
        c.idpass_client_id = CLIENT_ID.into();
        c.idpass_client_secret = Some(CLIENT_SECRET.into());
        c.webhook_secret = Some(WEBHOOK_SECRET.into());
    })
    .await;

    for (token, why) in [
        ("theirs", "another wallet"),
        ("revoked", "not active"),
        ("never-issued", "not active"),
    ] {
        let (status, body) = server
            .post(
                "/v1/verify/idpass",
                &json!({"token": token, "wallet_address": holder}),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{token}: {body}");
        assert_eq!(body["error"], "idpass_invalid");
        assert!(body["message"].as_str().unwrap().contains(why), "{body}");
    }
    let (_, record) = server.get(&format!("/v1/verify/status/{holder}")).await;
    assert_eq!(
        record["verification"]["idpass_verified"], false,
        "refused tokens write nothing"
    );

    let (status, body) = server
        .post(
            "/v1/verify/idpass",
            &json!({"token": "good", "wallet_address": holder}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (body["verified"].clone(), body["pass_id"].clone()),
        (json!(true), json!("pass-7"))
    );
    let (_, record) = server.get(&format!("/v1/verify/status/{holder}")).await;
    assert_eq!(record["verification"]["idpass_verified"], true);
    assert_eq!(
        (
            record["fully_verified"].clone(),
            record["recommended_method"].clone()
        ),
        (json!(true), Value::Null)
    );

    // The pass lapses an hour on: the record no longer counts it.
    clock.advance(3_600);
    let (_, record) = server.get(&format!("/v1/verify/status/{holder}")).await;
    assert_eq!(record["verification"]["idpass_verified"], false);
    assert_eq!(record["recommended_method"], "idpass");

    // The provider's callback: the token is checked again, another wallet's refused, a
    // renewed pass verifying the wallet once more.
    let callback = |token: &str| json!({"wallet_address": holder, "method": "idpass", "verification_id": token});
    let (status, body) = confirmed(&server, &callback("theirs")).await;
    assert_eq!(
        (status, body["error"].clone()),
        (StatusCode::BAD_REQUEST, json!("idpass_invalid"))
    );
    let (_, record) = server.get(&format!("/v1/verify/status/{holder}")).await;
    assert_eq!(record["verification"]["idpass_verified"], false);
    let (status, body) = confirmed(&server, &callback("renewed")).await;
    assert_eq!(
        (status, body["verified"].clone()),
        (StatusCode::OK, json!(true)),
        "{body}"
    );
    let (_, record) = server.get(&format!("/v1/verify/status/{holder}")).await;
    assert_eq!(record["verification"]["idpass_verified"], true);
}

#[tokio::test]
async fn the_identity_pass_provider_must_know_this_service_and_answer() {
    let endpoint = identity_pass_provider(HashMap::from([(
        "good".to_owned(),
        json!({"active": true, "sub": wallet(4)}),
    )]))
    .await;
    // A client secret the provider does not know: its 401 is the provider failing, not the
    // token.
    let server = TestServer::start(|c| {
        c.idpass_introspection_url = Some(endpoint);
        c.idpass_client_id = CLIENT_ID.into();
        c.idpass_client_secret = Some("not-the-secret".into());
    })
    .await;
    let (status, body) = server
        .post(
            "/v1/verify/idpass",
            &json!({"token": "good", "wallet_address": wallet(4)}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "idpass_unavailable");

    // The local pass: only its configured token, and none without one.
    let local = TestServer::start(|c| c.idpass_local_token = Some("local-pass".into())).await;
    let (status, _) = local
        .post(
            "/v1/verify/idpass",
            &json!({"token": "local-pass", "wallet_address": wallet(6)}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = local
        .post(
            "/v1/verify/idpass",
            &json!({"token": "local-pas", "wallet_address": wallet(6)}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = local
        .post(
            "/v1/verify/idpass",
            &json!({"token": "", "wallet_address": wallet(6)}),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "an empty token is refused at the boundary"
    );
}

#[tokio::test]
async fn passport_scores_come_from_human_passport_with_the_two_thresholds() {
    let (some_stamps, evm) = (wallet(7), "0xabcdef0123456789abcdef0123456789abcdef01");
    let (api, calls) = passport_provider(HashMap::from([
        (some_stamps.clone(), "12.50000"),
        (evm.to_owned(), "22.95000"),
    ]))
    .await;
    let server = TestServer::start(|c| {
        c.passport_api_key = Some(PASSPORT_KEY.into());
        c.passport_scorer_id = Some(SCORER.into());
        c.passport_api_url = Some(api.clone());
        c.webhook_secret = Some(WEBHOOK_SECRET.into());
    })
    .await;

    let (status, body) = server
        .get(&format!("/v1/verify/passport/{some_stamps}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"ok": true, "verified": false, "score": 12.5, "wallet_address": some_stamps})
    );
    let (_, record) = server
        .get(&format!("/v1/verify/status/{some_stamps}"))
        .await;
    assert_eq!(record["verification"]["passport_score"], 12.5);
    assert_eq!(
        record["verification"]["passport_verified"], true,
        "verified from 10"
    );
    assert_eq!(record["fully_verified"], false, "passing only from 20");
    assert_eq!(
        record["recommended_method"], "passport",
        "a few stamps from passing"
    );

    // An EVM address, as its owner writes it (checksum case), is scored as the provider keys it.
    let (status, body) = server
        .get("/v1/verify/passport/0xAbCdEf0123456789abcdef0123456789ABCDEF01")
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (body["verified"].clone(), body["score"].clone()),
        (json!(true), json!(22.95))
    );
    let (_, record) = server.get(&format!("/v1/verify/status/{evm}")).await;
    assert_eq!(
        (
            record["fully_verified"].clone(),
            record["recommended_method"].clone()
        ),
        (json!(true), Value::Null)
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "status reads the store, not the provider"
    );

    // The provider's callback asks the provider again and records what it says; `verified`
    // is the passport check's, which 12.5 does not pass (it is only `passport_verified`).
    let (status, body) = confirmed(
        &server,
        &json!({"wallet_address": some_stamps, "method": "passport"}),
    )
    .await;
    assert_eq!(
        (status, body["verified"].clone()),
        (StatusCode::OK, json!(false)),
        "{body}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 3);

    // A process of the deployment whose key the provider refuses: 503, and the recorded score
    // stands.
    let (wrong_key, _stop) = server
        .start_beside(|c| {
            c.passport_api_key = Some("revoked-key".into());
            c.passport_scorer_id = Some(SCORER.into());
            c.passport_api_url = Some(api);
        })
        .await;
    let response = server
        .http
        .get(format!("{wrong_key}/v1/verify/passport/{some_stamps}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], "passport_unavailable");
    let (_, record) = server
        .get(&format!("/v1/verify/status/{some_stamps}"))
        .await;
    assert_eq!(record["verification"]["passport_score"], 12.5);
}

#[tokio::test]
async fn initiate_hands_out_each_methods_flow_and_refuses_one_the_chain_lacks() {
    let server = TestServer::start(|c| {
        c.public_base_url = "https://api.narrative.example/".into();
        c.idpass_flow_url = "https://pass.example/start?lang=en".into();
    })
    .await;
    let solana = wallet(8);
    let callback = "https://api.narrative.example/v1/verify/confirm";
    let (status, body) = server
        .post("/v1/verify/initiate", &json!({"wallet": solana}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["chain"], "solana");
    let flow = &body["flow"];
    assert_eq!(
        (flow["method"].clone(), flow["type"].clone()),
        (json!("idpass"), json!("redirect"))
    );
    assert_eq!(flow["callback"], callback);
    let url = reqwest::Url::parse(flow["url"].as_str().unwrap()).unwrap();
    let query: HashMap<_, _> = url.query_pairs().into_owned().collect();
    assert_eq!(url.host_str(), Some("pass.example"));
    assert_eq!(query.get("lang").map(String::as_str), Some("en"));
    assert_eq!(query.get("wallet"), Some(&solana));
    assert_eq!(
        query.get("redirect_uri").map(String::as_str),
        Some(callback)
    );

    let (_, body) = server
        .post(
            "/v1/verify/initiate",
            &json!({"wallet": solana, "preferred_method": "sas"}),
        )
        .await;
    assert_eq!(
        (body["flow"]["method"].clone(), body["flow"]["type"].clone()),
        (json!("sas"), json!("coming_soon"))
    );
    let (_, body) = server
        .post(
            "/v1/verify/initiate",
            &json!({"wallet": "0x00000000000000000000000000000000000000aa"}),
        )
        .await;
    assert_eq!(
        (body["chain"].clone(), body["flow"]["method"].clone()),
        (json!("evm"), json!("passport"))
    );
    assert_eq!(body["flow"]["url"], "https://app.passport.xyz");

    let (status, body) = server
        .post(
            "/v1/verify/initiate",
            &json!({"wallet": "0x00000000000000000000000000000000000000aa", "preferred_method": "idpass"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "method_not_available");
    let (status, _) = server
        .post(
            "/v1/verify/initiate",
            &json!({"wallet": solana, "preferred_method": "retina"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

/// An attestation account of `wallet` under `trusted`, as SAS writes it.
fn attestation(trusted: &TrustedSchema, wallet: &Pubkey, expiry: i64) -> (String, Vec<u8>) {
    let address = attestation_address(trusted, wallet);
    let account = Attestation {
        address,
        nonce: *wallet,
        credential: trusted.credential,
        schema: trusted.schema,
        data: b"\x01".to_vec(),
        signer: Pubkey::new_from_array([9; 32]),
        expiry,
        token_account: Pubkey::default(),
    };
    (address.to_string(), account.to_bytes())
}

#[tokio::test]
async fn sas_requests_are_kept_and_attestations_are_read_from_the_ledger() {
    let owner = Pubkey::new_from_array([11; 32]);
    let trusted: Vec<TrustedSchema> = (0..3)
        .map(|i| TrustedSchema {
            credential: Pubkey::new_from_array([20 + i; 32]),
            schema: Pubkey::new_from_array([30 + i; 32]),
        })
        .collect();
    let mut ledger = Node::default();
    // A live attestation; an expired one; and at the third PDA an account SAS does not own.
    let (live, live_data) = attestation(&trusted[0], &owner, 0);
    let (lapsed, lapsed_data) = attestation(&trusted[1], &owner, NOW - 1);
    let (forged, forged_data) = attestation(&trusted[2], &owner, 0);
    ledger
        .accounts
        .insert(live.clone(), (SAS_PROGRAM, live_data));
    ledger
        .accounts
        .insert(lapsed.clone(), (SAS_PROGRAM, lapsed_data));
    ledger
        .accounts
        .insert(forged, (Pubkey::new_from_array([1; 32]), forged_data));
    let (rpc_url, ledger) = node(ledger).await;
    let server = TestServer::start_at(ManualClock::at(NOW), |c| {
        c.solana_rpc_url = rpc_url.into();
        c.webhook_secret = Some(WEBHOOK_SECRET.into());
        c.sas_trusted_schemas = trusted
            .iter()
            .map(|t| format!("{}:{}", t.credential, t.schema))
            .collect();
    })
    .await;

    let (status, body) = server
        .get(&format!("/v1/verify/sas/attestations/{owner}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let found = body["attestations"].as_array().unwrap();
    assert_eq!(found.len(), 2, "{body}");
    assert_eq!(
        (found[0]["address"].clone(), found[0]["live"].clone()),
        (json!(live), json!(true))
    );
    assert_eq!(found[0]["expires_at"], Value::Null);
    assert_eq!(found[0]["data"], "AQ==");
    assert_eq!(
        (found[1]["address"].clone(), found[1]["live"].clone()),
        (json!(lapsed), json!(false))
    );

    // Spec 7 maps `coming_soon` to 503 (it answered 200 before); the intent is still recorded
    // (spec 4.8).
    let request = json!({"wallet_address": owner.to_string()});
    let (status, body) = server.post("/v1/verify/sas", &request).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(
        (
            body["error"].clone(),
            body["feature"].clone(),
            body["recorded"].clone()
        ),
        (json!("coming_soon"), json!("coming_soon"), json!(true))
    );
    assert_eq!(body["wallet_address"], owner.to_string());
    assert!(body["message"].is_string(), "{body}");
    // The document states the 503 and its body.
    let (_, document) = server.get("/v1/openapi.json").await;
    let responses = &document["paths"]["/verify/sas"]["post"]["responses"];
    assert!(responses.get("200").is_none(), "{responses}");
    assert!(responses.get("503").is_some(), "{responses}");
    let (status, body) = server.post("/v1/verify/sas", &request).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["recorded"], false, "kept once");
    let (_, record) = server.get(&format!("/v1/verify/status/{owner}")).await;
    assert_eq!(
        record["verification"]["sas_verified"], false,
        "a request verifies nothing"
    );

    // The callback: without the shared secret, refused; with it, the ledger is read again.
    let confirm = json!({"wallet_address": owner.to_string(), "method": "sas"});
    let (status, _) = server.post("/v1/verify/confirm", &confirm).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = confirmed(&server, &confirm).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["verified"], true);
    let (_, record) = server.get(&format!("/v1/verify/status/{owner}")).await;
    assert_eq!(record["verification"]["sas_verified"], true);
    assert_eq!(record["fully_verified"], true);

    // The issuer closes the attestation: the next callback un-verifies the wallet.
    ledger.lock().unwrap().accounts.remove(&live);
    let (_, body) = confirmed(&server, &confirm).await;
    assert_eq!(body["verified"], false);
    let (_, record) = server.get(&format!("/v1/verify/status/{owner}")).await;
    assert_eq!(record["verification"]["sas_verified"], false);
    // A new request after a check that found nothing is kept again.
    let (_, body) = server.post("/v1/verify/sas", &request).await;
    assert_eq!(body["recorded"], true, "{body}");
    let (_, body) = server.post("/v1/verify/sas", &request).await;
    assert_eq!(body["recorded"], false);

    // The chain named must be the address's; an EVM address has no SAS.
    let (status, body) = confirmed(
        &server,
        &json!({"wallet_address": owner.to_string(), "method": "sas", "chain": "evm"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = confirmed(
        &server,
        &json!({"wallet_address": "0x00000000000000000000000000000000000000aa", "method": "sas"}),
    )
    .await;
    assert_eq!(
        (status, body["error"].clone()),
        (StatusCode::BAD_REQUEST, json!("method_not_available"))
    );
    let (status, body) = confirmed(
        &server,
        &json!({"wallet_address": owner.to_string(), "method": "idpass"}),
    )
    .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "idpass needs the token: {body}"
    );
}

const MINT: Pubkey = Pubkey::new_from_array([40; 32]);

/// A token account's data: mint, owner, amount, then the rest of the layout.
fn token_account(owner: &Pubkey, amount: u64) -> Vec<u8> {
    let mut data = [MINT.as_ref(), owner.as_ref(), &amount.to_le_bytes()].concat();
    data.resize(165, 0);
    data
}

/// Gives `owner` an associated token account (under the token program `program`) holding
/// `balance`, made by the first of `changes` (unix time, balance after), newest last as they
/// happened.
fn hold_under(
    program: Pubkey,
    node: &mut Node,
    owner: &Pubkey,
    balance: u64,
    changes: &[(i64, u64)],
) {
    let account = associated_token_account(owner, &MINT, &program);
    node.accounts.insert(
        account.to_string(),
        (program, token_account(owner, balance)),
    );
    let mut before = 0u64;
    let mut entries = Vec::new();
    for (i, (time, after)) in changes.iter().enumerate() {
        // One signature per account and change: the account's bytes, then the change's index.
        let mut signature = [i as u8; 64];
        signature[..32].copy_from_slice(account.as_ref());
        let signature = solana_signature::Signature::from(signature).to_string();
        let amount = |amount: u64, index: usize| {
            json!({"accountIndex": index, "mint": MINT.to_string(), "owner": owner.to_string(),
                   "programId": program.to_string(),
                   "uiTokenAmount": {"amount": amount.to_string(), "decimals": 6}})
        };
        // The account sits at index 2 of the message's keys; a creation has no pre balance.
        let pre: Vec<Value> = if before == 0 && i == 0 {
            vec![]
        } else {
            vec![amount(before, 2)]
        };
        node.transactions.insert(
            signature.clone(),
            json!({"slot": 100 + i, "blockTime": time,
                   "meta": {"err": null, "preTokenBalances": pre, "postTokenBalances": [amount(*after, 2)],
                            "loadedAddresses": {"writable": [], "readonly": []}},
                   "transaction": {"message": {"accountKeys": [owner.to_string(), Pubkey::new_from_array([2; 32]).to_string(), account.to_string()]},
                                   "signatures": [signature]}}),
        );
        entries
            .push(json!({"signature": signature, "slot": 100 + i, "err": null, "blockTime": time}));
        before = *after;
    }
    entries.reverse();
    node.signatures.insert(account.to_string(), entries);
}

/// [`hold_under`] the SPL Token program.
fn hold(node: &mut Node, owner: &Pubkey, balance: u64, changes: &[(i64, u64)]) {
    hold_under(TOKEN_PROGRAM, node, owner, balance, changes);
}

#[tokio::test]
async fn a_holder_keeps_the_minimum_for_45_days_read_from_the_token_history() {
    let (long, recent, dipped, none) = (
        Pubkey::new_from_array([50; 32]),
        Pubkey::new_from_array([60; 32]),
        Pubkey::new_from_array([70; 32]),
        Pubkey::new_from_array([80; 32]),
    );
    let mut ledger = Node::default();
    ledger
        .accounts
        .insert(MINT.to_string(), (TOKEN_PROGRAM, vec![0; 82]));
    // Bought 200 fifty days ago, sold 50 ten days ago: 150 all along, over a minimum of 100.
    hold(
        &mut ledger,
        &long,
        150,
        &[(NOW - 50 * DAY, 200), (NOW - 10 * DAY, 150)],
    );
    // Bought twenty days ago.
    hold(&mut ledger, &recent, 500, &[(NOW - 20 * DAY, 500)]);
    // Held long, but dipped under the minimum thirty days ago and topped up.
    hold(
        &mut ledger,
        &dipped,
        300,
        &[
            (NOW - 90 * DAY, 300),
            (NOW - 30 * DAY, 50),
            (NOW - 29 * DAY, 300),
        ],
    );
    let (rpc_url, _ledger) = node(ledger).await;
    let clock = ManualClock::at(NOW);
    let server = TestServer::start_at(clock.clone(), |c| {
        c.solana_rpc_url = rpc_url.into();
        c.loyalty_mint = Some(MINT.to_string());
        c.loyalty_min_balance = 100;
    })
    .await;

    let (status, body) = server.get(&format!("/v1/verify/holder/{long}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (
            body["holder"].clone(),
            body["balance"].clone(),
            body["min_balance"].clone()
        ),
        (json!(true), json!("150"), json!("100"))
    );
    assert_eq!(
        (
            body["held_days"].clone(),
            body["required_hold_days"].clone()
        ),
        (json!(50), json!(45))
    );
    assert_eq!(
        body["boosts"],
        json!({"echo_pool_ticket_boost_bps": 1000, "deposit_fee_discount_bps": 2500})
    );

    for (wallet, days) in [(recent, 20), (dipped, 29)] {
        let (_, body) = server.get(&format!("/v1/verify/holder/{wallet}")).await;
        assert_eq!(
            (body["holder"].clone(), body["held_days"].clone()),
            (json!(false), json!(days)),
            "{body}"
        );
        assert_eq!(
            body["boosts"],
            json!({"echo_pool_ticket_boost_bps": 0, "deposit_fee_discount_bps": 0})
        );
    }
    let (_, body) = server.get(&format!("/v1/verify/holder/{none}")).await;
    assert_eq!(
        (
            body["holder"].clone(),
            body["balance"].clone(),
            body["held_since"].clone()
        ),
        (json!(false), json!("0"), Value::Null)
    );

    // Twenty-five days on, the recent buyer has held for 45.
    clock.advance(25 * DAY);
    let (_, body) = server.get(&format!("/v1/verify/holder/{recent}")).await;
    assert_eq!(
        (body["holder"].clone(), body["held_days"].clone()),
        (json!(true), json!(45)),
        "{body}"
    );

    // Without a loyalty token there is nothing to check.
    let unset = TestServer::start(|_| {}).await;
    let (status, body) = unset.get(&format!("/v1/verify/holder/{long}")).await;
    assert_eq!(
        (status, body["error"].clone()),
        (
            StatusCode::SERVICE_UNAVAILABLE,
            json!("holder_check_unavailable")
        )
    );
}

#[tokio::test]
async fn a_token_2022_loyalty_token_is_read_under_its_own_program() {
    let holder = Pubkey::new_from_array([90; 32]);
    let mut ledger = Node::default();
    ledger
        .accounts
        .insert(MINT.to_string(), (TOKEN_2022_PROGRAM, vec![0; 82]));
    hold_under(
        TOKEN_2022_PROGRAM,
        &mut ledger,
        &holder,
        400,
        &[(NOW - 60 * DAY, 400)],
    );
    // An account of the same wallet under the other program is not the holding.
    hold(&mut ledger, &holder, 9_999, &[(NOW - 100 * DAY, 9_999)]);
    let (rpc_url, _ledger) = node(ledger).await;
    let server = TestServer::start_at(ManualClock::at(NOW), |c| {
        c.solana_rpc_url = rpc_url.into();
        c.loyalty_mint = Some(MINT.to_string());
        c.loyalty_min_balance = 100;
    })
    .await;
    let (status, body) = server.get(&format!("/v1/verify/holder/{holder}")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (
            body["holder"].clone(),
            body["balance"].clone(),
            body["held_days"].clone()
        ),
        (json!(true), json!("400"), json!(60))
    );
}
