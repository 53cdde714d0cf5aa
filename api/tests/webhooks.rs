//! Agent webhooks against local receivers: registration with its refusals; a
//! `narrative.resolved` delivery in the Standard Webhooks format, verified with the
//! `standardwebhooks` library, retried after the receiver fails under the same `webhook-id`,
//! every attempt recorded; and the outbound guard, which refuses every non-public destination at
//! registration and again at delivery (DNS rebinding included).

mod common;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use common::TestServer;
use common::{eventually, eventually_some};
use narrative_api::clock::ManualClock;
use narrative_api::providers::outbound::Resolve;
use narrative_api::{Config, Providers};
use narrative_store::entities::{agent_webhooks, jobs, webhook_deliveries};
use poem::http::{HeaderMap, StatusCode as PoemStatus};
use poem::web::Data;
use poem::{handler, post, EndpointExt, Route};
use reqwest::StatusCode;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, IntoActiveModel, PaginatorTrait, QueryFilter,
    QueryOrder,
};
use serde_json::{json, Value};

const AGENT_WALLET: &str = "C9QjHcuPyyncqkpSqKdQpFJjUNTgbwmbEN4GeGUoSpjN";

#[derive(Default)]
struct Receiver {
    /// (headers, body) of every request.
    seen: Mutex<Vec<(HeaderMap, String)>>,
}

/// Fails the first delivery with 500, accepts the next ones.
#[handler]
fn receive(headers: &HeaderMap, body: String, Data(receiver): Data<&Arc<Receiver>>) -> PoemStatus {
    let mut seen = receiver.seen.lock().unwrap();
    seen.push((headers.clone(), body));
    if seen.len() == 1 {
        PoemStatus::INTERNAL_SERVER_ERROR
    } else {
        PoemStatus::OK
    }
}

