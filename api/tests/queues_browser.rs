//! The service in a real browser: Debian's headless Chromium, driven through ChromeDriver's
//! WebDriver protocol.
//!
//! - The job queue's page (spec 5 rule 6, 9.2), with the credentials a browser of the
//!   operators would carry (HTTP Basic and the admin pair, set as extra request headers through
//!   the DevTools protocol ChromeDriver exposes). It reads what the page shows, clicks Cancel and
//!   Retry, follows the redirects, and follows a count's link.
//! - CORS (spec 5 rule 8): a page of another origin the service allows sets a wallet's push
//!   preferences with `fetch`, sending the wallet proof in `x-wallet-signature` and
//!   `x-wallet-issued-at`, which the browser sends only when the preflight allows them.
//!
//! Ignored by a plain `cargo test`: it needs the `chromium` and `chromium-driver` packages.
//! `.ci/run` installs them and runs it (`cargo test -p narrative-api --test queues_browser --
//! --ignored`). `CHROMIUM` and `CHROMEDRIVER` override the binaries' paths.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine;
use common::{SigningWallet, TestServer, ADMIN_SECRET, ADMIN_WALLET};
use narrative_store::entities::push_preferences;
use sea_orm::{ActiveModelTrait, EntityTrait, IntoActiveModel};
use serde_json::{json, Value};

const PASSWORD: &str = "browser-queue-password";
/// The W3C WebDriver key of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";
/// How long the browser gets for one thing to show.
const BROWSER_WAIT: Duration = Duration::from_secs(20);

/// A ChromeDriver process and one session of headless Chromium, ended on drop.
struct Browser {
    driver: Child,
    base: String,
    session: String,
    http: reqwest::Client,
}

