//! The liquid-staking venues' rate APIs: the real clients (Jito's Kobe API, Marinade's API)
//! against local servers that answer as those APIs document, and the APY read over HTTP using
//! them: `rate_api` while a source answers, its last good value marked `stale` once it fails,
//! the configured value for a source never configured.

mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use common::{eventually, serve_locally as serve, TestServer};
use narrative_api::clock::ManualClock;
use narrative_api::providers::venue_rates::{JitoKobe, MarinadeApi, RateApi};
use poem::web::{Data, Json};
use poem::{get, handler, EndpointExt, IntoResponse, Route};
use reqwest::StatusCode;
use serde_json::json;
use tokio::sync::Notify;

/// What the local APIs answer, switchable mid-test.
#[derive(Default)]
struct Answers {
    failing: AtomicBool,
    /// 0: documented answer; 1: implausible APY; 2: no APY in the answer.
    shape: AtomicUsize,
    calls: AtomicUsize,
    /// Kobe's answers wait for `release` while this is set.
    holding: AtomicBool,
    release: Notify,
}

fn outage() -> poem::Response {
    poem::Response::builder()
        .status(poem::http::StatusCode::BAD_GATEWAY)
        .finish()
}

/// Kobe's `stake_pool_stats`: daily buckets oldest first, APY as a fraction.
#[handler]
async fn kobe_stats(Data(answers): Data<&Arc<Answers>>) -> poem::Response {
    answers.calls.fetch_add(1, Ordering::SeqCst);
    if answers.holding.load(Ordering::SeqCst) {
        answers.release.notified().await;
    }
    if answers.failing.load(Ordering::SeqCst) {
        return outage();
    }
    let newest = match answers.shape.load(Ordering::SeqCst) {
        0 => json!(0.0712),
        1 => json!(57.0),
        _ => json!(null),
    };
    Json(json!({
        "aggregated_mev_rewards": 1,
        "apy": [{"data": 0.069, "date": "2026-11-24T00:00:00Z"},
                {"data": newest, "date": "2026-11-25T00:00:00Z"}],
        "tvl": [], "mev_rewards": [], "num_validators": [], "supply": []
    }))
    .into_response()
}

/// Marinade's `msol/apy/30d`: the mSOL price's annualised growth as a fraction.
#[handler]
fn marinade_apy(Data(answers): Data<&Arc<Answers>>) -> poem::Response {
    answers.calls.fetch_add(1, Ordering::SeqCst);
    if answers.failing.load(Ordering::SeqCst) {
        return outage();
    }
    Json(
        json!({"value": 0.0685, "start_time": "2026-10-26T00:00:00Z", "start_price": 1.31,
                "end_time": "2026-11-25T00:00:00Z", "end_price": 1.3173}),
    )
    .into_response()
}

async fn apis(answers: &Arc<Answers>) -> String {
    serve(
        Route::new()
            .at("/api/v1/stake_pool_stats", get(kobe_stats))
            .at("/msol/apy/30d", get(marinade_apy))
            .data(answers.clone()),
    )
    .await
}

/// A server whose staking rate APIs are the local ones answering `answers`, on a clock the test
/// moves, with `configure`'s settings besides.
async fn on_local_apis(
    answers: &Arc<Answers>,
    configure: impl FnOnce(&mut narrative_api::Config),
) -> (TestServer, Arc<ManualClock>) {
    let base = apis(answers).await;
    let clock = ManualClock::at_system_time();
    let server = TestServer::start_at(clock.clone(), |c| {
        c.stake_a_rate_api = Some(base.clone());
        c.stake_b_rate_api = Some(base);
        configure(c);
    })
    .await;
    (server, clock)
}

/// A wallet address for the prepares.
const WALLET: &str = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";

#[tokio::test]
async fn the_clients_read_the_documented_answers_and_refuse_the_rest() {
    let answers = Arc::new(Answers::default());
    let base = apis(&answers).await;
    let kobe = JitoKobe::new(&base).unwrap();
    let marinade = MarinadeApi::new(&format!("{base}/")).unwrap();
    assert!((kobe.apy_pct().await.unwrap() - 7.12).abs() < 1e-9);
    assert!((marinade.apy_pct().await.unwrap() - 6.85).abs() < 1e-9);
    answers.shape.store(1, Ordering::SeqCst);
    assert!(kobe.apy_pct().await.is_err(), "5,700 % is no APY");
    answers.shape.store(2, Ordering::SeqCst);
    assert!(kobe.apy_pct().await.is_err(), "an answer without an APY");
    answers.failing.store(true, Ordering::SeqCst);
    assert!(kobe.apy_pct().await.is_err(), "a 502 is an outage");
    assert!(marinade.apy_pct().await.is_err());
    let nowhere = JitoKobe::new("http://127.0.0.1:9").unwrap();
    assert!(nowhere.apy_pct().await.is_err(), "no server");
}

