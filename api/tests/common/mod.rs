//! A server on port 0 over a fresh database, and helpers to call it.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use narrative_api::background::Background;
use narrative_api::clock::{ManualClock, SharedClock};
use narrative_api::{build_app, AppState, Config, Providers};
use narrative_store::testing::TestDb;
use poem::listener::{Acceptor, Listener, TcpListener};
use poem::Server;
use reqwest::StatusCode;
use serde_json::Value;

pub mod bank;
pub mod chain;
pub mod fixtures;
pub mod leaderboards;
pub mod push_service;

/// A wallet that signs the service's messages (ed25519, base58 as wallets' `signMessage`).
pub struct SigningWallet {
    key: ed25519_dalek::SigningKey,
    pub address: String,
}

impl SigningWallet {
    /// The wallet of a fixed seed (one byte, repeated).
    pub fn new(seed: u8) -> SigningWallet {
        let key = ed25519_dalek::SigningKey::from_bytes(&[seed; 32]);
        let address = bs58::encode(key.verifying_key().to_bytes()).into_string();
        SigningWallet { key, address }
    }

    /// Its signature of `message`, base58.
    pub fn sign(&self, message: &str) -> String {
        use ed25519_dalek::Signer;
        bs58::encode(self.key.sign(message.as_bytes()).to_bytes()).into_string()
    }

    /// Its signature of `statement` issued at `issued_at`, as the service's signed messages
    /// end (`<statement>:issued-at:<unix seconds>`).
    pub fn sign_at(&self, statement: &str, issued_at: i64) -> String {
        self.sign(&format!("{statement}:issued-at:{issued_at}"))
    }
}

/// What `wallet` signs at `issued_at` to join the waitlist naming `referrer` (or none).
pub fn waitlist_message(wallet: &str, referrer: Option<&str>, issued_at: i64) -> String {
    format!(
        "narrative-market-service:waitlist-join:{wallet}:{}:issued-at:{issued_at}",
        referrer.unwrap_or("none")
    )
}

/// A waitlist join `body` (`email`, `referrer` as given) for `wallet`, with its signature
/// (`sign` signs a message as the wallet does) at `issued_at`.
pub fn signed_waitlist_join(
    mut body: Value,
    wallet: &str,
    issued_at: i64,
    sign: impl FnOnce(&str) -> String,
) -> Value {
    let message = waitlist_message(wallet, body["referrer"].as_str(), issued_at);
    body["wallet"] = wallet.into();
    body["signature"] = sign(&message).into();
    body["issued_at"] = issued_at.into();
    body
}

/// An agent registration proving `wallet` by its signature issued at `issued_at`.
pub fn signed_agent_registration(wallet: &SigningWallet, name: &str, issued_at: i64) -> Value {
    let statement = format!(
        "narrative-market-service:agent-register:{}:{name}",
        wallet.address
    );
    serde_json::json!({
        "wallet_address": wallet.address,
        "name": name,
        "wallet_signature": wallet.sign_at(&statement, issued_at),
        "issued_at": issued_at,
    })
}

pub const ADMIN_WALLET: &str = "AdminWa11et1111111111111111111111111111111";
pub const ADMIN_SECRET: &str = "correct horse battery staple";

pub struct TestServer {
    pub base: String,
    pub db: TestDb,
    pub http: reqwest::Client,
    /// The server's clock: the system's, unless the test gave a manual one.
    pub clock: SharedClock,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<ServerTask>,
    background: Option<Background>,
}

/// The anonymous requests a minute a test server allows unless the test sets its own.
const ANONYMOUS_LIMIT_OUT_OF_THE_WAY: u32 = 1_000_000;

/// A closed port (discard): a provider pointed here refuses at once, as an unreachable one does.
const NOWHERE: &str = "http://127.0.0.1:9";

/// The service's tracing events through a subscriber like the binary's, into the test harness's
/// captured output (printed only for a failing test), at WARN and above unless `RUST_LOG` says
/// otherwise. Without a subscriber `tracing` falls back to the `log` crate, whose logger
/// solana-program-test installs: every request's request-id span (an ERROR-level span in poem)
/// then printed as an ERROR line, hundreds in a CI log, and the service's warnings went to the
/// terminal whether the test failed or not.
fn trace_to_test_output() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let filter = tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_ansi(false)
            .with_test_writer()
            .finish();
        // Only this sets one; a process that already has one keeps it.
        let _ = tracing::subscriber::set_global_default(subscriber);
    });
}

