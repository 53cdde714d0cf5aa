//! KYC (spec 4.9) over HTTP: inquiries opened with a local server that speaks Persona's API
//! (bearer key, version header, JSON:API bodies, the session token from the create or from a
//! resume), the wallet's signature required, the provider's unreachability as a 503, and tiers
//! written only by a webhook signed as Persona signs them: approved raises the tier once
//! (`kyc_tier_upgraded` in the feed), declined does not, replays and forgeries change nothing.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::{SigningWallet as Wallet, TestServer};
use narrative_api::clock::{Clock, ManualClock};
use narrative_api::providers::kyc::signature_header;
use poem::http::StatusCode as PoemStatus;
use poem::web::{Data, Json as PoemJson, Path};
use poem::{handler, post, EndpointExt, IntoResponse, Request, Response, Route};
use reqwest::StatusCode;
use serde_json::{json, Value};

const PERSONA_KEY: &str = "persona_sandbox_test_key";
const WEBHOOK_SECRET: &str = "wbhsec_test_secret";

/// What the Persona stand-in saw: each create's body and whether resumes were asked for.
#[derive(Default)]
struct Persona {
    creates: Vec<Value>,
    resumes: Vec<String>,
    /// Whether creates answer a session token (Persona does when asked to make a session).
    token_on_create: bool,
}

fn refused(status: PoemStatus, why: &str) -> Response {
    (status, PoemJson(json!({"errors": [{"title": why}]}))).into_response()
}

/// Persona's refusal of a request without the key or the version header, if it is one.
fn unauthorised(request: &Request) -> Option<Response> {
    if request.header("authorization") != Some(&format!("Bearer {PERSONA_KEY}")) {
        return Some(refused(PoemStatus::UNAUTHORIZED, "Must be authenticated"));
    }
    if request.header("persona-version").is_none_or(str::is_empty) {
        return Some(refused(PoemStatus::BAD_REQUEST, "no Persona-Version"));
    }
    None
}

#[handler]
async fn create_inquiry(
    request: &Request,
    PoemJson(body): PoemJson<Value>,
    Data(persona): Data<&Arc<Mutex<Persona>>>,
) -> Response {
    if let Some(refusal) = unauthorised(request) {
        return refusal;
    }
    let attributes = &body["data"]["attributes"];
    let Some(template) = attributes["inquiry-template-id"].as_str() else {
        return refused(PoemStatus::UNPROCESSABLE_ENTITY, "no template");
    };
    let mut persona = persona.lock().unwrap();
    persona.creates.push(body.clone());
    let id = format!("inq_{}", persona.creates.len());
    let mut answer = json!({
        "data": {"type": "inquiry", "id": id, "attributes": {
            "status": "created", "reference-id": attributes["reference-id"],
        }, "relationships": {"inquiry-template": {"data": {"type": "inquiry-template", "id": template}}}},
        "meta": {},
    });
    if persona.token_on_create && body["meta"]["auto-create-inquiry-session"] == true {
        answer["meta"]["session-token"] = json!(format!("token-create-{id}"));
    }
    (PoemStatus::CREATED, PoemJson(answer)).into_response()
}

#[handler]
async fn resume_inquiry(
    request: &Request,
    Path(id): Path<String>,
    Data(persona): Data<&Arc<Mutex<Persona>>>,
) -> Response {
    if let Some(refusal) = unauthorised(request) {
        return refusal;
    }
    persona.lock().unwrap().resumes.push(id.clone());
    PoemJson(json!({
        "data": {"type": "inquiry", "id": id, "attributes": {"status": "created"}},
        "meta": {"session-token": format!("token-resume-{id}")},
    }))
    .into_response()
}

async fn persona(token_on_create: bool) -> (String, Arc<Mutex<Persona>>) {
    let state = Arc::new(Mutex::new(Persona {
        token_on_create,
        ..Persona::default()
    }));
    let base = common::serve_locally(
        Route::new()
            .at("/api/v1/inquiries", post(create_inquiry))
            .at("/api/v1/inquiries/:id/resume", post(resume_inquiry))
            .data(state.clone()),
    )
    .await;
    (base, state)
}

