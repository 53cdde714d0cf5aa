//! Web Push (spec 4.11, 6.2) over HTTP, against a push service on this machine that checks the
//! VAPID token and decrypts each message with the browser's private key: the key every process
//! serves, subscriptions signed by their wallet (replaced, capped, refused when malformed or
//! aimed at a private address), per-type preferences (`PATCH` changes some, `PUT` replaces the
//! set), every signed write fresh and used once, deliveries of the in-app notifications, retries
//! with backoff, and a subscription the push service says is gone being deleted.

mod common;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use common::push_service::{decrypt, Browser, PushService};
use common::{eventually, eventually_some, SigningWallet as Wallet, TestServer};
use narrative_api::clock::{Clock, ManualClock};
use narrative_store::entities::{jobs, push_subscriptions, service_keys};
use reqwest::StatusCode;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::{json, Value};

/// The body subscribing `browser` for `wallet`, signed at `issued_at`.
fn subscribe_body(wallet: &Wallet, browser: &Browser, issued_at: i64) -> Value {
    let statement = format!(
        "narrative-market-service:push-subscribe:{}:{}",
        wallet.address, browser.endpoint
    );
    json!({
        "wallet": wallet.address,
        "subscription": browser.subscription(),
        "signature": wallet.sign_at(&statement, issued_at),
        "issued_at": issued_at,
    })
}

async fn start() -> TestServer {
    // Near the real time: the push service checks the token's expiry against its own clock.
    TestServer::start_at(ManualClock::at_system_time(), |c| {
        // The push service is an http server on this machine: its host is the known push
        // service here (and a private one, to show the address guard still refuses it).
        c.outbound_allow_local = true;
        c.push_service_hosts = vec!["127.0.0.1".into(), "10.0.0.7".into()];
        c.vapid_subject = "mailto:ops@narrative.example".into();
    })
    .await
}

/// Lets the service call the push service on this machine.
fn local_push_service(c: &mut narrative_api::Config) {
    c.outbound_allow_local = true;
    c.push_service_hosts = vec!["127.0.0.1".into()];
}

async fn subscribe(server: &TestServer, wallet: &Wallet, browser: &Browser) -> Value {
    subscribe_at(server, wallet, browser, server.clock.now()).await
}