/// Registers an agent on `server`, granted oracle authority by the operator; its key.
async fn agent(server: &TestServer) -> String {
    let (status, registered) = server
        .post(
            "/v1/agent/register",
            &json!({"wallet_address": AGENT_WALLET, "name": "listener"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{registered}");
    let id = registered["agent"]["id"].as_str().unwrap();
    let (status, granted) = server
        .admin_post(&format!("/v1/admin/agents/{id}/oracle"), &json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{granted}");
    registered["agent"]["api_key"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_resolution_is_delivered_as_a_standard_webhook_and_retried_until_accepted() {
    let receiver = Arc::new(Receiver::default());
    let base = common::serve_locally(
        Route::new()
            .at("/hook", post(receive))
            .data(receiver.clone()),
    )
    .await;
    // Near the real time: the library checks the timestamp against its own clock.
    let clock = ManualClock::at_system_time();
    let server = TestServer::start_at(clock.clone(), |c| {
        // The receiver is an http server on this machine.
        c.outbound_allow_local = true;
    })
    .await;
    let key = agent(&server).await;
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
    let secret = answer["signing_secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_"), "{secret}");
    assert_eq!(
        answer,
        json!({
            "ok": true, "message": "webhook registered", "url": url,
            "events": ["narrative.resolved"], "signing_secret": secret,
        })
    );

    let id = resolve_a_narrative(&server, &key, "false", clock_now(&clock)).await;

    // The first attempt gets a 500; the retry is due 2 s later, on the server's clock. The
    // clock moves only once the worker has put the job back, so the retry is dated from the
    // failure, not from the advanced clock.
    eventually("the first attempt", || async {
        receiver.seen.lock().unwrap().len() == 1
    })
    .await;
    let db = server.db.store.db();
    let queued = eventually_some("the job queued again", || async {
        jobs::Entity::find()
            .filter(jobs::Column::Kind.eq("deliver_webhook"))
            .one(db)
            .await
            .unwrap()
            .filter(|job| job.status == "queued" && job.attempts >= 1)
    })
    .await;
    assert_eq!(
        queued.run_at - clock_now(&clock),
        2,
        "the first retry waits 2 s"
    );
    clock.advance(2);
    eventually("the retry", || async {
        receiver.seen.lock().unwrap().len() == 2
    })
    .await;
    let seen = receiver.seen.lock().unwrap().clone();
    let webhook = standardwebhooks::Webhook::new(&secret).unwrap();
    for (headers, body) in &seen {
        webhook
            .verify(body.as_bytes(), headers)
            .expect("a Standard Webhooks signature");
    }
    let id_of = |i: usize| seen[i].0["webhook-id"].to_str().unwrap().to_owned();
    assert_eq!(id_of(0), id_of(1), "a retry keeps the message id");
    assert_eq!(seen[0].1, seen[1].1, "a retry sends the same body");
    let timestamp = |i: usize| -> i64 {
        seen[i].0["webhook-timestamp"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(
        timestamp(1) - timestamp(0),
        2,
        "each attempt is stamped when sent"
    );
    let body: Value = serde_json::from_str(&seen[1].1).unwrap();
    assert_eq!(body["type"], "narrative.resolved");
    assert_eq!(body["data"]["narrative_id"], id.to_string());
    assert_eq!(body["data"]["oracle_status"], "resolved_false");
    // Tampering with the body breaks the signature.
    assert!(webhook
        .verify(seen[1].1.replace("false", "true").as_bytes(), &seen[1].0)
        .is_err());

    eventually("both attempts recorded", || async {
        webhook_deliveries::Entity::find()
            .all(db)
            .await
            .unwrap()
            .len()
            == 2
    })
    .await;
    let attempts = webhook_deliveries::Entity::find()
        .order_by_asc(webhook_deliveries::Column::Id)
        .all(db)
        .await
        .unwrap();
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

/// A live narrative created at `created_at`, resolved by the agent behind `key` (which fires
/// `narrative.resolved`); its id.
async fn resolve_a_narrative(
    server: &TestServer,
    key: &str,
    resolution: &str,
    created_at: i64,
) -> uuid::Uuid {
    let id = uuid::Uuid::new_v4();
    common::fixtures::narrative(
        &id,
        AGENT_WALLET,
        "Kestrel ships",
        "TECHNOLOGY",
        "live",
        created_at,
    )
    .into_active_model()
    .insert(server.db.store.db())
    .await
    .unwrap();
    let (status, answer) = server
        .key_post(
            "/v1/agent/resolve",
            key,
            &json!({"narrative_id": id.to_string(), "resolution": resolution, "confidence": 0.8}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    id
}

fn clock_now(clock: &ManualClock) -> i64 {
    narrative_api::clock::Clock::now(clock)
}

/// Host names resolving as the test says, changeable mid-test (DNS rebinding).
#[derive(Default)]
struct FixedResolver {
    table: Mutex<HashMap<String, Vec<IpAddr>>>,
    asked: Mutex<Vec<String>>,
}

impl FixedResolver {
    /// How many times `host` was looked up.
    fn lookups(&self, host: &str) -> usize {
        self.asked
            .lock()
            .unwrap()
            .iter()
            .filter(|h| *h == host)
            .count()
    }
}

#[async_trait::async_trait]
impl Resolve for FixedResolver {
    async fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        self.asked.lock().unwrap().push(host.to_owned());
        if host == "localhost" {
            // The system's answer, for the name every machine resolves to loopback.
            return narrative_api::providers::outbound::SystemResolver
                .resolve(host)
                .await;
        }
        self.table
            .lock()
            .unwrap()
            .get(host)
            .cloned()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such host"))
    }
}

#[tokio::test]
async fn the_service_calls_only_public_https_addresses() {
    let resolver = Arc::new(FixedResolver::default());
    resolver.table.lock().unwrap().extend([
        (
            "hooks.example".to_owned(),
            vec!["93.184.216.34".parse().unwrap()],
        ),
        (
            "loopback.example".to_owned(),
            vec!["127.0.0.1".parse().unwrap()],
        ),
        ("loopback6.example".to_owned(), vec!["::1".parse().unwrap()]),
        (
            "inside.example".to_owned(),
            vec![
                "93.184.216.34".parse().unwrap(),
                "10.1.2.3".parse().unwrap(),
            ],
        ),
    ]);
    let config = Config::defaults();
    let mut providers = Providers::from_config(&config).unwrap();
    providers.resolver = resolver.clone();
    let server = TestServer::start_with(Some(providers), |_| {}).await;
    let key = agent(&server).await;
    let register = |url: &str| {
        let body = json!({"url": url, "events": ["narrative.resolved"]});
        let server = &server;
        let key = key.clone();
        async move { server.key_post("/v1/agent/webhook", &key, &body).await }
    };

    for refused in [
        "http://93.184.216.34/hook",
        "https://127.0.0.1/hook",
        "https://10.0.0.7/hook",
        "https://172.16.5.4/hook",
        "https://192.168.1.1/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://100.64.0.1/hook",
        "https://0.0.0.0/hook",
        "https://224.0.0.1/hook",
        "https://240.0.0.1/hook",
        "https://[::1]/hook",
        "https://[fd00::1]/hook",
        "https://[fe80::1]/hook",
        "https://[ff02::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://[::ffff:169.254.169.254]/hook",
        "https://[64:ff9b::a9fe:a9fe]/hook",
        "https://[64:ff9b:1::a00:1]/hook",
        "https://localhost/hook",
        "https://loopback.example/hook",
        "https://loopback6.example/hook",
        "https://inside.example/hook",
        "https://nowhere.example/hook",
    ] {
        let (status, answer) = register(refused).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{refused}: {answer}");
        assert_eq!(answer["error"], "url_not_allowed", "{refused}");
        let message = answer["message"].as_str().unwrap_or_default();
        let literal =
            refused.starts_with("https://[") || refused[8..].starts_with(char::is_numeric);
        let why = if refused.starts_with("http:") {
            "https"
        } else if literal {
            "is not a public address"
        } else {
            // A name: the same words whether it resolves inside or not at all, and never the
            // address it resolves to.
            "does not resolve to a public address"
        };
        assert!(message.contains(why), "{refused}: {message}");
        for inside in ["127.0.0.1", "::1", "10.1.2.3"] {
            assert!(literal || !message.contains(inside), "{refused}: {message}");
        }
    }
    let db = server.db.store.db();
    assert!(
        agent_webhooks::Entity::find()
            .all(db)
            .await
            .unwrap()
            .is_empty(),
        "nothing refused was registered"
    );

    // Public addresses pass, by literal address and by name.
    for public in [
        "https://93.184.216.34/hook",
        "https://[2606:4700:4700::1111]/x",
    ] {
        let (status, answer) = register(public).await;
        assert_eq!(status, StatusCode::OK, "{public}: {answer}");
    }
    let (status, answer) = register("https://hooks.example/hook").await;
    assert_eq!(status, StatusCode::OK, "{answer}");

    // The name now resolves inside the network: delivery checks again and refuses, once.
    resolver.table.lock().unwrap().insert(
        "hooks.example".to_owned(),
        vec!["10.0.0.9".parse().unwrap()],
    );
    resolve_a_narrative(&server, &key, "true", 1).await;
    eventually("the refused delivery recorded", || async {
        !webhook_deliveries::Entity::find()
            .all(db)
            .await
            .unwrap()
            .is_empty()
    })
    .await;
    let attempt = webhook_deliveries::Entity::find()
        .one(db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(attempt.status_code, None);
    assert_eq!(
        attempt.error.as_deref(),
        Some("refused: 10.0.0.9 is not a public address")
    );
    // The attempt is recorded before the job is settled: wait for the settlement.
    let job = eventually_some("the refused delivery settled", || async {
        jobs::Entity::find()
            .filter(jobs::Column::Kind.eq("deliver_webhook"))
            .one(db)
            .await
            .unwrap()
            .filter(|job| job.status != "queued" && job.status != "running")
    })
    .await;
    assert_eq!(job.status, "done", "a refused destination is not retried");
    assert_eq!(job.attempts, 1);
    assert_eq!(
        resolver.lookups("hooks.example"),
        2,
        "one lookup at registration, one when the delivery connects"
    );
    server.stop().await;
}

/// Deliveries a receiver saw: (hook name, headers, body).
type Seen = Arc<Mutex<Vec<(String, HeaderMap, String)>>>;

/// Accepts every delivery, noting which hook it came to (`/hook/<name>`).
#[handler]
fn accept(
    poem::web::Path(name): poem::web::Path<String>,
    headers: &HeaderMap,
    body: String,
    Data(seen): Data<&Seen>,
) -> PoemStatus {
    seen.lock().unwrap().push((name, headers.clone(), body));
    PoemStatus::OK
}

/// An agent named `name` on `server`: its key and the id of its key row.
async fn named_agent(server: &TestServer, name: &str) -> (String, String) {
    let (status, registered) = server
        .post(
            "/v1/agent/register",
            &json!({"wallet_address": AGENT_WALLET, "name": name}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{registered}");
    let key = registered["agent"]["api_key"].as_str().unwrap().to_owned();
    let agent_id = registered["agent"]["id"].as_str().unwrap().to_owned();
    let row = narrative_store::entities::agents::Entity::find_by_id(agent_id)
        .one(server.db.store.db())
        .await
        .unwrap()
        .unwrap();
    (key, row.api_key_id)
}

/// The webhook secret is random per registration (not the SHA-256 of the agent's key, which
/// the service stores and which was the secret before), a new registration rotates it, and an
/// agent whose key is revoked gets nothing: no new event is queued for it, and a delivery queued
/// before the revocation is dropped when it comes up.
#[tokio::test]
async fn the_signing_secret_is_random_and_a_revoked_agent_receives_nothing() {
    use sha2::Digest;
    let seen: Seen = Arc::default();
    let base = common::serve_locally(
        Route::new()
            .at("/hook/:name", post(accept))
            .data(seen.clone()),
    )
    .await;
    let clock = ManualClock::at_system_time();
    let server = TestServer::start_at(clock.clone(), |c| c.outbound_allow_local = true).await;
    let (live_key, _) = named_agent(&server, "live").await;
    let (revoked_key, revoked_key_id) = named_agent(&server, "revoked").await;
    let register = |key: String, name: &'static str| {
        let server = &server;
        let url = format!("{base}/hook/{name}");
        async move {
            let (status, answer) = server
                .key_post(
                    "/v1/agent/webhook",
                    &key,
                    &json!({"url": url, "events": ["narrative.resolved"]}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{answer}");
            answer["signing_secret"].as_str().unwrap().to_owned()
        }
    };
    let first = register(live_key.clone(), "live").await;
    let secret = register(live_key.clone(), "live").await;
    let revoked_secret = register(revoked_key.clone(), "revoked").await;
    // Before, the secret was `whsec_` and the base64 of SHA-256(key): what the store keeps.
    let derived = |key: &str| {
        use base64::Engine;
        format!(
            "whsec_{}",
            base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(key.as_bytes()))
        )
    };
    assert_ne!(secret, derived(&live_key));
    assert_ne!(revoked_secret, derived(&revoked_key));
    assert_ne!(first, secret, "registering again makes a new secret");
    assert_ne!(secret, revoked_secret);
    let stored = agent_webhooks::Entity::find()
        .all(server.db.store.db())
        .await
        .unwrap();
    assert!(stored
        .iter()
        .any(|hook| hook.signing_secret.as_deref() == Some(secret.as_str())));

    // A delivery queued for the agent while its key is live...
    let db = server.db.store.db();
    let now = clock_now(&clock);
    let revoked_agent = stored
        .iter()
        .find(|hook| hook.signing_secret.as_deref() == Some(revoked_secret.as_str()))
        .unwrap()
        .agent_id
        .clone();
    narrative_api::jobs::enqueue(
        db,
        &narrative_api::jobs::deliver_webhook::DeliverWebhook {
            agent_id: revoked_agent.clone(),
            url: format!("{base}/hook/revoked"),
            event: "narrative.resolved".into(),
            body: json!({"type": "narrative.resolved", "data": {}}).to_string(),
            message_id: Some("msg_queued_before_revocation".into()),
        },
        now,
        now + 60,
    )
    .await
    .unwrap();
    // ...and then the operator revokes the key.
    let (status, answer) = server
        .admin_post(
            "/v1/apikeys/revoke",
            &json!({"id": revoked_key_id, "wallet_address": AGENT_WALLET}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");

    // An event: delivered to the live agent only, signed with its latest secret.
    let id = uuid::Uuid::new_v4();
    common::fixtures::narrative(
        &id,
        AGENT_WALLET,
        "Kestrel ships",
        "TECHNOLOGY",
        "open",
        now,
    )
    .into_active_model()
    .insert(db)
    .await
    .unwrap();
    let (status, answer) = server
        .admin_post(
            &format!("/v1/admin/narratives/{id}/verdict"),
            &json!({"outcome": "true", "evidence": "the release notes"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    eventually("the live agent told", || async {
        !seen.lock().unwrap().is_empty()
    })
    .await;
    // Its job done first: a delivery still running when the clock moves a lease's length
    // could be leased again and sent twice.
    eventually("the live delivery recorded", || async {
        jobs::Entity::find()
            .filter(jobs::Column::Kind.eq("deliver_webhook"))
            .filter(jobs::Column::Status.eq("done"))
            .count(db)
            .await
            .unwrap()
            == 1
    })
    .await;
    // The queued delivery's time comes: it is dropped, not sent.
    clock.advance(60);
    eventually("every webhook job finished", || async {
        let jobs = jobs::Entity::find()
            .filter(jobs::Column::Kind.eq("deliver_webhook"))
            .all(db)
            .await
            .unwrap();
        jobs.len() == 2 && jobs.iter().all(|j| j.status == "done")
    })
    .await;
    let seen = seen.lock().unwrap().clone();
    let names: Vec<&str> = seen.iter().map(|(name, _, _)| name.as_str()).collect();
    assert_eq!(names, ["live"], "nothing reached the revoked agent");
    let (_, headers, body) = &seen[0];
    standardwebhooks::Webhook::new(&secret)
        .unwrap()
        .verify(body.as_bytes(), headers)
        .expect("signed with the agent's latest secret");
    assert!(standardwebhooks::Webhook::new(&first)
        .unwrap()
        .verify(body.as_bytes(), headers)
        .is_err());
    assert!(standardwebhooks::Webhook::new(&derived(&live_key))
        .unwrap()
        .verify(body.as_bytes(), headers)
        .is_err());
    let attempts = webhook_deliveries::Entity::find().all(db).await.unwrap();
    assert_eq!(attempts.len(), 1, "the dropped delivery made no attempt");
    assert_ne!(attempts[0].agent_id, revoked_agent);
    server.stop().await;
}

/// An event for many agents (10,000 webhooks here) writes one row in the transaction that
/// reports it, the fan-out job, which then queues the deliveries a page at a time, once each
/// (a fan-out run again after a crash queues nothing twice), only to the agents subscribed to
/// the event with a live key.
#[tokio::test]
async fn an_event_for_many_agents_is_one_row_in_its_transaction_and_fans_out_in_pages() {
    use narrative_api::domain::agents::webhooks::{self, WebhookEvent, WebhookFanOut};
    use narrative_api::jobs::fan_out_webhook::FanOutWebhook;
    use narrative_api::jobs::{Handler, JobOutcome, Leased};
    use narrative_store::entities::{agents, api_keys};
    use sea_orm::ActiveValue::Set;

    const AGENTS: usize = 10_000;
    let db = narrative_store::testing::TestDb::new().await;
    let conn = db.store.db();
    let now = 1_800_000_000;
    // Every tenth agent's key is revoked; every tenth from the second on wants only
    // narrative.created; the other 8,000 want narrative.resolved with a live key.
    let ids: Vec<usize> = (0..AGENTS).collect();
    for page in ids.chunks(500) {
        api_keys::Entity::insert_many(page.iter().map(|n| api_keys::ActiveModel {
            id: Set(format!("key-{n:05}")),
            prefix: Set("nms_0000".into()),
            key_hash: Set(format!("hash-{n:05}")),
            tier: Set("free".into()),
            wallet: Set(None),
            name: Set(None),
            created_at: Set(now),
            revoked_at: Set((n % 10 == 0).then_some(now)),
            last_used_at: Set(None),
            self_registered: Set(true),
        }))
        .exec_without_returning(conn)
        .await
        .unwrap();
        agents::Entity::insert_many(page.iter().map(|n| agents::ActiveModel {
            id: Set(format!("ag_{n:05}")),
            name: Set(format!("agent {n}")),
            description: Set(None),
            wallet_address: Set(AGENT_WALLET.into()),
            api_key_id: Set(format!("key-{n:05}")),
            created_at: Set(now),
            wallet_proven: Set(false),
            oracle_granted_at: Set(None),
            oracle_granted_by: Set(None),
            oracle_revoked_at: Set(None),
        }))
        .exec_without_returning(conn)
        .await
        .unwrap();
        agent_webhooks::Entity::insert_many(page.iter().map(|n| agent_webhooks::ActiveModel {
            agent_id: Set(format!("ag_{n:05}")),
            url: Set(format!("https://receiver-{n}.example/hook")),
            events: Set(if n % 10 == 1 {
                json!(["narrative.created"])
            } else {
                json!(["narrative.created", "narrative.resolved"])
            }),
            created_at: Set(now),
            signing_secret: Set(Some(webhooks::new_signing_secret())),
        }))
        .exec_without_returning(conn)
        .await
        .unwrap();
    }

    let started = std::time::Instant::now();
    let txn = db.store.begin_write().await.unwrap();
    webhooks::emit(&txn, WebhookEvent::NarrativeResolved, json!({"n": 1}), now)
        .await
        .unwrap();
    txn.commit().await.unwrap();
    let emitted = started.elapsed();
    let of_kind = |kind: &'static str| async move {
        jobs::Entity::find()
            .filter(jobs::Column::Kind.eq(kind))
            .all(conn)
            .await
            .unwrap()
    };
    assert!(of_kind("deliver_webhook").await.is_empty());
    let fan_outs = of_kind("fan_out_webhook").await;
    assert_eq!(fan_outs.len(), 1, "one row in the event's transaction");
    let job: FanOutWebhook = serde_json::from_value(fan_outs[0].payload.clone()).unwrap();

    // The fan-out runs a minute after the event: the deliveries are due from then.
    let fan_out = WebhookFanOut {
        store: db.store.clone(),
        clock: ManualClock::at(now + 60),
    };
    let started = std::time::Instant::now();
    for attempt in 1..=2 {
        let leased = Leased {
            id: fan_outs[0].id,
            attempt,
            job: job.clone(),
        };
        assert!(matches!(
            fan_out.run(leased).await.unwrap(),
            JobOutcome::Done
        ));
        if attempt == 1 {
            eprintln!(
                "emit {emitted:?}; fan-out of {AGENTS} webhooks {:?}",
                started.elapsed()
            );
        }
    }
    let deliveries = of_kind("deliver_webhook").await;
    assert_eq!(deliveries.len(), 8_000, "once each, after two runs");
    let mut agents: Vec<String> = deliveries
        .iter()
        .map(|d| d.payload["agent_id"].as_str().unwrap().to_owned())
        .collect();
    agents.sort();
    agents.dedup();
    assert_eq!(agents.len(), 8_000);
    assert!(agents
        .iter()
        .all(|a| !a.ends_with('0') && !a.ends_with('1')));
    for delivery in &deliveries {
        let agent = delivery.payload["agent_id"].as_str().unwrap();
        let message_id = format!("{}_{agent}", job.message_id);
        assert_eq!(delivery.payload["message_id"], message_id.as_str());
        assert_eq!(delivery.subject.as_deref(), Some(message_id.as_str()));
        assert_eq!(delivery.payload["body"], job.body.as_str());
        assert_eq!(delivery.run_at, now + 60);
    }
}
