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
//! `GET /v1/narratives` (the public feed over `BENCH_NARRATIVES`, default 5,000, narratives with
//! their indexed markets and backings), `POST /v1/shield/back` (a prepared `back_shield`,
//! stored like every prepare, for `BENCH_WALLETS`, default 64, wallets in turn), the missions,
//! points and agents leaderboards (over `BENCH_LEADERBOARD_WALLETS`, default 10,000, wallets
//! each), the broad listing `GET /v1/narratives?broad=true&limit=5000`, and DeFi earn: `GET
//! /v1/defi/apys`, `GET /v1/defi/allocation/:wallet` (3 seeded positions) and `POST
//! /v1/defi/deposit/prepare` (1.5 SOL routed to lend_a, whose reserve the JSON-RPC stand-in
//! serves), and borrowing: `GET /v1/borrow/rates`, `GET /v1/borrow/capacity/:wallet` and `GET
//! /v1/borrow/simulate` (over the same 3 positions),
//! whose first (uncached) answer is also timed alone, with the process's memory before and
//! after. Every GET's first answer is made and timed alone before its run, so a cached
//! route's run measures its answers from the cache and the miss is shown beside it.
//! `BENCH_ONLY=<text>` runs the hello-world baseline and the runs whose name contains the text; `BENCH_CACHE_MB` sets the response cache (default 64; 0: off). Anonymous rate limits are raised out of the way; their check still runs on every
//! request.

use std::net::SocketAddr;
use std::process::Command;

use ed25519_dalek::SigningKey;
use narrative_api::{build_app, AppState, Config, Providers};
use narrative_store::entities::shield_terms_acknowledgements;
use narrative_store::testing::TestDb;
use poem::listener::{Acceptor, Listener, TcpListener};
use poem::web::Json;
use poem::{get, handler, post, EndpointExt, Route, Server};
use sea_orm::{ActiveModelTrait, ConnectionTrait, IntoActiveModel};
use serde_json::{json, Value};

// The same indexed rows as the tests use.
#[path = "../tests/common/fixtures.rs"]
#[allow(dead_code)]
mod fixtures;
// The leaderboards' wallets, as the tests seed them.
#[path = "../tests/common/leaderboards.rs"]
#[allow(dead_code)]
mod leaderboards;

// The service's own allocator: the bench serves what the binary serves.
#[global_allocator]
static ALLOCATOR: narrative_api::ServiceAllocator = narrative_api::SERVICE_ALLOCATOR;

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

/// A JSON-RPC node: every account read finds the token-lending double's SOL reserve (and
/// nothing else, so a deposit creates its token accounts); every other call gets a blockhash.
/// Its answers are written as text around the reserve's account rendered once: the stand-in's
/// own work is not the api's, and it shares the two cores with it.
#[handler]
fn rpc(body: Json<RpcCall>) -> poem::Response {
    static RESERVE: std::sync::OnceLock<(String, String)> = std::sync::OnceLock::new();
    let (address, account) = RESERVE.get_or_init(|| {
        let market = integration_tests::venues::LendingMarket::deterministic();
        let reserve = integration_tests::venues::reserve_account(&market, 10_000_000);
        let data =
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &reserve.data);
        (
            market.sol_reserve.to_string(),
            json!({"lamports": reserve.lamports, "owner": reserve.owner.to_string(),
                   "data": [data, "base64"], "executable": false, "rentEpoch": 0,
                   "space": reserve.data.len()})
            .to_string(),
        )
    });
    let RpcCall { id, method, params } = body.0;
    let result = if method == "getMultipleAccounts" {
        let asked = params
            .first()
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let found: Vec<&str> = asked
            .iter()
            .map(|a| {
                if a.as_str() == Some(address.as_str()) {
                    account.as_str()
                } else {
                    "null"
                }
            })
            .collect();
        format!(
            r#"{{"context":{{"slot":1}},"value":[{}]}}"#,
            found.join(",")
        )
    } else {
        r#"{"context":{"slot":1},"value":{"blockhash":"4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM","lastValidBlockHeight":100}}"#.to_owned()
    };
    poem::Response::builder()
        .content_type("application/json")
        .body(format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
        ))
}

/// What the stand-in reads of a JSON-RPC call.
#[derive(serde::Deserialize)]
struct RpcCall {
    id: Value,
    method: String,
    #[serde(default)]
    params: Vec<Value>,
}

