//! Load test of the api with wrk (Debian's `wrk` package), in one run:
//!
//!   cargo bench -p narrative-api --bench http
//!
//! This binary serves the real app (`build_app`) beside a plain poem hello-world route on one
//! port, over a fresh database (Postgres at DATABASE_URL, default
//! postgres://postgres@127.0.0.1:5432/test; a `sqlite://` URL works too) seeded with
//! `BENCH_PROTOCOLS` (default 50) active shield coverages, and a local JSON-RPC node for the
//! blockhash. wrk then drives, for `BENCH_SECONDS` (default 15) each with `BENCH_CONNECTIONS`
//! (default 32) connections on 2 threads: `GET /hello`, `GET /v1/shield/protocols`,
//! `GET /v1/narratives` (the public feed over `BENCH_NARRATIVES`, default 200, narratives with
//! their indexed markets and backings), and `POST /v1/shield/back` (a prepared `back_shield`,
//! stored like every prepare). Anonymous rate
//! limits are raised out of the way; their check still runs on every request.

use std::net::SocketAddr;
use std::process::Command;

use ed25519_dalek::SigningKey;
use narrative_api::{build_app, AppState, Config, Providers};
use narrative_store::entities::shield_terms_acknowledgements;
use narrative_store::testing::TestDb;
use poem::listener::{Acceptor, Listener, TcpListener};
use poem::web::Json;
use poem::{get, handler, post, EndpointExt, Route, Server};
use sea_orm::{ActiveModelTrait, IntoActiveModel};
use serde_json::{json, Value};

// The same indexed rows as the tests use.
#[path = "../tests/common/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[handler]
fn hello() -> &'static str {
    "hello"
}

#[handler]
fn rpc(Json(request): Json<Value>) -> Json<Value> {
    Json(json!({"jsonrpc": "2.0", "id": request["id"], "result": {
        "context": {"slot": 1},
        "value": {"blockhash": "4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM", "lastValidBlockHeight": 100}
    }}))
}

async fn bind() -> (poem::listener::TcpAcceptor, SocketAddr) {
    let acceptor = TcpListener::bind("127.0.0.1:0")
        .into_acceptor()
        .await
        .unwrap();
    let addr = *acceptor.local_addr()[0].as_socket_addr().unwrap();
    (acceptor, addr)
}

struct Figures {
    requests_per_second: f64,
    p99_ms: f64,
    non_2xx: u64,
}

/// Runs wrk and reads its summary (`--latency` prints the percentiles).
fn wrk(url: &str, script: Option<&std::path::Path>, seconds: usize, connections: usize) -> Figures {
    let mut command = Command::new("wrk");
    command.args([
        "-t2",
        &format!("-c{connections}"),
        &format!("-d{seconds}s"),
        "--latency",
    ]);
    if let Some(script) = script {
        command.arg("-s").arg(script);
    }
    let output = command
        .arg(url)
        .output()
        .expect("wrk (apt-get install wrk)");
    let text = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(output.status.success(), "wrk failed: {text}");
    let field = |prefix: &str| {
        text.lines().find_map(|l| {
            l.trim()
                .strip_prefix(prefix)
                .map(|rest| rest.trim().to_owned())
        })
    };
    let requests_per_second = field("Requests/sec:").unwrap().parse().unwrap();
    let p99 = field("99%").expect("latency distribution");
    let p99_ms = if let Some(us) = p99.strip_suffix("us") {
        us.parse::<f64>().unwrap() / 1e3
    } else if let Some(ms) = p99.strip_suffix("ms") {
        ms.parse().unwrap()
    } else {
        p99.strip_suffix('s').unwrap().parse::<f64>().unwrap() * 1e3
    };
    let non_2xx = field("Non-2xx or 3xx responses:").map_or(0, |n| n.parse().unwrap());
    Figures {
        requests_per_second,
        p99_ms,
        non_2xx,
    }
}