/// The settings every test server starts from (an operator pair, one browser origin, the
/// anonymous rate limit out of the way, no outside service), then `configure`'s changes;
/// nothing from the process environment.
pub fn test_config(configure: impl FnOnce(&mut Config)) -> Config {
    trace_to_test_output();
    let mut config = Config::defaults();
    // The default price feed is CoinGecko on the internet, which the background jobs (borrow
    // health) would ask from every test server. Tests that need a price configure one or serve
    // the feed's protocol locally (groups.rs).
    config.price_feed_url = NOWHERE.into();
    config.admin_wallet = Some(ADMIN_WALLET.into());
    config.admin_secret = Some(ADMIN_SECRET.into());
    config.cors_origins = vec!["https://app.example".into()];
    // Every request of a test comes from 127.0.0.1, and `eventually` polls every 50 ms: at the
    // production 120 a minute, a wait longer than 6 s (a slow CI pass, or a manual clock that
    // stands still so that every poll falls in one minute) met a 429 before its bound. The
    // tests of the anonymous limit (limits.rs, trust_limits.rs) set the limit they test.
    config.anon_rate_per_min = ANONYMOUS_LIMIT_OUT_OF_THE_WAY;
    configure(&mut config);
    config
}

/// Serves another process of the deployment on `db`: its address and its stop.
async fn serve_beside(
    db: &TestDb,
    config: &Config,
    providers: Providers,
) -> (String, tokio::sync::oneshot::Sender<()>) {
    let state = AppState::from_config_with(db.store.clone(), config, providers)
        .await
        .expect("state");
    let (addr, stop, _task) = serve(state).await;
    (format!("http://{addr}"), stop)
}

impl TestServer {
    pub async fn start(configure: impl FnOnce(&mut Config)) -> TestServer {
        Self::start_with(None, configure).await
    }

    /// A server whose time is `clock` (tests move it instead of waiting for it).
    pub async fn start_at(
        clock: Arc<ManualClock>,
        configure: impl FnOnce(&mut Config),
    ) -> TestServer {
        let config = test_config(configure);
        let providers = Providers::with_clock(&config, clock).expect("providers");
        Self::serve_config(config, providers).await
    }

    /// A server whose outside world is `providers` (the configured ones if `None`), with its
    /// job worker running as in production.
    pub async fn start_with(
        providers: Option<Providers>,
        configure: impl FnOnce(&mut Config),
    ) -> TestServer {
        let config = test_config(configure);
        let providers =
            providers.unwrap_or_else(|| Providers::from_config(&config).expect("providers"));
        Self::serve_config(config, providers).await
    }

    async fn serve_config(config: Config, providers: Providers) -> TestServer {
        let db = TestDb::new().await;
        let clock = providers.clock.clone();
        let state = AppState::from_config_with(db.store.clone(), &config, providers)
            .await
            .expect("state");
        let background = Background::start(&state, &config);
        let (addr, stop, task) = serve(state).await;
        TestServer {
            base: format!("http://{addr}"),
            db,
            http: reqwest::Client::new(),
            clock,
            stop: Some(stop),
            task: Some(task),
            background: Some(background),
        }
    }

    /// Starts another server on the same database (a second process of a deployment).
    pub async fn start_beside(
        &self,
        configure: impl FnOnce(&mut Config),
    ) -> (String, tokio::sync::oneshot::Sender<()>) {
        let config = test_config(configure);
        // The same clock: two processes of one deployment share the time.
        let providers = Providers::with_clock(&config, self.clock.clone()).expect("providers");
        serve_beside(&self.db, &config, providers).await
    }

    /// [`TestServer::start_beside`] with its outside world `providers` (a process on the same
    /// bank ledger, say).
    pub async fn start_beside_on(
        &self,
        providers: Providers,
        configure: impl FnOnce(&mut Config),
    ) -> (String, tokio::sync::oneshot::Sender<()>) {
        serve_beside(&self.db, &test_config(configure), providers).await
    }