/// What `wallet` signs to open an inquiry at `tier`, but for its issued-at time.
fn start_statement(wallet: &Wallet, tier: u8) -> String {
    format!(
        "narrative-market-service:kyc-start:{}:{tier}",
        wallet.address
    )
}

/// The body opening an inquiry at `tier` for `wallet`, signed at `issued_at`.
fn start_body_at(wallet: &Wallet, tier: u8, issued_at: i64) -> Value {
    let signature = wallet.sign_at(&start_statement(wallet, tier), issued_at);
    json!({"wallet": wallet.address, "tier": tier, "signature": signature,
           "issued_at": issued_at})
}

/// The body opening an inquiry at `tier` for `wallet`, signed now (by `server`'s clock).
fn start_body(server: &TestServer, wallet: &Wallet, tier: u8) -> Value {
    start_body_at(wallet, tier, server.clock.now())
}

async fn start_with_persona(base: &str, clock: Arc<ManualClock>) -> TestServer {
    let base = base.to_owned();
    TestServer::start_at(clock, move |c| {
        c.persona_api_key = Some(PERSONA_KEY.into());
        c.persona_api_url = Some(base);
        c.persona_hosted_url = Some("https://inquiry.persona.example".into());
        c.persona_template_tier1 = Some("itmpl_basic".into());
        c.persona_template_tier2 = Some("itmpl_enhanced".into());
        c.kyc_webhook_secret = Some(WEBHOOK_SECRET.into());
    })
    .await
}

fn event(name: &str, inquiry: &str, status: &str) -> Vec<u8> {
    json!({"data": {"type": "event", "id": format!("evt_{name}_{inquiry}"), "attributes": {
        "name": name,
        "payload": {"data": {"type": "inquiry", "id": inquiry,
                             "attributes": {"status": status, "reference-id": "ignored"}}},
    }}})
    .to_string()
    .into_bytes()
}

