//! Limits that hold (issue 26, section 3): the per-IP limit is charged before an API key is
//! looked up, the caller's address is believed from forwarding headers only behind a trusted
//! proxy (IPv6 callers counted per /64), the routes that spend money have per-IP daily caps (and
//! fail closed when Redis cannot count them), self-registered keys share their address's budget,
//! and a holder check reads the ledger once per wallet per few minutes.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine;
use common::{clock_at_hour_start, sample, serve_locally, TestServer};
use narrative_sdk::Pubkey;
use poem::web::{Data, Json as PoemJson};
use poem::{handler, post, EndpointExt, IntoResponse, Route};
use rand::RngCore;
use reqwest::StatusCode;
use serde_json::{json, Value};

const REDIS_URL: &str = "redis://127.0.0.1:6379";

/// A key of the spec's shape that no one issued.
fn random_key() -> String {
    let mut secret = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut secret);
    let hex: String = secret.iter().map(|b| format!("{b:02x}")).collect();
    format!("nms_{:04x}_{hex}", rand::random::<u16>())
}

async fn lookups(server: &TestServer) -> f64 {
    sample(&server.get_text("/metrics").await, "api_key_lookups_total").expect("counter")
}

/// The global limiter's refusal, at the start of a minute window.
async fn assert_global_refusal(response: reqwest::Response) {
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.headers()["retry-after"], "60");
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body,
        json!({
            "statusCode": 429,
            "error": "Too Many Requests",
            "message": "Rate limit exceeded, retry in 60 seconds",
            "retryAfter": 60,
        })
    );
}

#[tokio::test]
async fn made_up_keys_are_limited_like_anonymous_traffic_and_cost_a_bounded_number_of_lookups() {
    let clock = clock_at_hour_start();
    let server = TestServer::start_at(clock.clone(), |c| c.anon_rate_per_min = 10).await;
    let (status, issued) = server
        .admin_post("/v1/admin/apikeys", &json!({"name": "bot"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{issued}");
    let good = issued["key"].as_str().unwrap().to_owned();
    clock.advance(60);

    let status_with = |key: String| {
        server
            .http
            .get(server.url("/v1/system/status"))
            .header("x-api-key", key)
            .send()
    };
    // One bad key replayed: looked up once, refused every time.
    let replayed = random_key();
    for n in 0..4 {
        let response = status_with(replayed.clone()).await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "replay {n}");
        assert_eq!(
            response.json::<Value>().await.unwrap(),
            json!({"ok": false, "error": "Invalid or missing API key"})
        );
    }
    assert_eq!(lookups(&server).await, 1.0);
    // A flood of fresh ones: the IP's anonymous budget (10 a minute, 4 spent) is all it gets;
    // before, each was looked up and none was ever limited.
    let mut refused = 0;
    for _ in 0..40 {
        let response = status_with(random_key()).await.unwrap();
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            refused += 1;
            assert_global_refusal(response).await;
        } else {
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        }
    }
    assert_eq!(refused, 34, "6 answered 401, the rest 429");
    assert_eq!(lookups(&server).await, 7.0, "1 + 6 lookups, not 41");
    // Anonymous requests from that address are refused too: it is the same budget.
    assert_global_refusal(
        server
            .http
            .get(server.url("/v1/system/status"))
            .send()
            .await
            .unwrap(),
    )
    .await;

    // A minute on, a live key passes; once found live its requests are not held to the
    // anonymous rate (30 > 10), only to its tier's.
    clock.advance(60);
    for n in 0..30 {
        let response = status_with(good.clone()).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "request {n}");
    }
    server.stop().await;
}

