//! API keys and rate limits over HTTP: each auth outcome, each limit reached with its exact
//! body, in memory and shared through the Redis on 127.0.0.1:6379.

mod common;

use common::{clock_at_hour_start, TestServer, ADMIN_SECRET, ADMIN_WALLET};
use ed25519_dalek::{Signer, SigningKey};
use reqwest::StatusCode;
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const REDIS_URL: &str = "redis://127.0.0.1:6379";

async fn issue_key(server: &TestServer, wallet: &str) -> (String, String) {
    let (status, body) = server
        .admin_post(
            "/v1/admin/apikeys",
            &json!({"wallet": wallet, "name": "bot"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    (
        body["id"].as_str().unwrap().to_owned(),
        body["key"].as_str().unwrap().to_owned(),
    )
}

async fn me(server: &TestServer, key: &str) -> (StatusCode, Value) {
    server.key_get("/v1/apikeys/me", key).await
}

#[tokio::test]
async fn keys_are_issued_once_listed_without_secrets_and_revoked_by_their_wallet() {
    let server = TestServer::start(|_| {}).await;
    let owner = SigningKey::generate(&mut rand::rngs::OsRng);
    let wallet = bs58::encode(owner.verifying_key().to_bytes()).into_string();

    let (status, body) = server
        .post("/v1/admin/apikeys", &json!({"wallet": wallet}))
        .await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "issuing is for the operator"
    );
    assert_eq!(body["error"], "Unauthorized");

    let (id, key) = issue_key(&server, &wallet).await;
    let parts: Vec<&str> = key.split('_').collect();
    assert_eq!(parts.len(), 3, "{key}");
    assert_eq!(parts[1].len(), 4);
    assert_eq!(parts[2].len(), 64);
    assert!(parts[1..]
        .iter()
        .all(|p| p.bytes().all(|b| b.is_ascii_hexdigit())));

    let (status, body) = me(&server, &key).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({"ok": true, "id": id, "tier": "free", "wallet": wallet, "limit_per_minute": 60})
    );

    let (status, listing) = server.get(&format!("/v1/apikeys/{wallet}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listing["keys"][0]["id"], id);
    assert_eq!(
        listing["keys"][0]["prefix"],
        format!("{}_{}", parts[0], parts[1])
    );
    assert_eq!(listing["keys"][0]["active"], true);
    assert!(
        !listing.to_string().contains(parts[2]),
        "the secret is never listed"
    );
    // A public read: the key's metadata only, never its stored hash.
    let mut fields: Vec<&str> = listing["keys"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    fields.sort();
    assert_eq!(
        fields,
        [
            "active",
            "created_at",
            "id",
            "name",
            "prefix",
            "revoked_at",
            "tier"
        ]
    );
    let key_hash = hex::encode(Sha256::digest(key.as_bytes()));
    assert!(!listing.to_string().contains(&key_hash), "{listing}");

    for bad in [
        "",
        "nope",
        &format!("{}_{}_{}", parts[0], parts[1], "0".repeat(64)),
    ] {
        let (status, body) = me(&server, bad).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{bad:?}");
        assert_eq!(
            body,
            json!({"ok": false, "error": "Invalid or missing API key"})
        );
    }
    let (status, body) = server.get("/v1/apikeys/me").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "missing key");
    assert_eq!(
        body,
        json!({"ok": false, "error": "Invalid or missing API key"})
    );

    // Revoking needs the wallet's fresh signature (or the operator), used once.
    let timeless = format!("narrative-market-service:revoke-api-key:{id}:{wallet}");
    let now = server.clock.now();
    let signed_at = |key: &SigningKey, at: i64| {
        let message = format!("{timeless}:issued-at:{at}");
        bs58::encode(key.sign(message.as_bytes()).to_bytes()).into_string()
    };
    let stranger = SigningKey::generate(&mut rand::rngs::OsRng);
    let revoke = |signature: String, at: i64| json!({"id": id, "wallet_address": wallet, "signature": signature, "issued_at": at});
    for (body, why) in [
        (revoke(signed_at(&stranger, now), now), "another wallet"),
        (
            revoke(signed_at(&owner, now - 301), now - 301),
            "signed 301 s ago",
        ),
        (
            revoke(
                bs58::encode(owner.sign(timeless.as_bytes()).to_bytes()).into_string(),
                now,
            ),
            "without its issued-at time",
        ),
        (
            json!({"id": id, "wallet_address": wallet, "signature": signed_at(&owner, now)}),
            "no issued_at",
        ),
        (json!({"id": id, "wallet_address": wallet}), "unsigned"),
    ] {
        let (status, body) = server.post("/v1/apikeys/revoke", &body).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{why}: {body}");
        assert_eq!(body["error"], "invalid_signature");
    }
    assert_eq!(me(&server, &key).await.0, StatusCode::OK, "still live");

    let signed = revoke(signed_at(&owner, now), now);
    let (status, body) = server.post("/v1/apikeys/revoke", &signed).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"ok": true, "id": id, "revoked": true}));
    let (status, body) = server.post("/v1/apikeys/revoke", &signed).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "replayed: {body}");
    assert_eq!(body["error"], "invalid_signature");
    assert_eq!(
        me(&server, &key).await.0,
        StatusCode::UNAUTHORIZED,
        "revoked keys are refused"
    );
    let (_, listing) = server.get(&format!("/v1/apikeys/{wallet}")).await;
    assert_eq!(listing["keys"][0]["active"], false);

    let (status, _) = server
        .admin_post(
            "/v1/apikeys/revoke",
            &json!({"id": uuid::Uuid::new_v4().to_string(), "wallet_address": wallet}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "unknown key");
    server.stop().await;
}