async fn webhook(
    server: &TestServer,
    body: Vec<u8>,
    signature: Option<String>,
) -> (StatusCode, Value) {
    let mut request = server
        .http
        .post(server.url("/v1/kyc/webhook"))
        .header("content-type", "application/json")
        .body(body);
    if let Some(signature) = signature {
        request = request.header("Persona-Signature", signature);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The keys of a JSON object, sorted.
fn keys(object: &Value) -> Vec<String> {
    let mut keys: Vec<String> = object.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

async fn kyc_notifications(server: &TestServer, wallet: &Wallet) -> Vec<Value> {
    let (_, feed) = server
        .get(&format!("/v1/notifications/{}", wallet.address))
        .await;
    feed["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["type"] == "kyc_tier_upgraded")
        .cloned()
        .collect()
}

#[tokio::test]
async fn an_inquiry_opened_with_persona_is_verified_only_by_its_signed_webhook() {
    let (base, persona) = persona(true).await;
    let clock = ManualClock::at_system_time();
    let server = start_with_persona(&base, clock.clone()).await;
    let wallet = Wallet::new(11);

    // Only the wallet opens an inquiry for itself, with a fresh signature.
    let now = clock.now();
    let mut forged = start_body(&server, &wallet, 1);
    forged["signature"] = start_body(&server, &Wallet::new(12), 1)["signature"].clone();
    let mut timeless = start_body(&server, &wallet, 1);
    timeless["signature"] = json!(wallet.sign(&start_statement(&wallet, 1)));
    for (body, why) in [
        (forged.clone(), "another wallet's signature"),
        (start_body_at(&wallet, 1, now - 301), "signed 301 s ago"),
        (timeless, "the message without its issued-at time"),
    ] {
        let (status, answer) = server.post("/v1/kyc/start", &body).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{why}: {answer}");
        assert_eq!(answer["error"], "invalid_signature");
    }
    let (status, answer) = server
        .post(
            "/v1/kyc/start",
            &json!({"wallet": wallet.address, "tier": 3, "signature": forged["signature"],
                    "issued_at": now}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "tier 3: {answer}");
    assert!(persona.lock().unwrap().creates.is_empty());

    let start = start_body(&server, &wallet, 1);
    let (status, started) = server.post("/v1/kyc/start", &start).await;
    assert_eq!(status, StatusCode::OK, "{started}");
    assert_eq!(started["already_verified"], false);
    assert_eq!(started["kyc_tier"], 0);
    assert_eq!(started["inquiry_id"], "inq_1");
    assert_eq!(started["session_token"], "token-create-inq_1");
    assert_eq!(
        started["kyc_url"],
        "https://inquiry.persona.example/verify?inquiry-id=inq_1&session-token=token-create-inq_1"
    );
    let create = persona.lock().unwrap().creates[0].clone();
    assert_eq!(
        create,
        json!({"data": {"attributes": {"inquiry-template-id": "itmpl_basic",
                                       "reference-id": wallet.address}},
               "meta": {"auto-create-inquiry-session": true}})
    );

    // The same proof again is a replay: no second inquiry.
    let (status, answer) = server.post("/v1/kyc/start", &start).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "replayed: {answer}");
    assert_eq!(answer["error"], "invalid_signature");
    assert_eq!(persona.lock().unwrap().creates.len(), 1);

    // The public status shows the inquiry's progress, never its id; the operator sees it.
    let status_path = format!("/v1/kyc/status/{}", wallet.address);
    let (status, read) = server.get(&status_path).await;
    assert_eq!(status, StatusCode::OK, "{read}");
    assert_eq!(read["kyc_tier"], 0);
    assert_eq!(read["verified"], false);
    assert_eq!(read["inquiry"]["status"], "created");
    assert_eq!(
        keys(&read),
        ["blocked", "inquiry", "kyc_tier", "ok", "verified", "wallet"]
    );
    assert_eq!(
        keys(&read["inquiry"]),
        ["created_at", "status", "tier", "updated_at"]
    );
    assert!(!read.to_string().contains("inq_1"), "{read}");
    let (status, operator) = server
        .admin_request(
            common::ADMIN_WALLET,
            reqwest::Method::GET,
            &status_path,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{operator}");
    assert_eq!(operator["inquiry"]["inquiry_id"], "inq_1");

    // Unsigned, forged, stale: refused, and nothing changes.
    let approved = event("inquiry.approved", "inq_1", "approved");
    let now = clock.now();
    for (signature, why) in [
        (None, "unsigned"),
        (
            Some(signature_header(&approved, "wbhsec_other", now)),
            "another secret",
        ),
        (
            Some(signature_header(&approved, WEBHOOK_SECRET, now - 301)),
            "stale",
        ),
        (
            Some(signature_header(b"{}", WEBHOOK_SECRET, now)),
            "another body",
        ),
    ] {
        let (status, answer) = webhook(&server, approved.clone(), signature).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{why}: {answer}");
    }
    let (_, tier) = server
        .get(&format!("/v1/kyc/tier/{}", wallet.address))
        .await;
    assert_eq!(
        tier,
        json!({"ok": true, "wallet": wallet.address, "kyc_tier": 0})
    );

    // Completed is not approved.
    let completed = event("inquiry.completed", "inq_1", "completed");
    let (status, answer) = webhook(
        &server,
        completed.clone(),
        Some(signature_header(&completed, WEBHOOK_SECRET, now)),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer,
        json!({"ok": true, "outcome": "updated", "raised_to": null})
    );

    // Approved, delivered twice: the tier once, one notification.
    for delivery in 0..2 {
        let (status, answer) = webhook(
            &server,
            approved.clone(),
            Some(signature_header(&approved, WEBHOOK_SECRET, now)),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let expected = if delivery == 0 { json!(1) } else { Value::Null };
        assert_eq!(answer["raised_to"], expected);
    }
    let (_, read) = server
        .get(&format!("/v1/kyc/status/{}", wallet.address))
        .await;
    assert_eq!(
        (read["kyc_tier"].clone(), read["verified"].clone()),
        (json!(1), json!(true))
    );
    assert_eq!(read["inquiry"]["status"], "approved");
    let told = kyc_notifications(&server, &wallet).await;
    assert_eq!(told.len(), 1, "{told:?}");
    // The feed is a public read: the notification does not carry the inquiry's id.
    assert_eq!(told[0]["data"], json!({"tier": 1}));

    // Tier 1 held: asking for it again opens nothing; tier 2 opens another inquiry.
    let (status, again) = server
        .post("/v1/kyc/start", &start_body_at(&wallet, 1, now + 1))
        .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(
        again,
        json!({"ok": true, "already_verified": true, "kyc_tier": 1, "kyc_url": null,
               "inquiry_id": null, "session_token": null})
    );
    let (_, enhanced) = server
        .post("/v1/kyc/start", &start_body(&server, &wallet, 2))
        .await;
    assert_eq!(enhanced["inquiry_id"], "inq_2");
    assert_eq!(enhanced["kyc_tier"], 1);
    assert_eq!(
        persona.lock().unwrap().creates[1]["data"]["attributes"]["inquiry-template-id"],
        "itmpl_enhanced"
    );
    // Declined: the tier stays.
    let declined = event("inquiry.declined", "inq_2", "declined");
    let (status, _) = webhook(
        &server,
        declined.clone(),
        Some(signature_header(&declined, WEBHOOK_SECRET, now)),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, read) = server
        .get(&format!("/v1/kyc/status/{}", wallet.address))
        .await;
    assert_eq!(read["kyc_tier"], 1);
    assert_eq!(read["inquiry"]["status"], "declined");

    // Another integration's inquiry, or an event about something else: acknowledged, ignored.
    let foreign = event("inquiry.approved", "inq_elsewhere", "approved");
    let (_, answer) = webhook(
        &server,
        foreign.clone(),
        Some(signature_header(&foreign, WEBHOOK_SECRET, now)),
    )
    .await;
    assert_eq!(answer["outcome"], "unknown_inquiry");
    let account = json!({"data": {"attributes": {"name": "account.created",
        "payload": {"data": {"type": "account", "id": "act_1"}}}}})
    .to_string()
    .into_bytes();
    let (_, answer) = webhook(
        &server,
        account.clone(),
        Some(signature_header(&account, WEBHOOK_SECRET, now)),
    )
    .await;
    assert_eq!(answer["outcome"], "ignored");
}

#[tokio::test]
async fn without_a_session_token_on_create_the_client_resumes_and_an_outage_is_a_503() {
    let (base, persona_state) = persona(false).await;
    let server = start_with_persona(&base, ManualClock::at_system_time()).await;
    let wallet = Wallet::new(13);
    let (status, started) = server
        .post("/v1/kyc/start", &start_body(&server, &wallet, 2))
        .await;
    assert_eq!(status, StatusCode::OK, "{started}");
    assert_eq!(started["session_token"], "token-resume-inq_1");
    assert_eq!(persona_state.lock().unwrap().resumes, ["inq_1"]);

    // A provider that refuses the key (or does not answer) is the documented 503.
    let down = TestServer::start_at(ManualClock::at_system_time(), move |c| {
        c.persona_api_key = Some("wrong-key".into());
        c.persona_api_url = Some(base);
        c.persona_template_tier1 = Some("itmpl_basic".into());
        c.persona_template_tier2 = Some("itmpl_enhanced".into());
    })
    .await;
    let (status, answer) = down
        .post("/v1/kyc/start", &start_body(&down, &wallet, 1))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{answer}");
    assert_eq!(answer["error"], "kyc_unavailable");
    let (_, read) = down
        .get(&format!("/v1/kyc/status/{}", wallet.address))
        .await;
    assert_eq!(read["inquiry"], Value::Null, "nothing recorded");
    // No secret configured: every webhook is refused.
    let body = event("inquiry.approved", "inq_1", "approved");
    let (status, _) = webhook(
        &down,
        body.clone(),
        Some(signature_header(&body, WEBHOOK_SECRET, down.clock.now())),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_local_provider_opens_inquiries_that_only_a_signed_webhook_completes() {
    let clock = ManualClock::at_system_time();
    let server = TestServer::start_at(clock.clone(), |c| {
        c.kyc_webhook_secret = Some(WEBHOOK_SECRET.into());
    })
    .await;
    let wallet = Wallet::new(14);
    let (status, started) = server
        .post("/v1/kyc/start", &start_body(&server, &wallet, 1))
        .await;
    assert_eq!(status, StatusCode::OK, "{started}");
    let inquiry = started["inquiry_id"].as_str().unwrap().to_owned();
    assert!(inquiry.starts_with("inq_local_"), "{inquiry}");
    assert!(started["kyc_url"]
        .as_str()
        .unwrap()
        .contains(&format!("inquiry-id={inquiry}")));
    let (_, tier) = server
        .get(&format!("/v1/kyc/tier/{}", wallet.address))
        .await;
    assert_eq!(tier["kyc_tier"], 0, "opening verifies nothing");
    let approved = event("inquiry.approved", &inquiry, "approved");
    let (status, answer) = webhook(
        &server,
        approved.clone(),
        Some(signature_header(&approved, WEBHOOK_SECRET, clock.now())),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["raised_to"], 1);
    let (_, tier) = server
        .get(&format!("/v1/kyc/tier/{}", wallet.address))
        .await;
    assert_eq!(tier["kyc_tier"], 1);
}

/// The Chainalysis stand-in: `GET /api/v1/address/<address>` with `X-API-Key`.
#[handler]
async fn identifications(
    request: &Request,
    Path(address): Path<String>,
    Data(calls): Data<&Arc<AtomicUsize>>,
) -> Response {
    calls.fetch_add(1, Ordering::SeqCst);
    if request.header("x-api-key") != Some("chainalysis-test-key") {
        return (
            PoemStatus::FORBIDDEN,
            PoemJson(json!({"message": "Forbidden"})),
        )
            .into_response();
    }
    let found = if address == Wallet::new(21).address {
        json!([{"category": "sanctions", "name": "SANCTIONS: OFAC SDN Example",
                "description": "listed", "url": "https://example.invalid/sdn"}])
    } else {
        json!([])
    };
    PoemJson(json!({"identifications": found})).into_response()
}

async fn shield_prepare(server: &TestServer, wallet: &Wallet) -> (StatusCode, Value) {
    server
        .post(
            "/v1/shield/back",
            &json!({"wallet": wallet.address, "protocol_id": "ab".repeat(32), "side": "safe",
                    "amount_sol": 1.0}),
        )
        .await
}

#[tokio::test]
async fn a_wallet_screening_flags_is_blocked_from_writes_until_an_operator_lifts_it() {
    let calls = Arc::new(AtomicUsize::new(0));
    let chainalysis = common::serve_locally(
        Route::new()
            .at("/api/v1/address/:address", poem::get(identifications))
            .data(calls.clone()),
    )
    .await;
    let clock = ManualClock::at_system_time();
    let api = chainalysis.clone();
    let server = TestServer::start_at(clock.clone(), move |c| {
        c.chainalysis_api_key = Some("chainalysis-test-key".into());
        c.chainalysis_api_url = Some(api);
    })
    .await;
    let clean = Wallet::new(20);
    let sanctioned = Wallet::new(21);

    let (status, screened) = server
        .admin_post("/v1/kyc/screen", &json!({"wallet": clean.address}))
        .await;
    assert_eq!(status, StatusCode::OK, "{screened}");
    assert_eq!(
        (
            screened["flagged"].clone(),
            screened["blocked"].clone(),
            screened["provider"].clone()
        ),
        (json!(false), json!(false), json!("chainalysis"))
    );
    // Within a day the screening is answered from the store; the provider is asked once.
    clock.advance(3_600);
    let (_, again) = server
        .post("/v1/kyc/screen", &json!({"wallet": clean.address}))
        .await;
    assert_eq!(again["screened_at"], screened["screened_at"]);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Before the block, the prepare is refused for its own reasons (no such coverage), and
    // the wallet's standing is kept in memory.
    let (status, before) = shield_prepare(&server, &sanctioned).await;
    assert_ne!(before["error"], "wallet_blocked", "{status} {before}");

    // Anyone may have a wallet screened, and learns whether it is blocked (every prepare for
    // it says so too), not the verdict: no flag, reason or provider.
    let (status, public) = server
        .post("/v1/kyc/screen", &json!({"wallet": sanctioned.address}))
        .await;
    assert_eq!(status, StatusCode::OK, "{public}");
    assert_eq!(public["blocked"], true);
    assert_eq!(keys(&public), ["blocked", "ok", "screened_at", "wallet"]);
    assert!(!public.to_string().contains("OFAC"), "{public}");
    // The operator sees the verdict, from the screening or from the status.
    let (status, screened) = server
        .admin_post("/v1/kyc/screen", &json!({"wallet": sanctioned.address}))
        .await;
    assert_eq!(status, StatusCode::OK, "{screened}");
    assert_eq!(screened["flagged"], true);
    assert_eq!(screened["blocked"], true);
    assert_eq!(screened["reason"], "sanctions: SANCTIONS: OFAC SDN Example");
    let status_path = format!("/v1/kyc/status/{}", sanctioned.address);
    let (_, operator) = server
        .admin_request(
            common::ADMIN_WALLET,
            reqwest::Method::GET,
            &status_path,
            None,
        )
        .await;
    assert_eq!(
        operator["screening"]["reason"],
        "sanctions: SANCTIONS: OFAC SDN Example"
    );
    assert_eq!(operator["screening"]["flagged"], true);
    let (_, read) = server.get(&status_path).await;
    assert!(read.get("screening").is_none(), "{read}");
    assert!(!read.to_string().contains("OFAC"), "{read}");

    // Its protocol writes and its KYC are refused at once.
    let (status, refused) = shield_prepare(&server, &sanctioned).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["error"], "wallet_blocked");
    let (status, refused) = server
        .post("/v1/kyc/start", &start_body(&server, &sanctioned, 1))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["error"], "wallet_blocked");
    let (_, read) = server
        .get(&format!("/v1/kyc/status/{}", sanctioned.address))
        .await;
    assert_eq!(read["blocked"], true);
    let (status, clean_prepare) = shield_prepare(&server, &clean).await;
    assert_ne!(clean_prepare["error"], "wallet_blocked", "{status}");

    // Only the operator lifts it.
    let (status, _) = server
        .post(
            "/v1/admin/kyc/unblock",
            &json!({"wallet": sanctioned.address}),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, lifted) = server
        .admin_post(
            "/v1/admin/kyc/unblock",
            &json!({"wallet": sanctioned.address}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{lifted}");
    assert_eq!(lifted["unblocked"], true);
    let (_, again) = server
        .admin_post(
            "/v1/admin/kyc/unblock",
            &json!({"wallet": sanctioned.address}),
        )
        .await;
    assert_eq!(again["unblocked"], false, "nothing left to lift");
    // The lift, once, in the operators' log.
    assert_eq!(
        common::operators_log(&server).await,
        vec![(
            "wallet.unblock".to_owned(),
            sanctioned.address.to_string(),
            common::ADMIN_WALLET.to_owned()
        )]
    );
    let (status, after) = shield_prepare(&server, &sanctioned).await;
    assert_ne!(after["error"], "wallet_blocked", "{status} {after}");

    // The review stands: a later screening that flags it again does not block it again.
    clock.advance(narrative_api::domain::kyc::SCREENING_VALID_SECS + 1);
    let (_, rescreened) = server
        .admin_post("/v1/kyc/screen", &json!({"wallet": sanctioned.address}))
        .await;
    assert_eq!(rescreened["flagged"], true);
    assert_eq!(rescreened["blocked"], false);
    assert_ne!(
        rescreened["screened_at"], screened["screened_at"],
        "screened again"
    );
}

#[tokio::test]
async fn screening_that_cannot_be_asked_is_a_503_and_the_local_list_flags_its_wallets() {
    let down = TestServer::start_at(ManualClock::at_system_time(), |c| {
        c.chainalysis_api_key = Some("wrong".into());
        c.chainalysis_api_url = Some("http://127.0.0.1:9".into());
    })
    .await;
    let wallet = Wallet::new(22);
    let (status, answer) = down
        .post("/v1/kyc/screen", &json!({"wallet": wallet.address}))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{answer}");
    assert_eq!(answer["error"], "screening_unavailable");

    let listed = Wallet::new(23);
    let address = listed.address.clone();
    let local = TestServer::start_at(ManualClock::at_system_time(), move |c| {
        c.screening_blocklist = vec![address];
    })
    .await;
    let (_, screened) = local
        .admin_post("/v1/kyc/screen", &json!({"wallet": listed.address}))
        .await;
    assert_eq!(
        (screened["provider"].clone(), screened["blocked"].clone()),
        (json!("local"), json!(true))
    );
    let (_, screened) = local
        .post("/v1/kyc/screen", &json!({"wallet": wallet.address}))
        .await;
    assert_eq!(screened["blocked"], false);
}