/// Anyone may register agents (five an hour from one address), each with a Free key of its own
/// rate. Self-registered keys used from one address share its budget for them, so registering
/// keys does not multiply the address's rate; an operator's key beside them keeps its tier's.
#[tokio::test]
async fn self_registered_keys_share_their_addresss_budget_and_operators_keys_do_not() {
    let clock = clock_at_hour_start();
    let server = TestServer::start_at(clock.clone(), |c| c.agent_keys_per_ip_per_min = 100).await;
    let mut agent_keys = Vec::new();
    for n in 0..3 {
        let (status, registered) = server
            .post(
                "/v1/agent/register",
                &json!({"wallet_address": Pubkey::new_unique().to_string(), "name": format!("bot {n}")}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{registered}");
        agent_keys.push(registered["agent"]["api_key"].as_str().unwrap().to_owned());
    }
    let (status, issued) = server
        .admin_post("/v1/admin/apikeys", &json!({"name": "partner"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{issued}");
    let operator_key = issued["key"].as_str().unwrap().to_owned();
    clock.advance(60);

    let status_with = |key: &str| {
        server
            .http
            .get(server.url("/v1/system/status"))
            .header("x-api-key", key)
            .send()
    };
    // The first key's whole tier (60) and 40 from the second: the address's 100.
    for (key, requests) in [(&agent_keys[0], 60), (&agent_keys[1], 40)] {
        for n in 0..requests {
            let response = status_with(key).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "request {n}");
        }
    }
    // The second key is under its tier's 60 and the third unused, yet both are refused: the
    // address spent its budget for such keys (the global limiter's refusal, per address).
    for key in &agent_keys[1..] {
        assert_global_refusal(status_with(key).await.unwrap()).await;
    }
    // The first is past its own tier: that refusal names the tier.
    let response = status_with(&agent_keys[0]).await.unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        (&body["tier"], &body["limit"]),
        (&json!("free"), &json!(60))
    );
    // The operator's Free key from the same address is not counted with them: its whole tier.
    for n in 0..60 {
        let response = status_with(&operator_key).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "operator's request {n}");
    }
    // A minute on, the address's budget is back.
    clock.advance(60);
    let response = status_with(&agent_keys[2]).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    server.stop().await;
}

#[tokio::test]
async fn forwarding_headers_from_an_untrusted_peer_do_not_move_the_limiter() {
    let server = TestServer::start_at(clock_at_hour_start(), |c| c.anon_rate_per_min = 3).await;
    for n in 0..3 {
        let response = server
            .http
            .get(server.url("/v1/system/status"))
            .header("x-forwarded-for", format!("203.0.113.{n}"))
            .header("forwarded", format!("for=198.51.100.{n}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    // Rotating the header is the same caller: the socket peer.
    assert_global_refusal(
        server
            .http
            .get(server.url("/v1/system/status"))
            .header("x-forwarded-for", "203.0.113.99")
            .send()
            .await
            .unwrap(),
    )
    .await;
    server.stop().await;
}

#[tokio::test]
async fn behind_a_trusted_proxy_the_forwarded_caller_is_limited_and_ipv6_per_64() {
    let server = TestServer::start_at(clock_at_hour_start(), |c| {
        c.anon_rate_per_min = 2;
        c.trusted_proxies = vec!["127.0.0.1/8".into()];
    })
    .await;
    let from = |header: &'static str, value: &str| {
        server
            .http
            .get(server.url("/v1/system/status"))
            .header(header, value)
            .send()
    };
    // The right-most address the proxy did not add: a client-written left part moves nothing.
    for spoof in ["6.6.6.6", "7.7.7.7"] {
        let response = from("x-forwarded-for", &format!("{spoof}, 203.0.113.7"))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    assert_global_refusal(from("x-forwarded-for", "203.0.113.7").await.unwrap()).await;
    // The header the proxies do not write names nobody: a client's own `Forwarded`, passed on
    // by a proxy that only appends to X-Forwarded-For, leaves it the refused caller.
    for spoof in ["for=198.51.100.1", "for=198.51.100.2;proto=https"] {
        let response = server
            .http
            .get(server.url("/v1/system/status"))
            .header("forwarded", spoof)
            .header("x-forwarded-for", "203.0.113.7")
            .send()
            .await
            .unwrap();
        assert_global_refusal(response).await;
    }
    // Another caller behind the proxy has its own budget.
    for _ in 0..2 {
        assert_eq!(
            from("x-forwarded-for", "203.0.113.8")
                .await
                .unwrap()
                .status(),
            StatusCode::OK
        );
    }
    assert_global_refusal(from("x-forwarded-for", "203.0.113.8").await.unwrap()).await;
    // Two addresses of one IPv6 /64 are one caller; the next /64 is another.
    for address in ["2001:db8:1:2::1", "[2001:db8:1:2:ffff::9]:443"] {
        let response = from("x-forwarded-for", address).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    assert_global_refusal(from("x-forwarded-for", "2001:db8:1:2::77").await.unwrap()).await;
    assert_eq!(
        from("x-forwarded-for", "2001:db8:1:3::1")
            .await
            .unwrap()
            .status(),
        StatusCode::OK
    );
    server.stop().await;

    // Behind proxies that write RFC 7239's header, it is that one that names the caller.
    let server = TestServer::start_at(clock_at_hour_start(), |c| {
        c.anon_rate_per_min = 1;
        c.trusted_proxies = vec!["127.0.0.1/8".into()];
        c.trusted_proxy_header = "forwarded".into();
    })
    .await;
    let from = |forwarded: &'static str| {
        server
            .http
            .get(server.url("/v1/system/status"))
            .header("forwarded", forwarded)
            .header("x-forwarded-for", "192.0.2.1")
            .send()
    };
    assert_eq!(
        from("for=203.0.113.9;proto=https").await.unwrap().status(),
        StatusCode::OK
    );
    assert_global_refusal(from("for=\"203.0.113.9:443\"").await.unwrap()).await;
    assert_eq!(
        from("for=203.0.113.10").await.unwrap().status(),
        StatusCode::OK
    );
    server.stop().await;
}

fn wallet(n: u32) -> String {
    let mut bytes = [7u8; 32];
    bytes[..4].copy_from_slice(&n.to_le_bytes());
    Pubkey::new_from_array(bytes).to_string()
}

/// A daily cap's refusal: 429 `daily_limit_reached` with `resets_at` and `retry-after`.
fn assert_daily_cap(status: StatusCode, body: &Value, message: &str) {
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"], "daily_limit_reached", "{body}");
    assert_eq!(body["message"], message, "{body}");
    assert!(body["resets_at"].is_string(), "{body}");
}

#[tokio::test]
async fn fresh_wallets_from_one_ip_run_into_the_per_ip_daily_caps_of_paid_routes() {
    let clock = clock_at_hour_start();
    let server = TestServer::start_at(clock.clone(), |c| {
        c.polish_per_ip_daily = 4;
        c.screening_per_ip_daily = 2;
        c.passport_per_ip_daily = 3;
        c.idpass_per_ip_daily = 2;
    })
    .await;
    // Each wallet is under its own cap (3 polishes a day); the address is not.
    for n in 0..4 {
        let (status, body) = server
            .post(
                "/v1/narratives/polish-text",
                &json!({"thesis": "sol will flip eth", "wallet_address": wallet(n)}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, body) = server
        .post(
            "/v1/narratives/polish-voice",
            &json!({"transcript": "sol will flip eth", "wallet_address": wallet(4)}),
        )
        .await;
    assert_daily_cap(status, &body, "4 polishes per IP per day");

    for n in 0..2 {
        let (status, body) = server
            .post("/v1/kyc/screen", &json!({"wallet": wallet(n)}))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // A screening that stands asks no provider and costs nothing.
    let (status, _) = server
        .post("/v1/kyc/screen", &json!({"wallet": wallet(0)}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = server
        .post("/v1/kyc/screen", &json!({"wallet": wallet(2)}))
        .await;
    assert_daily_cap(status, &body, "2 screenings per IP per day");
    // KYC start screens its wallet too: a fresh wallet's signed start from the same address
    // is held to the same cap, before any inquiry is opened.
    let fresh = common::SigningWallet::new(77);
    let now = server.clock.now();
    let message = format!("narrative-market-service:kyc-start:{}:1", fresh.address);
    let (status, body) = server
        .post(
            "/v1/kyc/start",
            &json!({"wallet": fresh.address, "tier": 1, "issued_at": now,
                    "signature": fresh.sign_at(&message, now)}),
        )
        .await;
    assert_daily_cap(status, &body, "2 screenings per IP per day");

    for n in 0..3 {
        let (status, body) = server
            .get(&format!("/v1/verify/passport/{}", wallet(n)))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, body) = server
        .get(&format!("/v1/verify/passport/{}", wallet(3)))
        .await;
    assert_daily_cap(status, &body, "3 passport checks per IP per day");
    // A wallet's score checked lately is answered from memory, past the IP's cap and however
    // often it is asked: a per-wallet cap on this public route let anyone spend a wallet's
    // checks for the day (the eleventh was refused before).
    for _ in 0..12 {
        let (status, body) = server
            .get(&format!("/v1/verify/passport/{}", wallet(0)))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // Once the score is older than its TTL the provider is asked again, and that counts
    // against the address's spent cap: the memory is not a way around it.
    clock.advance(narrative_api::domain::verify::PASSPORT_CHECK_TTL_SECS);
    let (status, body) = server
        .get(&format!("/v1/verify/passport/{}", wallet(0)))
        .await;
    assert_daily_cap(status, &body, "3 passport checks per IP per day");

    // Every identity pass check asks the provider, a token it refuses included.
    let idpass = |n: u32| {
        let server = &server;
        async move {
            let body = json!({"wallet_address": wallet(n), "token": "not-a-pass"});
            server.post("/v1/verify/idpass", &body).await
        }
    };
    for n in 0..2 {
        let (status, body) = idpass(n).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"], "idpass_invalid", "{body}");
    }
    let (status, body) = idpass(2).await;
    assert_daily_cap(status, &body, "2 identity pass checks per IP per day");
    server.stop().await;
}

const MINT: Pubkey = Pubkey::new_from_array([0xAB; 32]);
const TOKEN_PROGRAM: &str = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";

/// A JSON-RPC node that knows the loyalty mint and no token account, counting what it is asked;
/// while `rate_limited`, it answers 429 as a public node over its quota does.
#[derive(Default)]
struct Node {
    calls: AtomicUsize,
    rate_limited: AtomicBool,
}

#[handler]
fn rpc(PoemJson(request): PoemJson<Value>, Data(node): Data<&Arc<Node>>) -> poem::Response {
    node.calls.fetch_add(1, Ordering::SeqCst);
    if node.rate_limited.load(Ordering::SeqCst) {
        return poem::Response::builder()
            .status(poem::http::StatusCode::TOO_MANY_REQUESTS)
            .header("retry-after", "10")
            .body("rate limited");
    }
    let result = match request["method"].as_str().unwrap_or_default() {
        "getMultipleAccounts" => {
            let accounts: Vec<Value> = request["params"][0]
                .as_array()
                .unwrap()
                .iter()
                .map(|address| {
                    if address.as_str() == Some(MINT.to_string().as_str()) {
                        json!({"lamports": 1_461_600u64, "owner": TOKEN_PROGRAM,
                               "data": [base64::engine::general_purpose::STANDARD.encode([0u8; 82]), "base64"],
                               "executable": false, "rentEpoch": 0, "space": 82})
                    } else {
                        Value::Null
                    }
                })
                .collect();
            json!({"context": {"slot": 300}, "value": accounts})
        }
        other => panic!("the node was asked {other}"),
    };
    PoemJson(json!({"jsonrpc": "2.0", "id": request["id"], "result": result})).into_response()
}

async fn holder_check(server: &TestServer, n: u32) -> (StatusCode, Value) {
    server
        .get(&format!("/v1/verify/holder/{}", wallet(n)))
        .await
}

#[tokio::test]
async fn a_holder_check_reads_the_ledger_once_per_wallet_within_its_ttl_and_is_capped_per_ip() {
    let node = Arc::new(Node::default());
    let rpc_url = serve_locally(Route::new().at("/", post(rpc)).data(node.clone())).await;
    let clock = clock_at_hour_start();
    let server = TestServer::start_at(clock.clone(), |c| {
        c.solana_rpc_url = rpc_url.into();
        c.loyalty_mint = Some(MINT.to_string());
        c.loyalty_min_balance = 100;
        c.holder_per_ip_daily = 3;
    })
    .await;
    let check = |n: u32| holder_check(&server, n);
    let (status, first) = check(1).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(
        (first["holder"].clone(), first["balance"].clone()),
        (json!(false), json!("0"))
    );
    let read = node.calls.load(Ordering::SeqCst);
    assert_eq!(read, 1, "one read of the mint and the wallet's accounts");
    // Within the TTL: the same answer, no ledger call, nothing charged to the IP.
    for _ in 0..5 {
        let (status, again) = check(1).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(again, first);
    }
    assert_eq!(node.calls.load(Ordering::SeqCst), read);
    // Past it, the ledger is read again.
    clock.advance(300);
    assert_eq!(check(1).await.0, StatusCode::OK);
    assert_eq!(node.calls.load(Ordering::SeqCst), read + 1);
    // Two reads spent; one more wallet, then the IP's cap.
    assert_eq!(check(2).await.0, StatusCode::OK);
    let (status, body) = check(3).await;
    assert_daily_cap(status, &body, "3 holder checks per IP per day");
    assert_eq!(node.calls.load(Ordering::SeqCst), read + 2);
    server.stop().await;
}

/// A node over its quota (HTTP 429) makes a holder check 503 `ledger_unavailable` after one
/// call, not after retries that hold the request; nothing is recorded or cached, so the check
/// reads the ledger again once the node answers.
#[tokio::test]
async fn a_rate_limited_node_is_a_503_after_one_call_and_nothing_is_kept() {
    use sea_orm::{EntityTrait, PaginatorTrait};
    let node = Arc::new(Node::default());
    let rpc_url = serve_locally(Route::new().at("/", post(rpc)).data(node.clone())).await;
    let server = TestServer::start_at(clock_at_hour_start(), |c| {
        c.solana_rpc_url = rpc_url.into();
        c.loyalty_mint = Some(MINT.to_string());
        c.loyalty_min_balance = 100;
    })
    .await;
    node.rate_limited.store(true, Ordering::SeqCst);
    let (status, refused) = holder_check(&server, 7).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    assert_eq!(refused["error"], "ledger_unavailable", "{refused}");
    assert_eq!(node.calls.load(Ordering::SeqCst), 1, "no retries");
    let recorded = || async {
        narrative_store::entities::wallet_verifications::Entity::find()
            .count(server.db.store.db())
            .await
            .unwrap()
    };
    assert_eq!(
        recorded().await,
        0,
        "nothing recorded for the refused check"
    );

    node.rate_limited.store(false, Ordering::SeqCst);
    let (status, answered) = holder_check(&server, 7).await;
    assert_eq!(status, StatusCode::OK, "{answered}");
    assert_eq!(answered["holder"], false);
    assert_eq!(
        node.calls.load(Ordering::SeqCst),
        2,
        "read again, not cached"
    );
    assert_eq!(recorded().await, 1, "the answered check is recorded");
    server.stop().await;
}

/// A TCP relay to the local Redis that can be cut: the service's limiter is pointed at it, and
/// cutting it is Redis going away (open connections dropped, new ones refused).
struct Relay {
    url: String,
    tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Relay {
    async fn start() -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("redis://{}", listener.local_addr().unwrap());
        let tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>> = Arc::default();
        let held = tasks.clone();
        let accept = tokio::spawn(async move {
            loop {
                let Ok((mut inbound, _)) = listener.accept().await else {
                    return;
                };
                let relay = tokio::spawn(async move {
                    let target = REDIS_URL.trim_start_matches("redis://");
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                held.lock().unwrap().push(relay);
            }
        });
        tasks.lock().unwrap().push(accept);
        Relay { url, tasks }
    }

    /// Closes the port and every relayed connection.
    async fn cut(&self) {
        let tasks: Vec<_> = self.tasks.lock().unwrap().drain(..).collect();
        for task in tasks {
            task.abort();
            let _ = task.await;
        }
    }
}

async fn polish_once(server: &TestServer) -> (StatusCode, Value) {
    server
        .post(
            "/v1/narratives/polish-text",
            &json!({"thesis": "sol will flip eth", "wallet_address": wallet(1)}),
        )
        .await
}

#[tokio::test]
async fn cost_quotas_fail_closed_when_redis_is_down_and_plain_rate_limits_stay_open() {
    let relay = Relay::start().await;
    let namespace = format!("nms-test-{}", uuid::Uuid::new_v4().simple());
    let url = relay.url.clone();
    let server = TestServer::start_at(clock_at_hour_start(), move |c| {
        c.redis_url = Some(url.into());
        c.rate_limit_namespace = namespace;
    })
    .await;
    let polish = || polish_once(&server);
    let (status, body) = polish().await;
    assert_eq!(status, StatusCode::OK, "counted through Redis: {body}");

    relay.cut().await;
    // Before, an uncounted polish went through to the provider.
    let (status, body) = polish().await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(
        body,
        json!({"error": "rate_limiter_unavailable",
               "message": "the limits of this route cannot be counted right now; retry shortly"})
    );
    let (status, body) = server.get("/v1/system/status").await;
    assert_eq!(
        status,
        StatusCode::OK,
        "plain rate limits fail open: {body}"
    );
    server.stop().await;
}

/// Rows of the retention test, by table: (old, new) ids.
type Kept = HashMap<&'static str, (String, String)>;

#[tokio::test]
async fn the_retention_job_deletes_what_is_past_its_period_and_keeps_the_rest() {
    use narrative_api::clock::Clock;
    use narrative_api::domain::{retention, wallet_proof};
    use narrative_store::entities::{
        jobs, narrative_mints, prepared_transactions, shield_partner_applications,
        shield_probe_log, used_wallet_signatures,
    };
    use sea_orm::{ActiveValue::Set, EntityTrait, PaginatorTrait};

    let clock = clock_at_hour_start();
    let server = TestServer::start_at(clock.clone(), |_| {}).await;
    let db = server.db.store.db();
    let now = server.clock.now();
    // The job is queued for ever once the service starts.
    // The service queues it as it starts, beside the server.
    let perpetual = common::eventually_some("the retention job queued", || async {
        jobs::Entity::find()
            .all(db)
            .await
            .unwrap()
            .into_iter()
            .find(|job| job.kind == "retention")
    })
    .await;
    assert_eq!(perpetual.singleton.as_deref(), Some("retention"));
    // Its first run (due at the start) is over before the rows are written, so what follows is
    // the test's own run; the next is an hour away on the manual clock.
    common::eventually("the first retention run", || async {
        jobs::Entity::find_by_id(perpetual.id)
            .one(db)
            .await
            .unwrap()
            .is_some_and(|job| job.run_at > now && job.status == "queued")
    })
    .await;

    let mut kept = Kept::new();
    // Prepared transactions: unconfirmed ones go after a day, moves into outside venues (whose
    // confirm is their only record) after 30; confirmed ones stay.
    let day = retention::UNCONFIRMED_PREPARED_SECS;
    let month = retention::UNCONFIRMED_VENUE_MOVE_SECS;
    for (id, kind, status, age) in [
        ("old-prepared", "shield_back", "prepared", day + 1),
        ("new-prepared", "shield_back", "prepared", day - 60),
        ("old-confirmed", "shield_back", "confirmed", 400 * 86_400),
        (
            "old-publishable-mint",
            "narrative_mint",
            "prepared",
            day + 1,
        ),
        ("old-lapsed-mint", "narrative_mint", "prepared", day + 1),
        ("day-old-deposit", "defi_deposit", "prepared", day + 1),
        ("month-old-deposit", "defi_deposit", "prepared", month - 60),
        ("lapsed-borrow", "borrow", "prepared", month + 1),
        ("day-old-creation", "market_create", "prepared", day + 1),
    ] {
        prepared_transactions::Entity::insert(prepared_transactions::ActiveModel {
            id: Set(id.into()),
            kind: Set(kind.into()),
            wallet: Set(wallet(1)),
            message: Set(vec![1, 2, 3]),
            params: Set(json!({})),
            status: Set(status.into()),
            signature: Set(None),
            error: Set(None),
            created_at: Set(now - age),
            confirmed_at: Set(None),
            blockhash: Set(None),
        })
        .exec(db)
        .await
        .unwrap();
    }
    kept.insert("prepared", ("old-prepared".into(), "new-prepared".into()));
    // A prepare-mint whose narrative can still be published (it may have landed with its
    // publish refused) stays until the market's deadline; one past it goes. The mint itself
    // stays a month past the deadline (publish refuses it as `deadline_passed` meanwhile),
    // and a published one stays.
    for (prepared_id, deadline_at, status) in [
        ("old-publishable-mint", now + 10 * 86_400, "landed"),
        ("old-lapsed-mint", now - 1, "prepared"),
        ("long-lapsed-mint", now - month - 1, "landed"),
        ("published-mint", now - month - 1, "published"),
    ] {
        narrative_mints::Entity::insert(narrative_mints::ActiveModel {
            narrative_id: Set(format!("narrative-of-{prepared_id}")),
            prepared_id: Set(prepared_id.into()),
            wallet: Set(wallet(1)),
            deadline_days: Set(30),
            deadline_at: Set(deadline_at),
            stake_lamports: Set(4_000_000_000),
            treasury_lamports: Set(1_000_000_000),
            status: Set(status.into()),
            created_at: Set(now - retention::UNCONFIRMED_PREPARED_SECS - 1),
            published_at: Set(None),
        })
        .exec(db)
        .await
        .unwrap();
    }
    for (route, age) in [
        ("old", retention::PROBE_LOG_SECS + 1),
        ("new", retention::PROBE_LOG_SECS - 60),
    ] {
        shield_probe_log::Entity::insert(shield_probe_log::ActiveModel {
            ip: Set(Some("10.0.0.1".into())),
            route: Set(route.into()),
            wallet: Set(None),
            outcome: Set("ok".into()),
            created_at: Set(now - age),
            refused: Set(false),
            ..Default::default()
        })
        .exec(db)
        .await
        .unwrap();
    }
    for (id, age) in [
        ("old-application", retention::PARTNER_APPLICATION_SECS + 1),
        ("new-application", retention::PARTNER_APPLICATION_SECS - 60),
    ] {
        shield_partner_applications::Entity::insert(shield_partner_applications::ActiveModel {
            id: Set(id.into()),
            protocol_name: Set("p".into()),
            contact: Set("c@example.com".into()),
            wallet: Set(None),
            website: Set(None),
            message: Set(None),
            created_at: Set(now - age),
        })
        .exec(db)
        .await
        .unwrap();
    }
    // Finished jobs: done ones go after 14 days, but not settlements nor dead ones.
    let mut job_ids = HashMap::new();
    for (name, kind, status, age) in [
        (
            "old-done",
            "deliver_push",
            "done",
            retention::FINISHED_JOB_SECS + 1,
        ),
        (
            "new-done",
            "deliver_push",
            "done",
            retention::FINISHED_JOB_SECS - 60,
        ),
        ("old-settlement", "settle_narrative", "done", 400 * 86_400),
        ("old-dead", "deliver_push", "dead", 400 * 86_400),
    ] {
        // Due a day on, so no worker takes it before its status is set.
        let id = common::fixtures::job(db, now, kind, None, json!({}), status, None).await;
        jobs::Entity::update(jobs::ActiveModel {
            id: Set(id),
            updated_at: Set(now - age),
            ..Default::default()
        })
        .exec(db)
        .await
        .unwrap();
        job_ids.insert(name, id);
    }
    for (signature, age) in [
        ("old-signature", wallet_proof::REMEMBERED_SECS + 1),
        // Past the window, but remembered for processes whose clocks run behind.
        ("new-signature", wallet_proof::REMEMBERED_SECS - 60),
    ] {
        used_wallet_signatures::Entity::insert(used_wallet_signatures::ActiveModel {
            signature: Set(signature.into()),
            wallet: Set(wallet(1)),
            purpose: Set("terms".into()),
            issued_at: Set(now - age),
            used_at: Set(now - age),
        })
        .exec(db)
        .await
        .unwrap();
    }

    let deleted = retention::apply(db, now).await.unwrap();
    assert_eq!(
        deleted,
        retention::Deleted {
            prepared_transactions: 3,
            probe_log: 1,
            partner_applications: 1,
            jobs: 1,
            wallet_signatures: 1,
            narrative_mints: 1,
        }
    );
    let mut mints: Vec<String> = narrative_mints::Entity::find()
        .all(db)
        .await
        .unwrap()
        .into_iter()
        .map(|row| row.prepared_id)
        .collect();
    mints.sort();
    assert_eq!(
        mints,
        ["old-lapsed-mint", "old-publishable-mint", "published-mint"]
    );
    let prepared: Vec<String> = prepared_transactions::Entity::find()
        .all(db)
        .await
        .unwrap()
        .into_iter()
        .map(|row| row.id)
        .collect();
    assert!(!prepared.contains(&kept["prepared"].0));
    assert!(prepared.contains(&kept["prepared"].1));
    assert!(prepared.contains(&"old-confirmed".to_owned()));
    assert!(prepared.contains(&"old-publishable-mint".to_owned()));
    assert!(!prepared.contains(&"old-lapsed-mint".to_owned()));
    assert!(prepared.contains(&"day-old-deposit".to_owned()));
    assert!(prepared.contains(&"month-old-deposit".to_owned()));
    assert!(!prepared.contains(&"lapsed-borrow".to_owned()));
    // A market creation's fee is spent: its confirm is what moves it on to review or open.
    assert!(prepared.contains(&"day-old-creation".to_owned()));
    let probes: Vec<String> = shield_probe_log::Entity::find()
        .all(db)
        .await
        .unwrap()
        .into_iter()
        .map(|row| row.route)
        .collect();
    assert_eq!(probes, vec!["new".to_owned()]);
    let applications = shield_partner_applications::Entity::find()
        .all(db)
        .await
        .unwrap();
    assert_eq!(applications.len(), 1);
    assert_eq!(applications[0].id, "new-application");
    for (name, stays) in [
        ("old-done", false),
        ("new-done", true),
        ("old-settlement", true),
        ("old-dead", true),
    ] {
        let found = jobs::Entity::find_by_id(job_ids[name])
            .one(db)
            .await
            .unwrap();
        assert_eq!(found.is_some(), stays, "{name}");
    }
    let signatures = used_wallet_signatures::Entity::find()
        .all(db)
        .await
        .unwrap();
    assert_eq!(signatures.len(), 1);
    assert_eq!(signatures[0].signature, "new-signature");

    // A day on, the rule catches up with the rows that were new (the probe log keeps its
    // newest row, so ids never start over).
    clock.advance(retention::PROBE_LOG_SECS);
    retention::apply(db, clock.now()).await.unwrap();
    assert_eq!(
        prepared_transactions::Entity::find()
            .count(db)
            .await
            .unwrap(),
        1
    );
    assert_eq!(shield_probe_log::Entity::find().count(db).await.unwrap(), 1);
    assert_eq!(
        used_wallet_signatures::Entity::find()
            .count(db)
            .await
            .unwrap(),
        0
    );
    server.stop().await;
}