/// A key the operator issued to no wallet (a partner's bot) is revocable by the operator, who
/// names any wallet; no wallet's holder can revoke it. Issue and revocation are in the
/// operators' log.
#[tokio::test]
async fn the_operator_revokes_a_key_issued_to_no_wallet_and_both_are_logged() {
    let server = TestServer::start(|_| {}).await;
    let (status, issued) = server
        .admin_post("/v1/admin/apikeys", &json!({"name": "partner bot"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{issued}");
    assert_eq!(issued["wallet"], Value::Null);
    let id = issued["id"].as_str().unwrap().to_owned();
    let key = issued["key"].as_str().unwrap().to_owned();
    assert_eq!(me(&server, &key).await.0, StatusCode::OK);

    let anyone = "11111111111111111111111111111111";
    let revoke = json!({"id": id, "wallet_address": anyone});
    // Without the operator: a signature is asked for (and no wallet owns the key).
    let (status, body) = server.post("/v1/apikeys/revoke", &revoke).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(me(&server, &key).await.0, StatusCode::OK, "still live");
    let (status, body) = server.admin_post("/v1/apikeys/revoke", &revoke).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"ok": true, "id": id, "revoked": true}));
    assert_eq!(me(&server, &key).await.0, StatusCode::UNAUTHORIZED);
    // Again: answered the same, logged once.
    let (status, _) = server.admin_post("/v1/apikeys/revoke", &revoke).await;
    assert_eq!(status, StatusCode::OK);

    assert_eq!(
        common::operators_log(&server).await,
        vec![
            (
                "apikey.issue".to_owned(),
                id.clone(),
                ADMIN_WALLET.to_owned()
            ),
            (
                "apikey.revoke".to_owned(),
                id.clone(),
                ADMIN_WALLET.to_owned()
            ),
        ]
    );
    server.stop().await;
}

#[tokio::test]
async fn a_free_key_gets_60_requests_a_minute_then_the_tier_body() {
    let server = TestServer::start_at(clock_at_hour_start(), |c| c.anon_rate_per_min = 1000).await;
    let wallet = "11111111111111111111111111111111";
    let (_, key) = issue_key(&server, wallet).await;
    // Issuing the key (an admin request with its own limit) did not use the key's quota.
    for n in 1..=60 {
        let (status, _) = me(&server, &key).await;
        assert_eq!(status, StatusCode::OK, "request {n}");
    }
    let refused = server
        .http
        .get(server.url("/v1/system/status"))
        .header("x-api-key", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        refused.headers()["retry-after"],
        "60",
        "the window just began"
    );
    let body: Value = refused.json().await.unwrap();
    assert_eq!(
        body,
        json!({"error": "Rate limit exceeded", "tier": "free", "limit": 60, "retry_after": "60"})
    );
    // Anonymous callers from the same IP are counted apart.
    assert_eq!(server.get("/v1/system/status").await.0, StatusCode::OK);
    server.stop().await;
}

/// The global limiter's refusal, at the start of a minute window.
async fn assert_global_refusal(response: reqwest::Response) {
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after = 60;
    assert_eq!(response.headers()["retry-after"], "60");
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body,
        json!({
            "statusCode": 429,
            "error": "Too Many Requests",
            "message": format!("Rate limit exceeded, retry in {retry_after} seconds"),
            "retryAfter": retry_after,
        })
    );
}