#[tokio::test]
async fn the_apy_read_keeps_a_failed_sources_last_good_value_and_says_so() {
    let answers = Arc::new(Answers::default());
    let (server, clock) = on_local_apis(&answers, |c| {
        c.defi_configured_apys = vec!["pool_a=4.25".into(), "lend_a=3.5".into()];
    })
    .await;
    let (status, first) = server.get("/v1/defi/apys").await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert!(
        (first["apys"]["stake_a"].as_f64().unwrap() - 7.12).abs() < 1e-9,
        "{first}"
    );
    assert!((first["apys"]["stake_b"].as_f64().unwrap() - 6.85).abs() < 1e-9);
    assert_eq!(first["sources"]["stake_a"]["source"], "rate_api");
    assert_eq!(first["sources"]["stake_a"]["stale"], false);
    assert_eq!(first["apys"]["pool_a"], 4.25);
    assert_eq!(first["sources"]["pool_a"]["source"], "configured");
    assert_eq!(first["sources"]["lend_c"]["source"], "none");
    // Neither of lend_a's markets answered, so its headline is the value configured for it.
    assert_eq!(first["sources"]["lend_a_sol"]["source"], "none", "{first}");
    assert_eq!(first["apys"]["lend_a"], 3.5);
    assert_eq!(first["sources"]["lend_a"]["source"], "configured");
    assert_eq!(first["source"], "mixed");
    let calls = answers.calls.load(Ordering::SeqCst);
    assert_eq!(calls, 2, "one call per source");

    // Within the minute the board answers without asking the sources again.
    clock.advance(59);
    let (_, again) = server.get("/v1/defi/apys").await;
    assert_eq!(again["polled_at"], first["polled_at"]);
    assert_eq!(answers.calls.load(Ordering::SeqCst), calls);

    // The sources fail: after the minute, the last good values stay, marked stale.
    answers.failing.store(true, Ordering::SeqCst);
    clock.advance(1);
    let (status, stale) = server.get("/v1/defi/apys").await;
    assert_eq!(status, StatusCode::OK, "{stale}");
    assert_eq!(
        answers.calls.load(Ordering::SeqCst),
        calls + 2,
        "polled again"
    );
    assert_eq!(stale["apys"]["stake_a"], first["apys"]["stake_a"]);
    assert_eq!(stale["sources"]["stake_a"]["stale"], true);
    assert_eq!(
        stale["sources"]["stake_a"]["polled_at"],
        first["sources"]["stake_a"]["polled_at"]
    );
    assert_ne!(stale["polled_at"], first["polled_at"]);

    // They answer again: fresh values, no longer stale.
    answers.failing.store(false, Ordering::SeqCst);
    clock.advance(60);
    let (_, back) = server.get("/v1/defi/apys").await;
    assert_eq!(back["sources"]["stake_b"]["stale"], false);
}

/// A rate API that does not answer holds only the request polling it. The deposit prepare's
/// routing reads the same board: while the poll waits on Jito's API, a prepare answers on the
/// board being replaced instead of queueing behind the poll (before, every prepare waited for
/// it, here until the rate client's 3 s timeout, which would mark the value stale).
#[tokio::test]
async fn a_rate_api_that_hangs_holds_only_the_request_polling_it() {
    let answers = Arc::new(Answers::default());
    let (server, clock) = on_local_apis(&answers, |_| {}).await;
    let (_, first) = server.get("/v1/defi/apys").await;
    assert_eq!(answers.calls.load(Ordering::SeqCst), 2, "{first}");

    answers.holding.store(true, Ordering::SeqCst);
    clock.advance(60);
    let polling = tokio::spawn(reqwest::get(server.url("/v1/defi/apys")));
    eventually("the poll asks Jito's API", || async {
        answers.calls.load(Ordering::SeqCst) == 3
    })
    .await;
    let (status, prepared) = server
        .post(
            "/v1/defi/deposit/prepare",
            &json!({"wallet": WALLET, "token_symbol": "SOL", "amount": 1}),
        )
        .await;
    assert_eq!(
        (status, &prepared["error"]),
        (
            StatusCode::SERVICE_UNAVAILABLE,
            &json!("no_venue_available")
        ),
        "routed on the last board (no market of this server's takes SOL): {prepared}"
    );
    assert_eq!(answers.calls.load(Ordering::SeqCst), 3, "one poll");

    answers.holding.store(false, Ordering::SeqCst);
    answers.release.notify_one();
    let polled: serde_json::Value = polling.await.unwrap().unwrap().json().await.unwrap();
    assert_eq!(
        polled["sources"]["stake_a"]["stale"], false,
        "Jito's answer came while the poll still waited for it: {polled}"
    );
    assert_ne!(polled["polled_at"], first["polled_at"]);
    assert_eq!(answers.calls.load(Ordering::SeqCst), 4);
}

/// A venue this cluster wires but whose markets the operator has not named (no
/// `LEND_A_RESERVES`, no `LEND_B_MARKET` here) is not available and not "coming": the APY read
/// says so, and a deposit naming it is 503 `venue_not_configured`; a venue of another cluster
/// is coming with mainnet.
#[tokio::test]
async fn a_venue_without_a_configured_market_is_not_available() {
    let server = TestServer::start_at(ManualClock::at_system_time(), |_| {}).await;
    let (status, apys) = server.get("/v1/defi/apys").await;
    assert_eq!(status, StatusCode::OK, "{apys}");
    for venue in ["lend_a", "lend_b"] {
        let protocol = &apys["protocols"][venue];
        assert_eq!(protocol["testnet_available"], false, "{venue}: {apys}");
        assert_eq!(protocol["coming_at"], serde_json::Value::Null, "{venue}");
    }
    assert_eq!(apys["protocols"]["stake_a"]["testnet_available"], false);
    assert!(
        apys["protocols"]["stake_a"]["coming_at"].is_string(),
        "{apys}"
    );

    let wallet = narrative_sdk::Pubkey::new_unique().to_string();
    let (status, refused) = server
        .post(
            "/v1/defi/deposit/prepare",
            &json!({"wallet": wallet, "token_symbol": "SOL", "amount": 1,
                                "protocol": "lend_b"}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    assert_eq!(refused["error"], "venue_not_configured");
    // Routed, nothing takes SOL here.
    let (status, refused) = server
        .post(
            "/v1/defi/deposit/prepare",
            &json!({"wallet": wallet, "token_symbol": "SOL", "amount": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    assert_eq!(refused["error"], "no_venue_available");
}