    /// Another process of the deployment on the same database, with its background tasks
    /// (job worker, and the indexer when configured) running as in production.
    pub async fn start_beside_with_background(
        &self,
        configure: impl FnOnce(&mut Config),
    ) -> Beside {
        let config = test_config(configure);
        let providers = Providers::with_clock(&config, self.clock.clone()).expect("providers");
        let state = AppState::from_config_with(self.db.store.clone(), &config, providers)
            .await
            .expect("state");
        let background = Background::start(&state, &config);
        let (addr, stop, task) = serve(state).await;
        Beside {
            base: format!("http://{addr}"),
            stop,
            task,
            background,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// The body of a GET as text (`/metrics`, `/docs/`).
    pub async fn get_text(&self, path: &str) -> String {
        self.http
            .get(self.url(path))
            .send()
            .await
            .expect("request")
            .text()
            .await
            .expect("body")
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let response = self.http.get(self.url(path)).send().await.expect("request");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub async fn post(&self, path: &str, body: &Value) -> (StatusCode, Value) {
        let (status, _, body) = self.post_with_retry_after(path, body).await;
        (status, body)
    }

    /// A POST whose answer's `retry-after` header the test reads: the status, the header (None
    /// when absent) and the body.
    pub async fn post_with_retry_after(
        &self,
        path: &str,
        body: &Value,
    ) -> (StatusCode, Option<String>, Value) {
        let response = self
            .http
            .post(self.url(path))
            .json(body)
            .send()
            .await
            .expect("request");
        let status = response.status();
        let retry_after = response
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().expect("an ASCII header").to_owned());
        (
            status,
            retry_after,
            response.json().await.unwrap_or(Value::Null),
        )
    }

    /// A GET as an agent: `x-api-key: key`.
    pub async fn key_get(&self, path: &str, key: &str) -> (StatusCode, Value) {
        let response = self
            .http
            .get(self.url(path))
            .header("x-api-key", key)
            .send()
            .await
            .expect("request");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// A POST as an agent: `x-api-key: key`.
    pub async fn key_post(&self, path: &str, key: &str, body: &Value) -> (StatusCode, Value) {
        let response = self
            .http
            .post(self.url(path))
            .header("x-api-key", key)
            .json(body)
            .send()
            .await
            .expect("request");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub async fn admin_post(&self, path: &str, body: &Value) -> (StatusCode, Value) {
        self.admin_request(ADMIN_WALLET, reqwest::Method::POST, path, Some(body))
            .await
    }

    /// A request with the operator pair of `wallet` and [`ADMIN_SECRET`], the body as JSON when
    /// given.
    pub async fn admin_request(
        &self,
        wallet: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        let mut request = self
            .http
            .request(method, self.url(path))
            .header("x-admin-wallet", wallet)
            .header("x-admin-secret", ADMIN_SECRET);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.expect("request");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// A post of an inbound webhook with the shared secret `secret` in `x-webhook-secret`.
    pub async fn webhook_post(
        &self,
        path: &str,
        secret: &str,
        body: &Value,
    ) -> (StatusCode, Value) {
        let response = self
            .http
            .post(self.url(path))
            .header("x-webhook-secret", secret)
            .json(body)
            .send()
            .await
            .expect("request");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// Stops the server and its background tasks; the database is handed back, so a server
    /// started beside this one can outlive it.
    pub async fn stop(mut self) -> TestDb {
        if let Some(background) = self.background.take() {
            background.shutdown().await;
        }
        self.stop.take().expect("running").send(()).ok();
        self.task
            .take()
            .expect("running")
            .await
            .expect("server task")
            .expect("server stopped cleanly");
        self.db
    }
}

/// A second server beside a [`TestServer`], sharing its database.
pub struct Beside {
    pub base: String,
    stop: tokio::sync::oneshot::Sender<()>,
    task: ServerTask,
    background: Background,
}

impl Beside {
    pub async fn get_text(&self, path: &str) -> String {
        reqwest::get(format!("{}{path}", self.base))
            .await
            .expect("request")
            .text()
            .await
            .expect("body")
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let response = reqwest::get(format!("{}{path}", self.base))
            .await
            .expect("request");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub async fn stop(self) {
        self.background.shutdown().await;
        self.stop.send(()).ok();
        self.task
            .await
            .expect("server task")
            .expect("server stopped cleanly");
    }
}

type ServerTask = tokio::task::JoinHandle<std::io::Result<()>>;

/// Serves the app on a free port until the returned sender fires.
async fn serve(
    state: std::sync::Arc<AppState>,
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>, ServerTask) {
    let (acceptor, addr) = free_port().await;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(
        Server::new_with_acceptor(acceptor).run_with_graceful_shutdown(
            build_app(state),
            async {
                stopped.await.ok();
            },
            Some(Duration::from_secs(5)),
        ),
    );
    (addr, stop, task)
}

/// A listener on a free local port, and its address.
async fn free_port() -> (poem::listener::TcpAcceptor, SocketAddr) {
    let acceptor = TcpListener::bind("127.0.0.1:0")
        .into_acceptor()
        .await
        .expect("port");
    let addr: SocketAddr = *acceptor.local_addr()[0]
        .as_socket_addr()
        .expect("tcp address");
    (acceptor, addr)
}

/// Serves `app` (a stand-in for an outside provider) on a free local port; its base URL.
pub async fn serve_locally(app: impl poem::Endpoint + 'static) -> String {
    let (acceptor, addr) = free_port().await;
    tokio::spawn(Server::new_with_acceptor(acceptor).run(app));
    format!("http://{addr}")
}

/// The operators' log, oldest first: (action, subject, the operator's wallet).
pub async fn operators_log(server: &TestServer) -> Vec<(String, String, String)> {
    use narrative_store::entities::admin_actions;
    use sea_orm::{EntityTrait, QueryOrder};
    admin_actions::Entity::find()
        .order_by_asc(admin_actions::Column::Id)
        .all(server.db.store.db())
        .await
        .unwrap()
        .into_iter()
        .map(|a| (a.action, a.subject, a.actor))
        .collect()
}

/// A sample's value in a Prometheus metrics page; `name` includes any labels. The whole sample
/// line is matched: a substring search would also find the `# HELP` line of `indexer_leader`,
/// which begins "indexer_leader 1 while ...".
pub fn sample(metrics: &str, name: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
}

/// How long a test waits for something a background task does before it fails. Only a failing
/// test waits this long (the condition is polled); the bound is wide because the whole workspace's
/// tests share two cores in CI, where a keeper pass once took more than 5 s.
const WAIT_LIMIT: Duration = Duration::from_secs(20);
/// How often the condition is looked at again while waiting.
const POLL_EVERY: Duration = Duration::from_millis(50);

/// Waits until `check` holds; fails the test when `WAIT_LIMIT` passes first.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    eventually_some(what, || {
        let holds = check();
        async move { holds.await.then_some(()) }
    })
    .await
}

/// Waits until `find` finds something and returns it; fails the test when `WAIT_LIMIT` passes
/// first.
pub async fn eventually_some<T, F, Fut>(what: &str, find: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    within(WAIT_LIMIT, find)
        .await
        .unwrap_or_else(|| panic!("{what} did not happen within {WAIT_LIMIT:?}"))
}

/// What `find` finds within `limit`, or `None` when the limit passes first. The condition is
/// looked at on every tick of a `POLL_EVERY` interval (the first at once), and the whole wait is
/// one bounded `timeout`: nothing waits a fixed time for a background task and hopes.
pub async fn within<T, F, Fut>(limit: Duration, mut find: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let mut ticks = tokio::time::interval(POLL_EVERY);
    let poll = async {
        loop {
            ticks.tick().await;
            if let Some(found) = find().await {
                return found;
            }
        }
    };
    tokio::time::timeout(limit, poll).await.ok()
}

/// A manual clock at the start of an hour (so minute and hour windows are fresh), near now.
pub fn clock_at_hour_start() -> Arc<ManualClock> {
    let now = chrono::Utc::now().timestamp();
    ManualClock::at(now - now.rem_euclid(3_600))
}