#[tokio::test]
async fn anonymous_callers_are_limited_per_ip_with_the_global_body() {
    let server = TestServer::start_at(clock_at_hour_start(), |c| c.anon_rate_per_min = 5).await;
    for n in 1..=5 {
        assert_eq!(
            server.get("/v1/system/status").await.0,
            StatusCode::OK,
            "request {n}"
        );
    }
    let refused = server
        .http
        .get(server.url("/v1/shield/protocols"))
        .send()
        .await
        .unwrap();
    assert_global_refusal(refused).await;
    assert_eq!(
        server.get("/health").await.0,
        StatusCode::OK,
        "probes are not limited"
    );
    server.stop().await;
}

#[tokio::test]
async fn two_processes_share_limits_through_redis() {
    let namespace = format!("nms-test-{}", uuid::Uuid::new_v4().simple());
    let ns = namespace.clone();
    let first = TestServer::start_at(clock_at_hour_start(), move |c| {
        c.anon_rate_per_min = 5;
        c.redis_url = Some(REDIS_URL.into());
        c.rate_limit_namespace = ns;
    })
    .await;
    let (second, stop_second) = first
        .start_beside(|c| {
            c.anon_rate_per_min = 5;
            c.redis_url = Some(REDIS_URL.into());
            c.rate_limit_namespace = namespace;
        })
        .await;
    for n in 1..=3 {
        assert_eq!(
            first.get("/v1/system/status").await.0,
            StatusCode::OK,
            "first {n}"
        );
    }
    let on_second = |path: &str| first.http.get(format!("{second}{path}")).send();
    for n in 4..=5 {
        assert_eq!(
            on_second("/v1/system/status").await.unwrap().status(),
            StatusCode::OK,
            "second {n}"
        );
    }
    assert_global_refusal(on_second("/v1/system/status").await.unwrap()).await;
    assert_global_refusal(
        first
            .http
            .get(first.url("/v1/system/status"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    stop_second.send(()).ok();
    first.stop().await;
}

#[tokio::test]
async fn admin_headers_are_checked_before_anything_is_issued() {
    let server = TestServer::start(|c| c.paid_tiers_active = true).await;
    let response = server
        .http
        .post(server.url("/v1/admin/apikeys"))
        .header("x-admin-wallet", ADMIN_WALLET)
        .header("x-admin-secret", format!("{ADMIN_SECRET}!"))
        .json(&json!({"tier": "enterprise"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let (status, body) = server
        .admin_post("/v1/admin/apikeys", &json!({"tier": "platinum"}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body,
        json!({"ok": false, "error": "invalid request body: tier: must be one of free, pro, enterprise"})
    );
    let (status, body) = server
        .admin_post("/v1/admin/apikeys", &json!({"tier": "enterprise"}))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, me_body) = me(&server, body["key"].as_str().unwrap()).await;
    assert_eq!(me_body["limit_per_minute"], 1000);
    server.stop().await;
}

/// Spec 5 rule 5 and 8: paid tiers are inactive during the beta, so operators issue only Free
/// keys until `PAID_TIERS_ACTIVE` says the beta is over.
#[tokio::test]
async fn paid_tiers_are_issued_only_once_active() {
    let server = TestServer::start(|_| {}).await;
    for tier in ["pro", "enterprise"] {
        let (status, body) = server
            .admin_post("/v1/admin/apikeys", &json!({"tier": tier, "name": "bot"}))
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(body["error"], "tier_inactive");
        assert_eq!(body["tier"], tier);
        assert_eq!(
            body["message"],
            format!(
                "the {tier} tier is inactive during the beta: only free keys are issued until \
                 PAID_TIERS_ACTIVE is set"
            )
        );
    }
    let keys = narrative_store::entities::api_keys::Entity::find()
        .count(server.db.store.db())
        .await
        .unwrap();
    assert_eq!(keys, 0, "nothing issued");
    for body in [json!({"tier": "free"}), json!({})] {
        let (status, issued) = server.admin_post("/v1/admin/apikeys", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{issued}");
        assert_eq!(issued["tier"], "free");
    }
    server.stop().await;

    let server = TestServer::start(|c| c.paid_tiers_active = true).await;
    let (status, issued) = server
        .admin_post("/v1/admin/apikeys", &json!({"tier": "pro"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{issued}");
    assert_eq!(issued["tier"], "pro");
    let (_, me_body) = me(&server, issued["key"].as_str().unwrap()).await;
    assert_eq!(me_body["limit_per_minute"], 300);
    server.stop().await;
}