/// Writes a wrk script posting `bodies` in turn. Each wrk thread formats its requests once, in
/// `init`: wrk shares the two cores with the server, and formatting a request each time (headers
/// and body concatenated in Lua) cost it about twice hello-world's CPU a request.
fn post_script(path: &std::path::Path, bodies: &[Value]) {
    let bodies: Vec<String> = bodies.iter().map(|body| format!("[[{body}]]")).collect();
    std::fs::write(
        path,
        format!(
            "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n\
             local bodies = {{{}}}\nlocal requests = {{}}\nlocal n = 0\n\
             init = function(args)\n  for i, body in ipairs(bodies) do\n    \
             requests[i] = wrk.format(nil, nil, nil, body)\n  end\nend\n\
             request = function()\n  n = n + 1\n  return requests[n % #requests + 1]\nend\n",
            bodies.join(", ")
        ),
    )
    .unwrap();
}

/// Inserts `rows` a few hundred per statement.
async fn insert_all<M>(db: &sea_orm::DatabaseConnection, rows: Vec<M>)
where
    M: sea_orm::ModelTrait + IntoActiveModel<<M::Entity as sea_orm::EntityTrait>::ActiveModel>,
    <M::Entity as sea_orm::EntityTrait>::ActiveModel: sea_orm::ActiveModelTrait + Send,
{
    use sea_orm::EntityTrait;
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<_> = rows
            .by_ref()
            .take(200)
            .map(IntoActiveModel::into_active_model)
            .collect();
        M::Entity::insert_many(chunk)
            .exec_without_returning(db)
            .await
            .unwrap();
    }
}

/// This process's resident and peak resident memory, in MiB (Linux).
fn memory_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(f64::NAN, |kib| kib / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// CPU time in clock ticks (`utime + stime`, and with `children` the waited-for children's) of
/// `/proc/<pid>/stat`.
fn ticks_of(pid: &str, children: bool) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name, which is in parentheses: utime is the 14th field.
    let fields: Vec<u64> = stat
        .rsplit_once(") ")
        .map(|(_, rest)| rest.split(' ').map(|f| f.parse().unwrap_or(0)).collect())
        .unwrap_or_default();
    let at = |field: usize| fields.get(field - 3).copied().unwrap_or(0);
    at(14) + at(15) + if children { at(16) + at(17) } else { 0 }
}

/// CPU ticks so far of this process, of its finished children (wrk), and of every `postgres`
/// process.
fn cpu_ticks() -> (u64, u64, u64) {
    let server = ticks_of("self", false);
    let wrk = ticks_of("self", true) - server;
    let postgres = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().into_string().ok()?;
            pid.bytes().all(|b| b.is_ascii_digit()).then_some(pid)
        })
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim() == "postgres")
        })
        .map(|pid| ticks_of(&pid, false))
        .sum();
    (server, wrk, postgres)
}