impl Browser {
    async fn start() -> Browser {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver_bin = std::env::var("CHROMEDRIVER").unwrap_or("/usr/bin/chromedriver".into());
        let chromium = std::env::var("CHROMIUM").unwrap_or("/usr/bin/chromium".into());
        let driver = Command::new(&driver_bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{driver_bin} (apt-get install chromium-driver): {e}"));
        let base = format!("http://127.0.0.1:{port}");
        let http = reqwest::Client::new();
        // Up once its status says so.
        let status = || async {
            let response = http.get(format!("{base}/status")).send().await.ok()?;
            let status: Value = response.json().await.ok()?;
            (status["value"]["ready"] == true).then_some(())
        };
        common::within(BROWSER_WAIT, status)
            .await
            .expect("chromedriver did not start");
        let created: Value = http
            .post(format!("{base}/session"))
            .json(&json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {
                    "binary": chromium,
                    "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
                }
            }}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let session = created["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_owned();
        Browser {
            driver,
            base,
            session,
            http,
        }
    }

    async fn command(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        let mut request = self.http.request(method.clone(), url);
        if method == reqwest::Method::POST {
            request = request.json(&body);
        }
        let answer: Value = request.send().await.unwrap().json().await.unwrap();
        answer["value"].clone()
    }

    /// A DevTools command on the page's target.
    async fn devtools(&self, cmd: &str, params: Value) {
        let answer = self
            .command(
                reqwest::Method::POST,
                "/goog/cdp/execute",
                json!({"cmd": cmd, "params": params}),
            )
            .await;
        assert!(answer.get("error").is_none(), "{cmd}: {answer}");
    }

    async fn open(&self, url: &str) {
        self.command(reqwest::Method::POST, "/url", json!({"url": url}))
            .await;
    }

    async fn body_text(&self) -> String {
        self.text_of("body").await.unwrap_or_default()
    }

    /// The text of the element `css` selects now, if there is one.
    async fn text_of(&self, css: &str) -> Option<String> {
        let found = self
            .command(
                reqwest::Method::POST,
                "/element",
                json!({"using": "css selector", "value": css}),
            )
            .await;
        let id = found[ELEMENT].as_str()?.to_owned();
        self.command(
            reqwest::Method::GET,
            &format!("/element/{id}/text"),
            Value::Null,
        )
        .await
        .as_str()
        .map(str::to_owned)
    }

    async fn click(&self, css: &str) {
        let found = self
            .command(
                reqwest::Method::POST,
                "/element",
                json!({"using": "css selector", "value": css}),
            )
            .await;
        let id = found[ELEMENT]
            .as_str()
            .unwrap_or_else(|| panic!("nothing matches {css}: {found}"))
            .to_owned();
        self.command(
            reqwest::Method::POST,
            &format!("/element/{id}/click"),
            json!({}),
        )
        .await;
    }

    /// Waits until the element `css` shows `expected`, reloading the page between looks when
    /// `reload`; fails after [`BROWSER_WAIT`].
    async fn wait_for_text(&self, css: &str, expected: &str, reload: bool) {
        let shows = || async {
            if self.text_of(css).await.as_deref() == Some(expected) {
                return Some(());
            }
            if reload {
                self.command(reqwest::Method::POST, "/refresh", json!({}))
                    .await;
            }
            None
        };
        if common::within(BROWSER_WAIT, shows).await.is_none() {
            panic!(
                "{css} never showed {expected:?}; the page: {}",
                self.body_text().await
            );
        }
    }

    async fn alert_open(&self) -> bool {
        let alert = self
            .command(reqwest::Method::GET, "/alert/text", Value::Null)
            .await;
        alert.get("error").is_none()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The session's Chromium goes with its driver.
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

async fn add_job(
    server: &TestServer,
    kind: &str,
    payload: Value,
    status: &str,
    error: &str,
) -> i64 {
    let error = Some(error).filter(|e| !e.is_empty());
    let db = server.db.store.db();
    common::fixtures::job(db, server.clock.now(), kind, None, payload, status, error).await
}

#[tokio::test]
#[ignore = "needs Debian's chromium and chromium-driver; .ci/run installs them and runs it"]
async fn the_queue_page_works_in_headless_chromium() {
    let server = TestServer::start(|c| c.admin_queues_password = Some(PASSWORD.into())).await;
    let narrative = uuid::Uuid::new_v4();
    common::fixtures::narrative(
        &narrative,
        "C9QjHcuPyyncqkpSqKdQpFJjUNTgbwmbEN4GeGUoSpjN",
        "Browser",
        "crypto",
        "open",
        server.clock.now(),
    )
    .into_active_model()
    .insert(server.db.store.db())
    .await
    .unwrap();
    let dead = add_job(
        &server,
        "score_narrative",
        json!({"narrative_id": narrative.to_string()}),
        "dead",
        "<script>alert('x')</script>",
    )
    .await;
    let waiting = add_job(&server, "deliver_webhook", json!({}), "queued", "").await;
    let page = server.url("/admin/queues");

    let browser = Browser::start().await;
    // Without credentials the browser is challenged for Basic (headless, nobody answers it): no
    // page. With Basic alone, the admin pair is missing: the refusal, shown as text.
    browser.open(&page).await;
    assert!(browser.text_of("h1").await.is_none());
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("operator:{PASSWORD}"));
    browser.devtools("Network.enable", json!({})).await;
    browser
        .devtools(
            "Network.setExtraHTTPHeaders",
            json!({"headers": {"authorization": format!("Basic {basic}")}}),
        )
        .await;
    browser.open(&page).await;
    let refused = browser.body_text().await;
    assert!(refused.contains("Unauthorized"), "{refused}");
    assert!(browser.text_of("h1").await.is_none());

    // With Basic and the pair on every request the page loads.
    browser
        .devtools(
            "Network.setExtraHTTPHeaders",
            json!({"headers": {
                "authorization": format!("Basic {basic}"),
                "x-admin-wallet": ADMIN_WALLET,
                "x-admin-secret": ADMIN_SECRET,
            }}),
        )
        .await;
    browser.open(&page).await;
    browser.wait_for_text("h1", "Job queue", false).await;
    assert_eq!(browser.text_of("#dead").await.as_deref(), Some("1"));
    assert!(browser
        .text_of("#health")
        .await
        .unwrap()
        .starts_with("Queue degraded"));
    assert_eq!(
        browser
            .text_of(&format!("#job-{dead} .status"))
            .await
            .as_deref(),
        Some("dead")
    );
    // The last error is shown as text, not run.
    assert_eq!(
        browser
            .text_of(&format!("#job-{dead} .last-error"))
            .await
            .as_deref(),
        Some("<script>alert('x')</script>")
    );
    assert!(!browser.alert_open().await, "a job's error ran as script");
    assert_eq!(
        browser
            .text_of("tr[data-kind=deliver_webhook] td[data-status=queued]")
            .await
            .as_deref(),
        Some("1")
    );

    // Cancel the waiting job: back on the page, which says so.
    browser
        .click(&format!("#job-{waiting} button.cancel"))
        .await;
    browser
        .wait_for_text("#notice", &format!("Done: cancel:{waiting}"), false)
        .await;
    assert_eq!(
        browser
            .text_of(&format!("#job-{waiting} .status"))
            .await
            .as_deref(),
        Some("cancelled")
    );
    assert_eq!(
        browser
            .text_of("tr[data-kind=deliver_webhook] td[data-status=cancelled]")
            .await
            .as_deref(),
        Some("1")
    );

    // Retry the dead one: the worker runs it, and a reload shows it done.
    browser.click(&format!("#job-{dead} button.retry")).await;
    browser
        .wait_for_text("#notice", &format!("Done: retry:{dead}"), false)
        .await;
    browser
        .wait_for_text(&format!("#job-{dead} .status"), "done", true)
        .await;
    assert_eq!(browser.text_of("#dead").await.as_deref(), Some("0"));

    // A count links to its list.
    browser
        .click("tr[data-kind=deliver_webhook] td[data-status=cancelled] a")
        .await;
    browser
        .wait_for_text(
            "#list-title",
            "Latest jobs of kind deliver_webhook that are cancelled",
            false,
        )
        .await;
    assert!(browser.text_of(&format!("#job-{waiting}")).await.is_some());
    assert!(browser.text_of(&format!("#job-{dead}")).await.is_none());

    browser
        .command(reqwest::Method::DELETE, "", Value::Null)
        .await;
    drop(browser);
    server.stop().await;
}

/// The web app's page, as another origin serves it: `setPreferences` is how it writes a wallet's
/// push preferences, with the proof the wallet signed.
const PREFERENCES_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>Notification settings</title></head>
<body><h1>Notification settings</h1>
<script>
async function setPreferences(api, method, wallet, signature, issuedAt, preferences, extra) {
  try {
    const response = await fetch(`${api}/v1/notifications/push/preferences/${wallet}`, {
      method,
      headers: Object.assign({
        "content-type": "application/json",
        "x-wallet-signature": signature,
        "x-wallet-issued-at": String(issuedAt),
      }, extra || {}),
      body: JSON.stringify(preferences),
    });
    return {status: response.status, body: await response.json()};
  } catch (error) {
    return {error: String(error)};
  }
}
</script></body></html>"#;

#[poem::handler]
fn preferences_page() -> poem::web::Html<&'static str> {
    poem::web::Html(PREFERENCES_PAGE)
}

#[tokio::test]
#[ignore = "needs Debian's chromium and chromium-driver; .ci/run installs them and runs it"]
async fn a_page_of_an_allowed_origin_sets_push_preferences_in_headless_chromium() {
    // The web app: a page on another local port, an origin the service allows.
    let page_origin =
        common::serve_locally(poem::Route::new().at("/", poem::get(preferences_page))).await;
    let allowed = page_origin.clone();
    let server = TestServer::start(move |c| c.cors_origins.push(allowed)).await;
    let wallet = SigningWallet::new(31);
    let path = format!("/v1/notifications/push/preferences/{}", wallet.address);
    let now = server.clock.now();
    let replace = format!(
        "narrative-market-service:push-preferences-replace:{}:payout_received=off,streak_broken=off",
        wallet.address
    );
    let change = format!(
        "narrative-market-service:push-preferences:{}:streak_broken=on",
        wallet.address
    );

    let browser = Browser::start().await;
    browser.open(&format!("{page_origin}/")).await;
    browser
        .wait_for_text("h1", "Notification settings", false)
        .await;
    let set = |method: &str, signature: String, preferences: Value, extra: Value| {
        let browser = &browser;
        let args = json!([
            server.base,
            method,
            wallet.address,
            signature,
            now,
            preferences,
            extra
        ]);
        async move {
            browser
                .command(
                    reqwest::Method::POST,
                    "/execute/async",
                    json!({
                        "script": "const done = arguments[arguments.length - 1];\
                                   setPreferences(...Array.from(arguments).slice(0, -1)).then(done);",
                        "args": args,
                    }),
                )
                .await
        }
    };

    // A header the service does not allow: the browser refuses to send the request at all,
    // so this page would see what a page saw before the proof headers were allowed.
    let refused = set(
        "PUT",
        wallet.sign_at(&replace, now),
        json!({"payout_received": false, "streak_broken": false}),
        json!({"x-not-allowed": "1"}),
    )
    .await;
    assert!(
        refused["error"]
            .as_str()
            .is_some_and(|e| e.contains("Failed to fetch")),
        "{refused}"
    );
    let stored = push_preferences::Entity::find_by_id(wallet.address.clone())
        .one(server.db.store.db())
        .await
        .unwrap();
    assert!(
        stored.is_none(),
        "the refused request never reached the service"
    );

    // PUT with the wallet's proof: the browser sends it, and the page reads the answer.
    let replaced = set(
        "PUT",
        wallet.sign_at(&replace, now),
        json!({"payout_received": false, "streak_broken": false}),
        json!({}),
    )
    .await;
    assert_eq!(replaced["status"], 200, "{replaced}");
    assert_eq!(replaced["body"]["preferences"]["streak_broken"], false);
    let (status, read) = server.get(&path).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    assert_eq!(read["preferences"]["payout_received"], false);
    assert_eq!(read["preferences"]["streak_broken"], false);
    assert_eq!(read["preferences"]["system_announcement"], true);
    let stored = push_preferences::Entity::find_by_id(wallet.address.clone())
        .one(server.db.store.db())
        .await
        .unwrap()
        .expect("the preferences stored");
    assert_eq!(stored.disabled, json!(["payout_received", "streak_broken"]));

    // PATCH changes one type and leaves the others.
    let changed = set(
        "PATCH",
        wallet.sign_at(&change, now),
        json!({"streak_broken": true}),
        json!({}),
    )
    .await;
    assert_eq!(changed["status"], 200, "{changed}");
    let (_, read) = server.get(&path).await;
    assert_eq!(read["preferences"]["streak_broken"], true);
    assert_eq!(read["preferences"]["payout_received"], false);

    browser
        .command(reqwest::Method::DELETE, "", Value::Null)
        .await;
    drop(browser);
    server.stop().await;
}
