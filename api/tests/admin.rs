//! The operators' surface over HTTP (spec 5.6, 9.2): the admin pair on every operation, the
//! dashboard's counts and health, narrative moderation at both its paths (hide, restore, a
//! forced verdict into settlement), score recalculation, the job queue's page behind HTTP Basic
//! and the pair (retry, cancel, escaping), and the operators' log.

mod common;

use base64::Engine;
use common::{TestServer, ADMIN_SECRET, ADMIN_WALLET};
use narrative_api::clock::ManualClock;
use narrative_store::entities::{jobs, oracle_audit_log};
use reqwest::StatusCode;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, EntityTrait, IntoActiveModel, PaginatorTrait, QueryFilter,
};
use serde_json::{json, Value};
use solana_signer::Signer;

const QUEUES_PASSWORD: &str = "queue-page-password";
const CREATOR: &str = "C9QjHcuPyyncqkpSqKdQpFJjUNTgbwmbEN4GeGUoSpjN";

async fn admin(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> (StatusCode, Value) {
    server.admin_request(ADMIN_WALLET, method, path, body).await
}

async fn add_narrative(server: &TestServer, title: &str, oracle_status: &str, at: i64) -> String {
    let id = uuid::Uuid::new_v4();
    common::fixtures::narrative(&id, CREATOR, title, "crypto", oracle_status, at)
        .into_active_model()
        .insert(server.db.store.db())
        .await
        .unwrap();
    id.to_string()
}

/// The shield gate's blocks now, as an operator lists them.
async fn blocked_ips(server: &TestServer) -> Value {
    let (status, listed) =
        admin(server, reqwest::Method::GET, "/v1/shield/blocked-ips", None).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    listed
}

/// A job of `kind` about `subject` (a narrative), due a day ahead, in `status`.
async fn add_job(
    server: &TestServer,
    kind: &str,
    subject: &str,
    status: &str,
    error: Option<&str>,
) -> i64 {
    let payload = json!({"narrative_id": subject});
    let db = server.db.store.db();
    common::fixtures::job(
        db,
        server.clock.now(),
        kind,
        Some(subject),
        payload,
        status,
        error,
    )
    .await
}

use common::operators_log as actions;

#[tokio::test]
async fn operators_see_the_queue_and_moderate_narratives() {
    // A held clock: the jobs the server queues for itself at start are due "now", and a system
    // clock crossing a second before the worker takes them would make them a second overdue.
    let server = TestServer::start_at(ManualClock::at_system_time(), |_| {}).await;
    let now = server.clock.now();
    // Every operation needs the pair.
    for (method, path) in [
        (reqwest::Method::GET, "/v1/admin/dashboard"),
        (reqwest::Method::GET, "/v1/admin/markets/pending"),
        (reqwest::Method::POST, "/v1/admin/scores/recalculate"),
    ] {
        let response = server
            .http
            .request(method, server.url(path))
            .header("x-admin-wallet", ADMIN_WALLET)
            .header("x-admin-secret", "wrong")
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{path}");
    }

    let listed = add_narrative(&server, "Listed", "open", now - 10).await;
    let other = add_narrative(&server, "Other", "open", now - 20).await;
    // The creator's own backing of the listed narrative: its backings name the narrative.
    let listed_market = hex::encode(narrative_sdk::market_id::market_id_from_uuid(
        &listed.parse().unwrap(),
    ));
    common::fixtures::backing(
        "ListedBacking",
        &listed_market,
        CREATOR,
        "yes",
        1_000_000_000,
    )
    .into_active_model()
    .insert(server.db.store.db())
    .await
    .unwrap();
    let creator_backing = || async {
        let (status, page) = server.get(&format!("/v1/users/{CREATOR}/backings")).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        assert_eq!(page["backings"].as_array().unwrap().len(), 1, "{page}");
        page["backings"][0].clone()
    };
    let shown = creator_backing().await;
    assert_eq!(shown["title"], "Listed");
    assert_eq!(shown["narrative_id"], listed.as_str());
    add_job(&server, "score_narrative", &listed, "dead", Some("boom")).await;
    add_job(&server, "score_narrative", &other, "queued", None).await;

    let (status, board) = admin(&server, reqwest::Method::GET, "/v1/admin/dashboard", None).await;
    assert_eq!(status, StatusCode::OK, "{board}");
    let count = |kind: &str, status: &str| {
        board["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["kind"] == kind && j["status"] == status)
            .map_or(0, |j| j["count"].as_i64().unwrap())
    };
    assert_eq!(count("score_narrative", "dead"), 1);
    assert_eq!(count("score_narrative", "queued"), 1);
    assert_eq!(board["queue"]["status"], "degraded");
    assert_eq!(board["queue"]["dead"], 1);
    assert_eq!(
        board["queue"]["oldest_due_secs"], 0,
        "the queued job is due tomorrow"
    );
    assert_eq!(
        board["node_reachable"], false,
        "no node runs behind this server"
    );
    let nft = board["halts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "nft")
        .cloned()
        .unwrap();
    assert_eq!(nft["halted"], false);

    // Hide: gone from the feed and the single read; restored at the spec's own path.
    let (status, hidden) = admin(
        &server,
        reqwest::Method::POST,
        &format!("/v1/admin/narratives/{listed}/hide"),
        Some(&json!({"reason": "spam"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{hidden}");
    assert_eq!(hidden["status"], "hidden");
    let (status, _) = server.get(&format!("/v1/narratives/{listed}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, feed) = server.get("/v1/narratives").await;
    let titles: Vec<&str> = feed["narratives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, vec!["Other"]);
    // Nor do the wallet's backings name it: the backing stays, its narrative unnamed.
    let shown = creator_backing().await;
    assert_eq!(shown["id"], "ListedBacking");
    assert!(shown["title"].is_null(), "{shown}");
    assert!(shown["narrative_id"].is_null(), "{shown}");
    // Nor does the public originality check compare with it: "Listed is the thesis" is the
    // hidden thesis reworded, and shares only "thesis" with Other's.
    let originality = || async {
        let (status, checked) = server
            .post(
                "/v1/narratives/check-originality",
                &json!({"thesis": "Listed is the thesis"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{checked}");
        checked["similarity"].as_f64().unwrap()
    };
    assert_eq!(originality().await, 0.5);
    let (status, again) = admin(
        &server,
        reqwest::Method::POST,
        &format!("/admin/narratives/{listed}/hide"),
        Some(&json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    assert_eq!(again["error"], "already_hidden");
    let (status, restored) = admin(
        &server,
        reqwest::Method::POST,
        &format!("/admin/narratives/{listed}/restore"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{restored}");
    assert_eq!(restored["status"], "active");
    let (status, _) = server.get(&format!("/v1/narratives/{listed}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(originality().await, 1.0, "restored, it is compared again");
    let (status, again) = admin(
        &server,
        reqwest::Method::POST,
        &format!("/v1/admin/narratives/{listed}/restore"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(again["error"], "not_hidden");

    // A forced verdict takes the oracle's path: status, audit log naming the operator,
    // settlement queued; once only.
    let (status, verdict) = admin(
        &server,
        reqwest::Method::POST,
        &format!("/admin/narratives/{listed}/verdict"),
        Some(&json!({"outcome": "true", "evidence": "the announcement"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{verdict}");
    assert_eq!(verdict["oracle_status"], "resolved_true");
    let audit = oracle_audit_log::Entity::find()
        .filter(oracle_audit_log::Column::NarrativeId.eq(listed.as_str()))
        .one(server.db.store.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(audit.agent_id, format!("admin:{ADMIN_WALLET}"));
    assert!(audit.resolution);
    assert_eq!(audit.evidence, "the announcement");
    let settlement = jobs::Entity::find()
        .filter(jobs::Column::Kind.eq("settle_narrative"))
        .filter(jobs::Column::Subject.eq(listed.as_str()))
        .count(server.db.store.db())
        .await
        .unwrap();
    assert_eq!(settlement, 1);
    let (status, again) = admin(
        &server,
        reqwest::Method::POST,
        &format!("/v1/admin/narratives/{listed}/verdict"),
        Some(&json!({"outcome": "false"})),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    assert_eq!(again["error"], "not_open_for_resolution");
    let unknown = uuid::Uuid::new_v4();
    let (status, _) = admin(
        &server,
        reqwest::Method::POST,
        &format!("/v1/admin/narratives/{unknown}/verdict"),
        Some(&json!({"outcome": "false"})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Recalculation: one narrative, then every open one: the resolved one no longer is, and
    // `other` has its scoring queued already, so only `fresh` is queued.
    let fresh = add_narrative(&server, "Fresh", "open", now - 30).await;
    let (status, one) = admin(
        &server,
        reqwest::Method::POST,
        "/v1/admin/scores/recalculate",
        Some(&json!({"narrative_id": listed})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{one}");
    assert_eq!(one["queued"], 1);
    let (_, open) = admin(
        &server,
        reqwest::Method::POST,
        "/v1/admin/scores/recalculate",
        Some(&json!({})),
    )
    .await;
    assert_eq!(open["queued"], 1);
    let fresh_scoring = jobs::Entity::find()
        .filter(jobs::Column::Kind.eq("score_narrative"))
        .filter(jobs::Column::Subject.eq(fresh.as_str()))
        .count(server.db.store.db())
        .await
        .unwrap();
    assert_eq!(fresh_scoring, 1);
    let (status, _) = admin(
        &server,
        reqwest::Method::POST,
        "/v1/admin/scores/recalculate",
        Some(&json!({"narrative_id": unknown})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let logged: Vec<String> = actions(&server)
        .await
        .into_iter()
        .map(|(a, _, actor)| {
            assert_eq!(actor, ADMIN_WALLET);
            a
        })
        .collect();
    assert_eq!(
        logged,
        vec![
            "narrative.hide",
            "narrative.restore",
            "narrative.verdict",
            "scores.recalculate",
            "scores.recalculate"
        ]
    );
    server.stop().await;
}

fn basic(user: &str, password: &str) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

/// The queue page with `basic` and, when `pair`, the admin pair.
async fn queue_page(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    basic: Option<&str>,
    pair: bool,
) -> reqwest::Response {
    let mut request = server
        .http
        .request(method, server.url(path))
        .header("content-type", "application/x-www-form-urlencoded");
    if let Some(basic) = basic {
        request = request.header("authorization", basic);
    }
    if pair {
        request = request
            .header("x-admin-wallet", ADMIN_WALLET)
            .header("x-admin-secret", ADMIN_SECRET);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn the_queue_page_needs_basic_and_the_pair_and_retries_and_cancels() {
    let server = TestServer::start(|c| {
        c.admin_queues_password = Some(QUEUES_PASSWORD.into());
    })
    .await;
    let good = basic("operator", QUEUES_PASSWORD);
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    // Basic first (a browser is asked for it), then the pair.
    let get = reqwest::Method::GET;
    let refused = queue_page(&server, get.clone(), "/admin/queues", None, true).await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert!(refused.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .starts_with("Basic realm="));
    for wrong in [basic("operator", "guess"), basic("root", QUEUES_PASSWORD)] {
        let refused = queue_page(&server, get.clone(), "/admin/queues", Some(&wrong), true).await;
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    }
    let refused = queue_page(&server, get.clone(), "/admin/queues", Some(&good), false).await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert!(refused.headers().get("www-authenticate").is_none());

    let narrative = add_narrative(&server, "Scored", "open", server.clock.now()).await;
    let dead = add_job(
        &server,
        "score_narrative",
        &narrative,
        "dead",
        Some("<script>alert('x')</script>"),
    )
    .await;
    let waiting = add_job(&server, "deliver_webhook", "agent-1", "queued", None).await;

    let page = queue_page(&server, get.clone(), "/admin/queues", Some(&good), true).await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(page.headers()["cache-control"], "no-store");
    let html = page.text().await.unwrap();
    assert!(
        html.contains(&format!("<tr id=\"job-{dead}\" data-status=\"dead\">")),
        "{html}"
    );
    assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"));
    assert!(!html.contains("<script>alert"));
    assert!(html.contains(&format!("action=\"/admin/queues/jobs/{dead}/retry\"")));
    assert!(html.contains("<span id=\"dead\">1</span>"));
    // Filtered by kind and status.
    let filtered = queue_page(
        &server,
        get.clone(),
        "/admin/queues?kind=deliver_webhook&status=queued",
        Some(&good),
        true,
    )
    .await
    .text()
    .await
    .unwrap();
    assert!(filtered.contains(&format!("job-{waiting}")));
    assert!(!filtered.contains(&format!("job-{dead}\"")));

    // Cancel the waiting one: a redirect back, the row cancelled, logged.
    let post = |path: String, pair: bool| {
        let request = no_redirects
            .post(server.url(&path))
            .header("authorization", good.clone());
        let request = if pair {
            request
                .header("x-admin-wallet", ADMIN_WALLET)
                .header("x-admin-secret", ADMIN_SECRET)
        } else {
            request
        };
        async move { request.send().await.unwrap() }
    };
    let refused = post(format!("/admin/queues/jobs/{waiting}/cancel"), false).await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let done = post(format!("/admin/queues/jobs/{waiting}/cancel"), true).await;
    assert_eq!(done.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        done.headers()["location"],
        format!("/admin/queues?done=cancel:{waiting}").as_str()
    );
    let db = server.db.store.db();
    let job = |id: i64| async move { jobs::Entity::find_by_id(id).one(db).await.unwrap().unwrap() };
    assert_eq!(job(waiting).await.status, "cancelled");
    let again = post(format!("/admin/queues/jobs/{waiting}/cancel"), true).await;
    assert_eq!(again.status(), StatusCode::CONFLICT);
    assert!(again
        .text()
        .await
        .unwrap()
        .contains("id=\"notice\" class=\"error\""));

    // Retry the dead one: due now with a fresh budget; the worker then scores the narrative.
    let done = post(format!("/admin/queues/jobs/{dead}/retry"), true).await;
    assert_eq!(done.status(), StatusCode::SEE_OTHER);
    common::eventually("the retried job runs to done", || async {
        job(dead).await.status == "done"
    })
    .await;
    assert_eq!(job(dead).await.attempts, 1);

    // Unknown jobs and actions; a perpetual job is not cancelled.
    assert_eq!(
        post("/admin/queues/jobs/999999/retry".into(), true)
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        post(format!("/admin/queues/jobs/{dead}/explode"), true)
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    let perpetual = common::eventually_some("the event follower is queued", || async {
        jobs::Entity::find()
            .filter(jobs::Column::Kind.eq("follow_events"))
            .one(db)
            .await
            .unwrap()
    })
    .await;
    let refused = post(format!("/admin/queues/jobs/{}/cancel", perpetual.id), true).await;
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    let logged: Vec<(String, String)> = actions(&server)
        .await
        .into_iter()
        .map(|(a, s, _)| (a, s))
        .collect();
    assert_eq!(
        logged,
        vec![
            ("job.cancel".to_owned(), waiting.to_string()),
            ("job.retry".to_owned(), dead.to_string())
        ]
    );

    // Without a password configured, the page is closed.
    let closed = TestServer::start(|_| {}).await;
    let refused = queue_page(
        &closed,
        get,
        "/admin/queues",
        Some(&basic("operator", "")),
        true,
    )
    .await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    closed.stop().await;
    server.stop().await;
}

#[tokio::test]
async fn the_shield_gate_blocks_an_address_that_keeps_failing_until_an_operator_lifts_it() {
    let server = TestServer::start(|c| c.shield_gate_max_failures = 3).await;
    let bad = json!({"wallet": "not-a-wallet", "signature": "forged"});
    for attempt in 1..=3 {
        let (status, body) = server.post("/v1/shield/terms-ack", &bad).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "attempt {attempt}: {body}");
    }
    // Blocked now, from the gate and the other wallet-facing shield writes.
    let (status, body) = server.post("/v1/shield/terms-ack", &bad).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"], "ip_blocked");
    for path in ["/v1/shield/back", "/v1/shield/partner-apply"] {
        let (status, body) = server.post(path, &json!({})).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {body}");
        assert_eq!(body["error"], "ip_blocked");
    }
    // Reads stay open.
    let (status, _) = server.get("/v1/shield/protocols").await;
    assert_eq!(status, StatusCode::OK);

    let refused = server.get("/v1/shield/blocked-ips").await;
    assert_eq!(refused.0, StatusCode::UNAUTHORIZED);
    let listed = blocked_ips(&server).await;
    assert_eq!(listed["blocked"].as_array().unwrap().len(), 1);
    assert_eq!(listed["blocked"][0]["ip"], "127.0.0.1");
    assert_eq!(listed["blocked"][0]["failures"], 3);
    let (_, log) = admin(&server, reqwest::Method::GET, "/v1/shield/probe-log", None).await;
    assert_eq!(log["entries"][0]["outcome"], "ip_blocked");

    let (status, body) = admin(
        &server,
        reqwest::Method::POST,
        "/v1/shield/blocked-ips/unblock",
        Some(&json!({"ip": "not-an-ip"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let unblock = json!({"ip": "127.0.0.1"});
    let (status, lifted) = admin(
        &server,
        reqwest::Method::POST,
        "/v1/shield/blocked-ips/unblock",
        Some(&unblock),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{lifted}");
    assert_eq!(lifted["ip"], "127.0.0.1");
    let (status, _) = admin(
        &server,
        reqwest::Method::POST,
        "/v1/shield/blocked-ips/unblock",
        Some(&unblock),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let listed = blocked_ips(&server).await;
    assert_eq!(listed["blocked"], json!([]));

    // The count starts again after the lift: two refusals do not block, the third does.
    for _ in 0..2 {
        let (status, _) = server.post("/v1/shield/terms-ack", &bad).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
    }
    let (status, _) = server.post("/v1/shield/terms-ack", &bad).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "the third refusal is answered, then counted"
    );
    let (status, _) = server.post("/v1/shield/terms-ack", &bad).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(
        actions(&server).await,
        vec![(
            "shield.unblock".to_owned(),
            "127.0.0.1".to_owned(),
            ADMIN_WALLET.to_owned()
        )]
    );
    server.stop().await;
}

/// An IPv6 caller is counted and blocked by its /64, as the rate limits count it: one host
/// holds the whole /64, and stepping through its addresses does not start the count again.
#[tokio::test]
async fn the_shield_gate_counts_and_blocks_an_ipv6_caller_by_its_64() {
    let server = TestServer::start(|c| {
        c.shield_gate_max_failures = 2;
        c.trusted_proxies = vec!["127.0.0.1/8".into()];
    })
    .await;
    let bad = json!({"wallet": "not-a-wallet", "signature": "forged"});
    let ack_from = |caller: &'static str| {
        server
            .http
            .post(server.url("/v1/shield/terms-ack"))
            .header("x-forwarded-for", caller)
            .json(&bad)
            .send()
    };
    for caller in ["2001:db8:1:2::1", "2001:db8:1:2::2"] {
        let status = ack_from(caller).await.unwrap().status();
        assert_eq!(status, StatusCode::BAD_REQUEST, "{caller}");
    }
    let refused = ack_from("2001:db8:1:2:ffff::99").await.unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let refused: Value = refused.json().await.unwrap();
    assert_eq!(refused["error"], "ip_blocked");
    // Another /64 is another caller.
    let status = ack_from("2001:db8:1:3::1").await.unwrap().status();
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let listed = blocked_ips(&server).await;
    assert_eq!(listed["blocked"][0]["ip"], "2001:db8:1:2::/64", "{listed}");
    // Any address of the /64 names it to the operator.
    let (status, lifted) = admin(
        &server,
        reqwest::Method::POST,
        "/v1/shield/blocked-ips/unblock",
        Some(&json!({"ip": "2001:db8:1:2::abcd"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{lifted}");
    assert_eq!(lifted["ip"], "2001:db8:1:2::/64");
    let status = ack_from("2001:db8:1:2::1").await.unwrap().status();
    assert_eq!(status, StatusCode::BAD_REQUEST, "lifted");
    server.stop().await;
}

/// A node that takes the connection and never answers does not hold the dashboard: it says
/// the node is unreachable once its probe's bound passes.
#[tokio::test]
async fn the_dashboard_answers_while_the_node_hangs() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    // Accepts every connection and keeps it open, unanswered, until the test ends.
    let held = tokio::spawn(async move {
        let mut connections = Vec::new();
        while let Ok((connection, _)) = silent.accept().await {
            connections.push(connection);
        }
    });
    let server = TestServer::start(|c| c.solana_rpc_url = url.into()).await;
    let (status, board) = tokio::time::timeout(
        std::time::Duration::from_secs(15),
        admin(&server, reqwest::Method::GET, "/v1/admin/dashboard", None),
    )
    .await
    .expect("the dashboard answers within the probe's bound, not the RPC client's");
    assert_eq!(status, StatusCode::OK, "{board}");
    assert_eq!(board["node_reachable"], false);
    held.abort();
    server.stop().await;
}

/// The gate holds against an address only what it sent: attempts the service itself failed
/// (503 while shield is halted) do not count toward a block.
#[tokio::test]
async fn the_shield_gate_does_not_count_the_services_own_failures() {
    let server = TestServer::start(|c| c.shield_gate_max_failures = 2).await;
    let halt = |halted: bool| {
        let server = &server;
        async move {
            let (status, body) = server
                .admin_post(
                    "/v1/admin/system/halt",
                    &json!({"component": "shield", "halted": halted}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
    };
    let well_formed = json!({
        "wallet": solana_keypair::Keypair::new().pubkey().to_string(),
        "signature": bs58::encode([7u8; 64]).into_string(),
        "issued_at": 0,
    });
    halt(true).await;
    // Who halted, and why, stays in the operators' log (the row keeps only the latest).
    assert_eq!(
        actions(&server).await,
        vec![(
            "system.halt".to_owned(),
            "shield".to_owned(),
            ADMIN_WALLET.to_owned()
        )]
    );
    for attempt in 1..=4 {
        let (status, body) = server.post("/v1/shield/terms-ack", &well_formed).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{attempt}: {body}");
        assert_eq!(body["error"], "system_halted");
    }
    halt(false).await;
    // Only the refusals after the halt count: the second blocks, not the first.
    let bad = json!({"wallet": "not-a-wallet", "signature": "forged"});
    for attempt in 1..=2 {
        let (status, body) = server.post("/v1/shield/terms-ack", &bad).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{attempt}: {body}");
    }
    let (status, body) = server.post("/v1/shield/terms-ack", &bad).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"], "ip_blocked");
    server.stop().await;
}

/// Every operation the document marks as needing the operator pair refuses a request without
/// it, or with a wrong secret, before anything else (spec 5 rule 6); so do the spec's
/// `/admin/narratives/…` paths.
#[tokio::test]
async fn every_admin_operation_refuses_without_the_pair() {
    let server = TestServer::start(|_| {}).await;
    let (_, document) = server.get("/v1/openapi.json").await;
    let id = uuid::Uuid::new_v4().to_string();
    let protocol = "ab".repeat(32);
    let mut checked = Vec::new();
    for (template, operations) in document["paths"].as_object().unwrap() {
        for (method, operation) in operations.as_object().unwrap() {
            let admin_only = operation["security"]
                .as_array()
                .is_some_and(|s| s.iter().any(|scheme| scheme.get("AdminAuth").is_some()));
            if !admin_only {
                continue;
            }
            let filled = if template.starts_with("/shield/protocols/") {
                template.replace("{id}", &protocol)
            } else {
                template.replace("{id}", &id)
            };
            checked.push(format!("/v1{filled}"));
            let method: reqwest::Method = method.to_uppercase().parse().unwrap();
            for secret in [None, Some("wrong")] {
                let mut request = server
                    .http
                    .request(method.clone(), server.url(&format!("/v1{filled}")))
                    .header("x-admin-wallet", ADMIN_WALLET)
                    .json(&json!({}));
                if let Some(secret) = secret {
                    request = request.header("x-admin-secret", secret);
                }
                let response = request.send().await.unwrap();
                assert_eq!(
                    response.status(),
                    StatusCode::UNAUTHORIZED,
                    "{method} {template} with {secret:?}"
                );
            }
        }
    }
    for action in ["hide", "restore", "verdict"] {
        checked.push(format!("/admin/narratives/{id}/{action}"));
    }
    for path in checked.iter().filter(|p| p.starts_with("/admin/")) {
        let response = server
            .http
            .post(server.url(path))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{path}");
    }
    for expected in [
        "/v1/admin/dashboard",
        "/v1/admin/markets/pending",
        "/v1/admin/scores/recalculate",
        "/v1/shield/blocked-ips",
        "/v1/shield/probe-log",
        "/v1/admin/system/halt",
    ] {
        assert!(
            checked.iter().any(|p| p == expected),
            "{expected} not marked admin: {checked:?}"
        );
    }
    assert!(checked.len() >= 20, "{checked:?}");
    server.stop().await;
}

/// Issue 27: the dashboard lists each program's pending admin change, indexed from the program's
/// account, with when it can apply and when it must be proposed again.
#[tokio::test]
async fn the_dashboard_lists_pending_admin_changes_with_when_they_apply_and_expire() {
    use narrative_api::clock::iso;
    use narrative_sdk::shield_vault::state::AdminChange;
    use narrative_sdk::{binary, crucible, pda, shield};
    let (server, ledger) = common::chain::start_on_bank(|_| {}).await;
    let proposed_at = {
        let mut h = ledger.harness.lock().await;
        let admin = h.admin.insecure_clone();
        let guardian = h.wallets[2].pubkey();
        let update = narrative_sdk::binary_vault::state::ConfigUpdate {
            capital_loss_bps: Some(4_000),
            ..Default::default()
        };
        h.process(
            &[
                binary::propose_config_change(admin.pubkey(), update),
                shield::propose_admin_change(admin.pubkey(), AdminChange::MaxSelfHedgeBps(1_000)),
                crucible::set_guardian(admin.pubkey(), guardian),
            ],
            &[&admin],
        )
        .await
        .unwrap();
        h.now().await
    };
    common::chain::index_from_bank(
        &server,
        &ledger,
        &[
            pda::binary::config(),
            pda::crucible::state(),
            pda::shield::program_state(),
        ],
    )
    .await;
    let (status, board) = admin(&server, reqwest::Method::GET, "/v1/admin/dashboard", None).await;
    assert_eq!(status, StatusCode::OK, "{board}");
    let pending = board["pending_admin_changes"].as_array().unwrap();
    let programs: Vec<&str> = pending
        .iter()
        .map(|p| p["program"].as_str().unwrap())
        .collect();
    assert_eq!(
        programs,
        ["binary_vault", "shield_vault", "crucible_pool"],
        "{board}"
    );
    for p in pending {
        assert_eq!(p["proposed_at"], iso(proposed_at));
        assert_eq!(p["applies_at"], iso(proposed_at + 259_200));
        assert_eq!(p["expires_at"], iso(proposed_at + 259_200 + 7 * 86_400));
    }
    assert_eq!(pending[0]["change"]["capital_loss_bps"], 4_000);
    assert_eq!(pending[1]["change"]["change"], "MaxSelfHedgeBps(1000)");
    let crucible_change = pending[2]["change"]["change"].as_str().unwrap();
    assert!(
        crucible_change.starts_with("Guardian("),
        "{crucible_change}"
    );
    server.stop().await;
}

/// A verdict on a hidden narrative settles it like any other, but its title reaches no public
/// read: no notice to its creator or backers (whose feeds are public), and a narrative shown
/// again is noticed as before.
#[tokio::test]
async fn a_verdict_on_a_hidden_narrative_notifies_no_one_of_its_title() {
    let server = TestServer::start(|_| {}).await;
    let now = server.clock.now();
    let feed = |wallet: &'static str| {
        let server = &server;
        async move {
            let (status, feed) = server.get(&format!("/v1/notifications/{wallet}")).await;
            assert_eq!(status, StatusCode::OK, "{feed}");
            feed["notifications"].as_array().unwrap().clone()
        }
    };
    for (title, hide) in [("Defamatory claim", true), ("Fine claim", false)] {
        let id = add_narrative(&server, title, "open", now - 10).await;
        if hide {
            let (status, body) = admin(
                &server,
                reqwest::Method::POST,
                &format!("/v1/admin/narratives/{id}/hide"),
                Some(&json!({"reason": "defamation"})),
            )
            .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        let (status, verdict) = admin(
            &server,
            reqwest::Method::POST,
            &format!("/v1/admin/narratives/{id}/verdict"),
            Some(&json!({"outcome": "false"})),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{verdict}");
        assert_eq!(verdict["oracle_status"], "resolved_false");
    }
    let notified = feed(CREATOR).await;
    let text = serde_json::to_string(&notified).unwrap();
    assert!(!text.contains("Defamatory claim"), "{text}");
    assert!(text.contains("Fine claim"), "{text}");
    assert_eq!(notified.len(), 1, "{text}");
    server.stop().await;
}