/// A sample's value from the metrics page.
fn metric(page: &str, name: &str) -> f64 {
    page.lines()
        .find_map(|line| {
            line.strip_prefix(name)?
                .strip_prefix(' ')?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(f64::NAN)
}

/// The server's metrics page.
async fn metrics_page(base: &str) -> String {
    reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// One GET of `url`, which must answer 200: the milliseconds it took, its whole body read, and
/// the body's bytes.
async fn timed_get(url: &str) -> (f64, usize) {
    let started = std::time::Instant::now();
    let answer = reqwest::get(url).await.unwrap();
    assert_eq!(answer.status(), 200, "{url}");
    let bytes = answer.bytes().await.unwrap().len();
    (started.elapsed().as_secs_f64() * 1000.0, bytes)
}

/// Brings Postgres to rest before a run: vacuums and analyses what the seeding or the previous
/// run wrote and checkpoints it, so that autovacuum and the checkpointer do not start on those
/// rows in the middle of the next run. Without it the first leaderboard run after seeding
/// 30,000 rows saw a p99 of 50–150 ms (and 4 ms when the same run lasted 45 s): those
/// background passes took the two cores for seconds. A service at steady state has them behind
/// it.
async fn settle(db: &TestDb) {
    if db.is_postgres() {
        for sql in ["VACUUM ANALYZE", "CHECKPOINT"] {
            db.store.db().execute_unprepared(sql).await.unwrap();
        }
    }
}

/// The counters a run moves: cache hits and misses, prepared-row statements and rows, and the
/// node's account-read calls (how well the service's coalescing shares them).
async fn counters(base: &str) -> [f64; 8] {
    let page = metrics_page(base).await;
    [
        metric(&page, "http_cache_requests_total{outcome=\"hit\"}"),
        metric(&page, "http_cache_requests_total{outcome=\"miss\"}"),
        metric(&page, "prepared_writer_statements_total"),
        metric(&page, "prepared_writer_rows_total"),
        metric(&page, "ledger_account_calls_total"),
        metric(&page, "prepared_writer_statement_seconds_sum"),
        metric(&page, "prepared_writer_wait_seconds_sum"),
        metric(&page, "prepared_writer_wait_seconds_count"),
    ]
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
    // Narratives, each with its indexed market and two backings, for the public feed and the
    // broad listing (which returns up to 5,000 of them).
    let narratives = env_usize("BENCH_NARRATIVES", 5_000);
    let (mut narrative_rows, mut market_rows, mut backing_rows) = (vec![], vec![], vec![]);
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
        market_rows.push(fixtures::market(
            &format!("BenchMarket{i}"),
            &n.market_id,
            Some(&n.id),
            &n.wallet_address,
            (2_000_000_000, 1_000_000_000),
            (1, 1),
        ));
        for (k, side) in ["yes", "no"].into_iter().enumerate() {
            backing_rows.push(fixtures::backing(
                &format!("BenchBacking{i}x{k}"),
                &n.market_id,
                &format!("Wallet{k}"),
                side,
                1_000_000_000,
            ));
        }
        narrative_rows.push(n);
    }
    insert_all(db.store.db(), market_rows).await;
    insert_all(db.store.db(), backing_rows).await;
    insert_all(db.store.db(), narrative_rows).await;
    // The points, missions and agents leaderboards rank `BENCH_LEADERBOARD_WALLETS` (default
    // 10,000) wallets each.
    let ranked = env_usize("BENCH_LEADERBOARD_WALLETS", 10_000);
    leaderboards::seed(db.store.db(), ranked, now).await;
    // Prepares come from `BENCH_WALLETS` (default 64) wallets in turn, each with the terms
    // acknowledged: a wallet's backing address takes as many bump tries as its seeds need (one
    // wallet can need twice the average), so many wallets measure what a prepare costs on
    // average.
    let wallets: Vec<String> = (0..env_usize("BENCH_WALLETS", 64).clamp(1, 250))
        .map(|i| {
            let key = SigningKey::from_bytes(&[i as u8 + 1; 32]);
            bs58::encode(key.verifying_key().to_bytes()).into_string()
        })
        .collect();
    insert_all(
        db.store.db(),
        wallets
            .iter()
            .map(|wallet| shield_terms_acknowledgements::Model {
                wallet: wallet.clone(),
                terms_version: "2026-11".into(),
                acknowledged_at: now,
            })
            .collect(),
    )
    .await;

    // The first wallet's DeFi positions: three lend_a deposits, valued at the reserve's rate.
    insert_all(
        db.store.db(),
        (0..3)
            .map(|i| narrative_store::entities::defi_positions::Model {
                id: uuid::Uuid::from_u128(0x5000_0000_0000_4000_8000_0000_0000_0000 | i)
                    .to_string(),
                wallet: wallets[0].clone(),
                protocol: "lend_a".into(),
                token_symbol: "SOL".into(),
                mint: "So11111111111111111111111111111111111111112".into(),
                amount_base: 1_000_000_000 * (i as i64 + 1),
                amount_lamports: 1_000_000_000 * (i as i64 + 1),
                receipt_amount: 950_000_000 * (i as i64 + 1),
                rate_liquidity: "1000".into(),
                rate_receipt: "950".into(),
                narrative_id: None,
                status: "confirmed".into(),
                deposit_signature: format!("BenchDeposit{i}"),
                withdraw_signature: None,
                withdrawn_base: None,
                created_at: now - 3_600,
                withdrawn_at: None,
            })
            .collect(),
    )
    .await;

    let mut config = Config::defaults();
    config.anon_rate_per_min = u32::MAX;
    config.sol_usd_price = Some(150.0);
    // BENCH_CACHE_MB=0 measures every read from the database (for a profile of the misses).
    config.response_cache_mb = env_usize("BENCH_CACHE_MB", config.response_cache_mb);
    config.solana_rpc_url = format!("http://{rpc_addr}").into();
    config.lend_a_reserves = vec![format!(
        "SOL={}",
        integration_tests::venues::LendingMarket::deterministic().sol_reserve
    )];
    let providers = Providers::from_config(&config).unwrap();
    let state = AppState::from_config_with(db.store.clone(), &config, providers)
        .await
        .unwrap();
    let app = Route::new()
        .at("/hello", get(hello))
        .nest("/", build_app(state));
    let (acceptor, addr) = bind().await;
    tokio::spawn(Server::new_with_acceptor(acceptor).run(app.boxed()));
    let base = format!("http://{addr}");

    let dir = std::env::temp_dir().join(format!("nms-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("prepare.lua");
    post_script(
        &script,
        &wallets
            .iter()
            .map(|wallet| json!({"wallet": wallet, "protocol_id": "01".repeat(32), "side": "safe", "amount_sol": 1.0}))
            .collect::<Vec<_>>(),
    );
    let deposit_script = dir.join("deposit.lua");
    post_script(
        &deposit_script,
        &wallets
            .iter()
            .map(|wallet| json!({"wallet": wallet, "token_symbol": "SOL", "amount": 1.5}))
            .collect::<Vec<_>>(),
    );

    // The broad listing once, before any load: its first answer is built from the database
    // (and then kept); the memory it takes is read after every run below.
    let broad = format!("{base}/v1/narratives?broad=true&limit=5000");
    let (_, peak_before) = memory_mib();
    let (broad_cold_ms, broad_bytes) = timed_get(&broad).await;
    let (_, peak_after_broad) = memory_mib();

    // The runs happen one after another, so they never compete for the two cores.
    let runs = [
        (
            "plain poem hello-world route (`GET /hello`)".to_owned(),
            format!("{base}/hello"),
            None,
        ),
        (
            "trivial route through the full middleware stack (`GET /v1/terms/current`)".into(),
            format!("{base}/v1/terms/current"),
            None,
        ),
        (
            format!("`GET /v1/shield/protocols` ({protocols} active rows)"),
            format!("{base}/v1/shield/protocols"),
            None,
        ),
        (
            format!("`GET /v1/narratives` (20 of {narratives}, with indexed totals)"),
            format!("{base}/v1/narratives"),
            None,
        ),
        (
            format!(
                "`POST /v1/shield/back` (prepare, stored; {} wallets in turn)",
                wallets.len()
            ),
            format!("{base}/v1/shield/back"),
            Some(script.as_path()),
        ),
        (
            format!("`GET /v1/missions/leaderboard` ({ranked} wallets)"),
            format!("{base}/v1/missions/leaderboard"),
            None,
        ),
        (
            format!("`GET /v1/points/leaderboard` ({ranked} wallets)"),
            format!("{base}/v1/points/leaderboard"),
            None,
        ),
        (
            format!("`GET /v1/agent/leaderboard` ({ranked} agents)"),
            format!("{base}/v1/agent/leaderboard"),
            None,
        ),
        (
            format!("`GET /v1/narratives?broad=true&limit=5000` ({narratives} narratives)"),
            broad.clone(),
            None,
        ),
        (
            "`GET /v1/defi/apys` (lend_a's reserve read through JSON-RPC)".to_owned(),
            format!("{base}/v1/defi/apys"),
            None,
        ),
        (
            "`GET /v1/defi/allocation/:wallet` (3 positions, valued at the reserve's rate)"
                .to_owned(),
            format!("{base}/v1/defi/allocation/{}", wallets[0]),
            None,
        ),
        (
            format!(
                "`POST /v1/defi/deposit/prepare` (routed to lend_a, stored; {} wallets in turn)",
                wallets.len()
            ),
            format!("{base}/v1/defi/deposit/prepare"),
            Some(deposit_script.as_path()),
        ),
        (
            "`GET /v1/borrow/rates` (lend_a's reserve read through JSON-RPC)".to_owned(),
            format!("{base}/v1/borrow/rates"),
            None,
        ),
        (
            "`GET /v1/borrow/capacity/:wallet` (3 lending positions, tier, price)".to_owned(),
            format!("{base}/v1/borrow/capacity/{}", wallets[0]),
            None,
        ),
        (
            "`GET /v1/borrow/simulate` (500 USD against the same positions)".to_owned(),
            format!(
                "{base}/v1/borrow/simulate?wallet={}&protocol=lend_a&asset=SOL&amount_usd=500",
                wallets[0]
            ),
            None,
        ),
    ];
    // BENCH_ONLY=<text>: the hello-world baseline and the runs whose name contains the text;
    // BENCH_BASELINE=0 leaves the baseline out (a profile of one route).
    let only = std::env::var("BENCH_ONLY").ok();
    let baseline_too = std::env::var("BENCH_BASELINE").map_or(true, |v| v != "0");
    let mut results = Vec::new();
    for (name, url, script) in runs
        .into_iter()
        .enumerate()
        .filter(|(i, (name, _, _))| {
            if *i == 0 {
                baseline_too
            } else {
                only.as_deref().is_none_or(|o| name.contains(o))
            }
        })
        .map(|(_, run)| run)
    {
        settle(&db).await;
        // A GET's first answer, timed alone before its run. For a cached route it is the one
        // miss, built from the database; made inside the run it would hold every connection
        // at once, and wrk, which counts the requests a connection could not send meanwhile,
        // would spread that one wait over about a percent of the run's samples: the run's p99
        // would be the miss, not the route under load.
        let first_answer_ms = match script {
            None => Some(timed_get(&url).await.0),
            Some(_) => None,
        };
        let counters_before = counters(&base).await;
        let before = cpu_ticks();
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
        let after = cpu_ticks();
        let counters_after = counters(&base).await;
        let delta = |i: usize| counters_after[i] - counters_before[i];
        if let Some(ms) = first_answer_ms {
            println!("  first answer, alone before the run: {ms:.1} ms");
        }
        if delta(0) + delta(1) > 0.0 {
            println!(
                "  response cache: {:.0} hits, {:.0} misses",
                delta(0),
                delta(1)
            );
        }
        if delta(2) > 0.0 {
            println!(
                "  prepared rows: {:.0} in {:.0} statements ({:.1} a statement, {:.2} ms each); \
                 a prepare waited {:.2} ms for its row",
                delta(3),
                delta(2),
                delta(3) / delta(2),
                delta(5) * 1e3 / delta(2),
                delta(6) * 1e3 / delta(7)
            );
        }
        let requests = figures.requests_per_second * seconds as f64;
        if delta(4) > 0.0 {
            println!(
                "  node account reads: {:.0} calls, {:.2} a request",
                delta(4),
                delta(4) / requests
            );
        }
        // Microseconds of CPU per request; a clock tick is 10 ms (USER_HZ 100).
        let per_request = |from: u64, to: u64| (to - from) as f64 * 10_000.0 / requests;
        let cpu = (
            per_request(before.0, after.0),
            per_request(before.2, after.2),
            per_request(before.1, after.1),
        );
        results.push((name, figures, cpu));
    }
    let baseline = results
        .first()
        .filter(|_| baseline_too)
        .map_or(f64::NAN, |(_, f, _)| f.requests_per_second);
    println!();
    println!("| route | requests/s | p99 latency | vs hello-world | CPU µs per request: server / Postgres / wrk |");
    println!("|---|---:|---:|---:|---:|");
    for (name, f, (server, postgres, wrk)) in &results {
        println!(
            "| {name} | {:.0} | {:.2} ms | {:.1} % | {server:.1} / {postgres:.1} / {wrk:.1} |",
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
    let page = metrics_page(&base).await;
    let (rss, peak) = memory_mib();
    println!(
        "broad listing: first answer (from the database) {broad_cold_ms:.1} ms, {:.2} MiB; \
         peak memory {peak_before:.0} MiB before it, {peak_after_broad:.0} MiB after it",
        broad_bytes as f64 / 1_048_576.0
    );
    println!(
        "after every run: resident {rss:.0} MiB, peak {peak:.0} MiB (the whole bench process, \
         wrk aside); response cache {:.0} entries, {:.2} MiB of {:.0} MiB allowed, \
         {:.0} hits / {:.0} misses",
        metric(&page, "http_cache_entries"),
        metric(&page, "http_cache_bytes") / 1_048_576.0,
        metric(&page, "http_cache_max_bytes") / 1_048_576.0,
        metric(&page, "http_cache_requests_total{outcome=\"hit\"}"),
        metric(&page, "http_cache_requests_total{outcome=\"miss\"}"),
    );
    std::fs::remove_dir_all(&dir).ok();
}