#[tokio::main]
async fn main() {
    if std::env::var("DATABASE_URL").is_err() {
        std::env::set_var("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test");
    }
    // One protocol id byte each (1..=254).
    let protocols = env_usize("BENCH_PROTOCOLS", 50).min(254);
    let seconds = env_usize("BENCH_SECONDS", 15);
    let connections = env_usize("BENCH_CONNECTIONS", 32);

    let (rpc_acceptor, rpc_addr) = bind().await;
    tokio::spawn(Server::new_with_acceptor(rpc_acceptor).run(Route::new().at("/", post(rpc))));

    let db = TestDb::new().await;
    let now = chrono::Utc::now().timestamp();
    for i in 0..protocols {
        fixtures::coverage(i as u8 + 1, "active", now - 86_400)
            .into_active_model()
            .insert(db.store.db())
            .await
            .unwrap();
    }
    // Narratives, each with its indexed market and two backings, for the public feed.
    let narratives = env_usize("BENCH_NARRATIVES", 200);
    for i in 0..narratives {
        let id = uuid::Uuid::from_u128(0x4000_0000_0000_4000_8000_0000_0000_0000 | i as u128);
        let n = fixtures::narrative(
            &id,
            "11111111111111111111111111111111",
            "Bench",
            "MARKET",
            "open",
            now - i as i64,
        );
        fixtures::market(
            &format!("BenchMarket{i}"),
            &n.market_id,
            Some(&n.id),
            &n.wallet_address,
            (2_000_000_000, 1_000_000_000),
            (1, 1),
        )
        .into_active_model()
        .insert(db.store.db())
        .await
        .unwrap();
        for (k, side) in ["yes", "no"].into_iter().enumerate() {
            fixtures::backing(
                &format!("BenchBacking{i}x{k}"),
                &n.market_id,
                &format!("Wallet{k}"),
                side,
                1_000_000_000,
            )
            .into_active_model()
            .insert(db.store.db())
            .await
            .unwrap();
        }
        n.into_active_model().insert(db.store.db()).await.unwrap();
    }
    let wallet = SigningKey::from_bytes(&[7; 32]);
    let wallet_b58 = bs58::encode(wallet.verifying_key().to_bytes()).into_string();
    shield_terms_acknowledgements::Model {
        wallet: wallet_b58.clone(),
        terms_version: "2026-11".into(),
        acknowledged_at: now,
    }
    .into_active_model()
    .insert(db.store.db())
    .await
    .unwrap();

    let mut config = Config::defaults();
    config.anon_rate_per_min = u32::MAX;
    config.sol_usd_price = Some(150.0);
    config.solana_rpc_url = format!("http://{rpc_addr}").into();
    let providers = Providers::from_config(&config).unwrap();
    let state = AppState::from_config_with(db.store.clone(), &config, providers)
        .await
        .unwrap();
    let app = Route::new()
        .at("/hello", get(hello))
        .nest("/", build_app(state));
    let (acceptor, addr) = bind().await;
    tokio::spawn(Server::new_with_acceptor(acceptor).run(app.boxed()));

    let dir = std::env::temp_dir().join(format!("nms-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("prepare.lua");
    let body = json!({"wallet": wallet_b58, "protocol_id": "01".repeat(32), "side": "safe", "amount_sol": 1.0});
    std::fs::write(
        &script,
        format!(
            "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\nwrk.body = [[{body}]]\n"
        ),
    )
    .unwrap();

    // The runs happen one after another, so they never compete for the two cores.
    let base = format!("http://{addr}");
    let runs = [
        (
            "plain poem hello-world route (`GET /hello`)",
            format!("{base}/hello"),
            None,
        ),
        (
            "`GET /v1/shield/protocols` (50 active rows)",
            format!("{base}/v1/shield/protocols"),
            None,
        ),
        (
            "`GET /v1/narratives` (20 of 200, with indexed totals)",
            format!("{base}/v1/narratives"),
            None,
        ),
        (
            "`POST /v1/shield/back` (prepare, stored)",
            format!("{base}/v1/shield/back"),
            Some(script.as_path()),
        ),
    ];
    let mut results = Vec::new();
    for (name, url, script) in runs {
        let figures = tokio::task::spawn_blocking({
            let url = url.clone();
            let script = script.map(|s| s.to_path_buf());
            move || wrk(&url, script.as_deref(), seconds, connections)
        })
        .await
        .unwrap();
        assert_eq!(figures.non_2xx, 0, "{name}: every answer must be a success");
        println!(
            "{name}: {:.0} requests/s, p99 {:.2} ms",
            figures.requests_per_second, figures.p99_ms
        );
        results.push((name, figures));
    }
    let baseline = results[0].1.requests_per_second;
    println!();
    println!("| route | requests/s | p99 latency | vs hello-world |");
    println!("|---|---:|---:|---:|");
    for (name, f) in &results {
        println!(
            "| {name} | {:.0} | {:.2} ms | {:.0} % |",
            f.requests_per_second,
            f.p99_ms,
            100.0 * f.requests_per_second / baseline
        );
    }
    println!();
    println!(
        "wrk -t2 -c{connections} -d{seconds}s against one process; database: {}",
        if db.is_postgres() {
            "Postgres"
        } else {
            "SQLite"
        }
    );
    std::fs::remove_dir_all(&dir).ok();
}