async fn subscribe_at(
    server: &TestServer,
    wallet: &Wallet,
    browser: &Browser,
    issued_at: i64,
) -> Value {
    let (status, answer) = server
        .post(
            "/v1/notifications/push/subscribe",
            &subscribe_body(wallet, browser, issued_at),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

/// Announces to `wallet` and waits until the announcement is in its feed; its id.
async fn announce(server: &TestServer, wallet: &Wallet, body: &str) -> i64 {
    let (status, answer) = server
        .admin_post(
            "/v1/admin/notifications/announce",
            &json!({"title": "Notice", "body": body, "wallets": [wallet.address]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    eventually_some("the announcement in the feed", || async {
        let (_, feed) = server
            .get(&format!("/v1/notifications/{}", wallet.address))
            .await;
        feed["notifications"]
            .as_array()?
            .iter()
            .find(|n| n["body"] == body)
            .and_then(|n| n["id"].as_i64())
    })
    .await
}

async fn push_jobs(server: &TestServer) -> Vec<jobs::Model> {
    jobs::Entity::find()
        .filter(jobs::Column::Kind.eq("deliver_push"))
        .all(server.db.store.db())
        .await
        .unwrap()
}

#[tokio::test]
async fn every_subscribed_browser_gets_the_notification_encrypted_to_it_and_signed() {
    let push = PushService::start().await;
    let server = start().await;

    // Made when the process starts, before anyone asks for it.
    let stored = eventually_some("the VAPID key made at start", || async {
        service_keys::Entity::find_by_id("vapid")
            .one(server.db.store.db())
            .await
            .unwrap()
    })
    .await;
    let (status, key) = server.get("/v1/notifications/push/vapid-public-key").await;
    assert_eq!(status, StatusCode::OK, "{key}");
    let public = key["vapid_public_key"].as_str().unwrap().to_owned();
    let point = URL_SAFE_NO_PAD.decode(&public).unwrap();
    assert_eq!(
        (point.len(), point[0]),
        (65, 4),
        "an uncompressed P-256 point"
    );
    assert_eq!(key, json!({"vapid_public_key": public}));
    assert_eq!(stored.public, public);
    // Kept in the store: another process of the deployment serves the same key.
    let (beside, stop) = server.start_beside(|_| {}).await;
    let again: Value = reqwest::get(format!("{beside}/v1/notifications/push/vapid-public-key"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(again["vapid_public_key"], public.as_str());
    let _ = stop.send(());

    let wallet = Wallet::new(3);
    let laptop = push.browser("laptop");
    let phone = push.browser("phone");
    let answer = subscribe(&server, &wallet, &laptop).await;
    assert_eq!(answer["ok"], true);
    assert_eq!(answer["wallet"], wallet.address.as_str());
    assert_eq!(answer["replaced"], false);
    assert_eq!(answer["max_subscriptions"], 10);
    subscribe(&server, &wallet, &phone).await;
    // A wallet without browsers gets its feed and no push.
    let bystander = Wallet::new(4);

    let id = announce(&server, &wallet, "Devnet restarts at noon UTC.").await;
    announce(&server, &bystander, "Only in the feed.").await;
    eventually("both browsers told", || async {
        push.delivered().len() == 2
    })
    .await;
    assert_eq!(push.rejected(), Vec::<String>::new());
    let mut names: Vec<String> = push.delivered().iter().map(|d| d.name.clone()).collect();
    names.sort();
    assert_eq!(names, ["laptop", "phone"]);
    for delivered in push.delivered() {
        assert_eq!(delivered.vapid_key, public, "signed with the published key");
        assert_eq!(delivered.subject, "mailto:ops@narrative.example");
        assert_eq!(delivered.ttl, 86_400);
        let message = &delivered.message;
        assert_eq!(message["id"], id);
        assert_eq!(message["type"], "system_announcement");
        assert_eq!(message["title"], "Notice");
        assert_eq!(message["body"], "Devnet restarts at noon UTC.");
        assert_eq!(
            message["url"],
            format!("/v1/notifications/{}", wallet.address)
        );
    }
    // The worker records a delivery done after the push service answered it: wait for that.
    eventually("both deliveries recorded", || async {
        push_jobs(&server).await.iter().all(|j| j.status == "done")
    })
    .await;
    let jobs = push_jobs(&server).await;
    assert_eq!(
        jobs.len(),
        2,
        "one delivery per browser, none for the bystander"
    );
    assert!(jobs.iter().all(|j| j.status == "done" && j.attempts == 1));
}

#[tokio::test]
async fn a_refused_push_is_retried_with_backoff_and_a_gone_subscription_is_deleted() {
    let push = PushService::start().await;
    let clock = ManualClock::at_system_time();
    let server = TestServer::start_at(clock.clone(), local_push_service).await;
    let wallet = Wallet::new(5);
    let flaky = push.browser("flaky");
    let gone = push.browser("gone");
    subscribe(&server, &wallet, &flaky).await;
    subscribe(&server, &wallet, &gone).await;
    push.answer("flaky", &[503]);
    push.answer("gone", &[410]);

    announce(&server, &wallet, "first").await;
    let db = server.db.store.db();
    eventually("the gone subscription deleted", || async {
        push_subscriptions::Entity::find()
            .filter(push_subscriptions::Column::Endpoint.eq(gone.endpoint.as_str()))
            .count(db)
            .await
            .unwrap()
            == 0
    })
    .await;
    // The 503 is retried 2 s later on the server's clock, not before.
    let queued = eventually_some("the flaky delivery queued again", || async {
        push_jobs(&server)
            .await
            .into_iter()
            .find(|j| j.status == "queued" && j.attempts == 1)
    })
    .await;
    assert_eq!(queued.run_at - clock.now(), 2);
    assert_eq!(
        queued.last_error.as_deref(),
        Some("push service answered 503")
    );
    assert_eq!(push.attempts("flaky"), 1);
    assert!(push.delivered().is_empty());
    clock.advance(2);
    eventually("the retry delivered", || async {
        push.delivered().len() == 1
    })
    .await;
    assert_eq!(push.attempts("flaky"), 2);
    assert_eq!(push.delivered()[0].message["body"], "first");

    // The next notification goes to the browser that is still subscribed only.
    announce(&server, &wallet, "second").await;
    eventually("the second delivered", || async {
        push.delivered().len() == 2
    })
    .await;
    assert_eq!(push.attempts("gone"), 1);
    assert_eq!(push.rejected(), Vec::<String>::new());
    // What the push service answered, as operators see it (counted once the worker has its
    // answer, a moment after the push service recorded the delivery).
    eventually("the second delivery counted", || async {
        let metrics = server.get_text("/metrics").await;
        common::sample(&metrics, "push_deliveries_total{outcome=\"delivered\"}") == Some(2.0)
    })
    .await;
    let metrics = server.get_text("/metrics").await;
    for (outcome, count) in [
        ("delivered", 2.0),
        ("gone", 1.0),
        ("retried", 1.0),
        ("refused", 0.0),
    ] {
        assert_eq!(
            common::sample(
                &metrics,
                &format!("push_deliveries_total{{outcome=\"{outcome}\"}}")
            ),
            Some(count),
            "{outcome}"
        );
    }
}

/// Any other 4xx from the push service is final: the delivery ends at its first attempt, is
/// counted as refused, and the subscription stays.
#[tokio::test]
async fn a_push_the_service_refuses_for_good_is_not_retried() {
    let push = PushService::start().await;
    let clock = ManualClock::at_system_time();
    let server = TestServer::start_at(clock.clone(), local_push_service).await;
    let wallet = Wallet::new(9);
    let refusing = push.browser("refusing");
    subscribe(&server, &wallet, &refusing).await;
    push.answer("refusing", &[400]);

    announce(&server, &wallet, "once").await;
    let done = eventually_some("the delivery ended", || async {
        push_jobs(&server)
            .await
            .into_iter()
            .find(|j| j.status == "done")
    })
    .await;
    // Done, not queued again: nothing is left to retry it.
    assert_eq!(done.attempts, 1);
    let metrics = server.get_text("/metrics").await;
    assert_eq!(
        common::sample(&metrics, "push_deliveries_total{outcome=\"refused\"}"),
        Some(1.0)
    );
    assert_eq!(
        common::sample(&metrics, "push_deliveries_total{outcome=\"retried\"}"),
        Some(0.0)
    );
    assert_eq!(push.attempts("refusing"), 1, "no second attempt");
    assert!(push.delivered().is_empty());
    let kept = push_subscriptions::Entity::find()
        .filter(push_subscriptions::Column::Endpoint.eq(refusing.endpoint.as_str()))
        .count(server.db.store.db())
        .await
        .unwrap();
    assert_eq!(kept, 1, "a refusal is not a gone subscription");
}

/// A preferences write as a browser sends it: `method` (`PUT` or `PATCH`), the signature in
/// `x-wallet-signature` and its time in `x-wallet-issued-at`.
async fn write_preferences(
    server: &TestServer,
    method: reqwest::Method,
    wallet: &Wallet,
    body: &Value,
    signature: Option<&str>,
    issued_at: Option<i64>,
) -> (StatusCode, Value) {
    let path = format!("/v1/notifications/push/preferences/{}", wallet.address);
    let mut request = server.http.request(method, server.url(&path)).json(body);
    if let Some(signature) = signature {
        request = request.header("x-wallet-signature", signature);
    }
    if let Some(issued_at) = issued_at {
        request = request.header("x-wallet-issued-at", issued_at.to_string());
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    (
        status,
        response.json::<Value>().await.unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn preferences_change_with_patch_and_are_replaced_with_put_by_the_wallet_signature() {
    let push = PushService::start().await;
    let server = start().await;
    let wallet = Wallet::new(6);
    let path = format!("/v1/notifications/push/preferences/{}", wallet.address);

    let (status, read) = server.get(&path).await;
    assert_eq!(status, StatusCode::OK, "{read}");
    let preferences = read["preferences"].as_object().unwrap();
    assert_eq!(
        preferences.len(),
        23,
        "spec 6.2's 19 and the four borrow alerts"
    );
    assert!(preferences.values().all(|on| on == true));

    let now = server.clock.now();
    let patch = |body: Value, signature: Option<String>, issued_at: Option<i64>| {
        let (server, wallet) = (&server, &wallet);
        async move {
            write_preferences(
                server,
                reqwest::Method::PATCH,
                wallet,
                &body,
                signature.as_deref(),
                issued_at,
            )
            .await
        }
    };
    let put = |body: Value, signature: Option<String>, issued_at: Option<i64>| {
        let (server, wallet) = (&server, &wallet);
        async move {
            write_preferences(
                server,
                reqwest::Method::PUT,
                wallet,
                &body,
                signature.as_deref(),
                issued_at,
            )
            .await
        }
    };
    let change = |types: &str| {
        format!(
            "narrative-market-service:push-preferences:{}:{types}",
            wallet.address
        )
    };
    let replace = |types: &str| {
        format!(
            "narrative-market-service:push-preferences-replace:{}:{types}",
            wallet.address
        )
    };
    let off = json!({"system_announcement": false, "streak_broken": false});
    let off_types = "streak_broken=off,system_announcement=off";
    let signed_off = wallet.sign_at(&change(off_types), now);

    let (status, answer) = patch(off.clone(), None, Some(now)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "no signature: {answer}");
    let (status, answer) = patch(off.clone(), Some(signed_off.clone()), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "no issued-at: {answer}");
    let (status, answer) = patch(
        off.clone(),
        Some(Wallet::new(9).sign_at(&change(off_types), now)),
        Some(now),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    assert_eq!(answer["error"], "invalid_signature");
    // A signature of other changes does not change these.
    let (status, _) = patch(
        json!({"system_announcement": false}),
        Some(signed_off.clone()),
        Some(now),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, answer) = patch(
        json!({"volcano_erupted": false}),
        Some(signed_off.clone()),
        Some(now),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "unknown type: {answer}");
    let (status, answer) = patch(
        json!({"streak_broken": "no"}),
        Some(signed_off.clone()),
        Some(now),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    // Stale (signed 301 s ago), and the message as it was signed before it had a time.
    let stale = now - 301;
    let (status, answer) = patch(
        off.clone(),
        Some(wallet.sign_at(&change(off_types), stale)),
        Some(stale),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "stale: {answer}");
    assert_eq!(answer["error"], "invalid_signature");
    assert_eq!(answer["server_time"], now, "{answer}");
    let (status, answer) = patch(
        off.clone(),
        Some(wallet.sign(&change(off_types))),
        Some(now),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "timeless: {answer}");
    assert_eq!(answer["error"], "invalid_signature");
    // A change's signature is no replacement (which would turn the other types back on).
    let (status, answer) = put(off.clone(), Some(signed_off.clone()), Some(now)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    let (_, read) = server.get(&path).await;
    assert_eq!(
        read["preferences"]["streak_broken"], true,
        "nothing changed"
    );

    let (status, answer) = patch(off.clone(), Some(signed_off.clone()), Some(now)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["preferences"]["system_announcement"], false);
    assert_eq!(answer["preferences"]["streak_broken"], false);
    assert_eq!(answer["preferences"]["payout_received"], true);
    let (_, read) = server.get(&path).await;
    assert_eq!(read, answer);
    // The same proof again is a replay.
    let (status, answer) = patch(off, Some(signed_off), Some(now)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "replayed: {answer}");
    assert_eq!(answer["error"], "invalid_signature");

    // Off: the announcement is in the feed, and no delivery was queued with it (they are queued
    // in the same transaction as the notification).
    let browser = push.browser("desk");
    subscribe(&server, &wallet, &browser).await;
    // The preferences are a public read: the booleans, never the browser's endpoint or keys.
    let (_, read) = server.get(&path).await;
    let mut fields: Vec<&String> = read.as_object().unwrap().keys().collect();
    fields.sort();
    assert_eq!(fields, ["ok", "preferences", "wallet"]);
    assert!(!read.to_string().contains(&browser.endpoint), "{read}");
    announce(&server, &wallet, "quiet").await;
    assert!(push_jobs(&server).await.is_empty());

    let (status, answer) = patch(
        json!({"system_announcement": true}),
        Some(wallet.sign_at(&change("system_announcement=on"), now)),
        Some(now),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["preferences"]["system_announcement"], true);
    assert_eq!(
        answer["preferences"]["streak_broken"], false,
        "left as it was"
    );
    announce(&server, &wallet, "loud").await;
    eventually("the announcement pushed", || async {
        push.delivered().len() == 1
    })
    .await;
    assert_eq!(push.delivered()[0].message["body"], "loud");

    // PUT is the whole set (spec 4.0): the types named as sent, every other one pushed again.
    let set = json!({"payout_received": false, "airdrop_claimed": true});
    let set_types = "airdrop_claimed=on,payout_received=off";
    let signed_set = wallet.sign_at(&replace(set_types), now);
    for (signature, issued_at, why) in [
        (wallet.sign_at(&replace(set_types), stale), stale, "stale"),
        (wallet.sign(&replace(set_types)), now, "timeless"),
        (
            wallet.sign_at(&change(set_types), now),
            now,
            "a change's message",
        ),
    ] {
        let (status, answer) = put(set.clone(), Some(signature), Some(issued_at)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{why}: {answer}");
        assert_eq!(answer["error"], "invalid_signature");
    }
    let (status, answer) = put(set.clone(), Some(signed_set.clone()), Some(now)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let preferences = answer["preferences"].as_object().unwrap();
    assert_eq!(preferences["payout_received"], false);
    assert_eq!(
        preferences["streak_broken"], true,
        "not named: back to the default"
    );
    assert_eq!(
        preferences.values().filter(|on| **on == false).count(),
        1,
        "{answer}"
    );
    let (_, read) = server.get(&path).await;
    assert_eq!(read, answer);
    let (status, _) = put(set, Some(signed_set), Some(now)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "replayed");
    // An empty set is every type pushed.
    let (status, answer) = put(
        json!({}),
        Some(wallet.sign_at(&replace(""), now)),
        Some(now),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert!(answer["preferences"]
        .as_object()
        .unwrap()
        .values()
        .all(|on| on == true));
}

#[tokio::test]
async fn subscriptions_are_signed_validated_replaced_and_capped() {
    let push = PushService::start().await;
    let server = start().await;
    let wallet = Wallet::new(7);
    let browser = push.browser("tablet");
    let now = server.clock.now();
    let good = subscribe_body(&wallet, &browser, now);

    let mut off_curve = good.clone();
    let mut point = URL_SAFE_NO_PAD
        .decode(good["subscription"]["keys"]["p256dh"].as_str().unwrap())
        .unwrap();
    point[64] ^= 1;
    off_curve["subscription"]["keys"]["p256dh"] = json!(URL_SAFE_NO_PAD.encode(&point));
    let mut short_auth = good.clone();
    short_auth["subscription"]["keys"]["auth"] = json!("AAAA");
    let mut ftp = good.clone();
    ftp["subscription"]["endpoint"] = json!("ftp://push.example/x");
    let mut unsigned = good.clone();
    unsigned.as_object_mut().unwrap().remove("signature");
    for (body, why) in [
        (off_curve, "a key off the curve"),
        (short_auth, "a short auth secret"),
        (ftp, "not http"),
        (unsigned, "no signature"),
    ] {
        let (status, answer) = server.post("/v1/notifications/push/subscribe", &body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{why}: {answer}");
    }
    let mut forged = good.clone();
    forged["signature"] = json!(Wallet::new(8).sign("anything"));
    let (status, answer) = server
        .post("/v1/notifications/push/subscribe", &forged)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    assert_eq!(answer["error"], "invalid_signature");
    // Signed 301 s ago, or without the time (the message as it was before): refused.
    let stale = subscribe_body(&wallet, &browser, now - 301);
    let mut timeless = good.clone();
    timeless["signature"] = json!(wallet.sign(&format!(
        "narrative-market-service:push-subscribe:{}:{}",
        wallet.address, browser.endpoint
    )));
    for (body, why) in [(stale, "stale"), (timeless, "timeless")] {
        let (status, answer) = server.post("/v1/notifications/push/subscribe", &body).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{why}: {answer}");
        assert_eq!(answer["error"], "invalid_signature");
    }
    // A private address is refused even where loopback is allowed (development).
    let private = Browser::at("http://10.0.0.7/push/x", &browser);
    let (status, answer) = server
        .post(
            "/v1/notifications/push/subscribe",
            &subscribe_body(&wallet, &private, now),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert_eq!(answer["error"], "url_not_allowed");
    let db = server.db.store.db();
    assert_eq!(
        push_subscriptions::Entity::find().count(db).await.unwrap(),
        0
    );

    // The browser's keys change (a new subscription at the same endpoint, signed a second
    // later): they replace the old.
    let first = subscribe(&server, &wallet, &browser).await;
    // The same proof again is a replay.
    let (status, answer) = server.post("/v1/notifications/push/subscribe", &good).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "replayed: {answer}");
    assert_eq!(answer["error"], "invalid_signature");
    let renewed = push.browser("tablet");
    let second = subscribe_at(&server, &wallet, &renewed, now + 1).await;
    assert_eq!(second["replaced"], true);
    assert_eq!(second["subscription_id"], first["subscription_id"]);
    announce(&server, &wallet, "to the new keys").await;
    eventually("delivered", || async { push.delivered().len() == 1 }).await;
    assert_eq!(
        push.rejected(),
        Vec::<String>::new(),
        "decrypted with the new key"
    );

    // Ten browsers at most: the eleventh drops the least recently subscribed.
    for n in 0..10 {
        subscribe(&server, &wallet, &push.browser(&format!("b{n}"))).await;
    }
    let kept: Vec<String> = push_subscriptions::Entity::find()
        .filter(push_subscriptions::Column::Wallet.eq(wallet.address.as_str()))
        .all(db)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.endpoint)
        .collect();
    assert_eq!(kept.len(), 10);
    assert!(!kept.contains(&renewed.endpoint), "the oldest was dropped");
    assert!(kept.contains(&format!("{}/push/b9", push.base)));
}

/// Push endpoints must be at a known push service (`PUSH_SERVICE_HOSTS`): with the defaults
/// (the real services' hosts) an endpoint on any other host, such as a receiver that never
/// answers, is refused with 403 `url_not_allowed`, at subscription and, for a subscription
/// stored before the list changed, at delivery; a listed host is taken.
#[tokio::test]
async fn push_endpoints_must_belong_to_a_known_push_service() {
    let push = PushService::start().await;
    let clock = ManualClock::at_system_time();
    // The defaults, with local calls allowed: only the address guard stood in the way before.
    let server = TestServer::start_at(clock.clone(), |c| c.outbound_allow_local = true).await;
    let wallet = Wallet::new(9);
    let browser = push.browser("desk");
    let (status, answer) = server
        .post(
            "/v1/notifications/push/subscribe",
            &subscribe_body(&wallet, &browser, server.clock.now()),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert_eq!(answer["error"], "url_not_allowed");
    assert!(
        answer["message"]
            .as_str()
            .unwrap()
            .contains("127.0.0.1 is not a known push service"),
        "{answer}"
    );
    let elsewhere = Browser::at("https://push.evil.example/push/desk", &browser);
    let (status, answer) = server
        .post(
            "/v1/notifications/push/subscribe",
            &subscribe_body(&wallet, &elsewhere, server.clock.now()),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert_eq!(answer["error"], "url_not_allowed");
    let db = server.db.store.db();
    assert_eq!(
        push_subscriptions::Entity::find().count(db).await.unwrap(),
        0
    );
    // A subscription made while the host was listed is not sent to once it is not.
    let listed = TestServer::start_at(clock.clone(), local_push_service).await;
    subscribe(&listed, &wallet, &browser).await;
    let row = push_subscriptions::Entity::find()
        .one(listed.db.store.db())
        .await
        .unwrap()
        .unwrap();
    let mut copied: push_subscriptions::ActiveModel = row.into();
    copied.id = sea_orm::ActiveValue::NotSet;
    sea_orm::ActiveModelTrait::insert(copied, db).await.unwrap();
    announce(&server, &wallet, "not pushed").await;
    eventually("the delivery finished", || async {
        let jobs = push_jobs(&server).await;
        jobs.len() == 1 && jobs[0].status == "done"
    })
    .await;
    assert!(
        push.delivered().is_empty(),
        "nothing sent to an unlisted host"
    );
    assert_eq!(
        push_subscriptions::Entity::find().count(db).await.unwrap(),
        0,
        "the unlisted subscription is deleted, so later notifications queue nothing for it"
    );
    let metrics = server.get_text("/metrics").await;
    assert!(
        metrics.contains(r#"push_deliveries_total{outcome="refused"} 1"#),
        "{metrics}"
    );
}

#[test]
fn the_push_service_decrypts_the_rfc_8291_example() {
    let decode = |s: &str| URL_SAFE_NO_PAD.decode(s).unwrap();
    let secret =
        p256::SecretKey::from_slice(&decode("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"))
            .unwrap();
    let auth: [u8; 16] = decode("BTBZMqHH6r4Tts7J_aSIgg").try_into().unwrap();
    let body = decode(
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN",
    );
    assert_eq!(
        decrypt(&body, &secret, &auth).unwrap(),
        b"When I grow up, I want to be a watermelon"
    );
    let mut wrong_auth = auth;
    wrong_auth[0] ^= 1;
    assert!(decrypt(&body, &secret, &wrong_auth).is_err());
}
