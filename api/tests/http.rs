//! Black-box tests over HTTP: the real binary's app on port 0, a fresh database per test
//! (SQLite, or Postgres when `DATABASE_URL` says so), requests with reqwest.

mod common;

use common::{TestServer, ADMIN_SECRET, ADMIN_WALLET};
use ed25519_dalek::{Signer, SigningKey};
use narrative_store::entities::shield_coverages;
use reqwest::StatusCode;
use sea_orm::{ActiveModelTrait, EntityTrait, IntoActiveModel};
use serde_json::{json, Value};

#[tokio::test]
async fn health_openapi_document_and_docs_are_served() {
    let server = TestServer::start(|_| {}).await;
    let (status, health) = server.get("/health").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        health,
        json!({"ok": true, "status": "ok", "database": "ok"})
    );

    let (status, document) = server.get("/v1/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        document["openapi"].as_str().unwrap().starts_with("3."),
        "{document}"
    );
    assert_eq!(document["servers"][0]["url"], "/v1");
    let paths = document["paths"].as_object().expect("paths");
    for path in [
        "/system/status",
        "/admin/system/halt",
        "/shield/protocols",
        "/shield/protocols/{id}",
        "/shield/terms-ack",
        "/shield/partner-apply",
        "/binary/status",
        "/binary/back",
        "/binary/back/confirm",
        "/binary/withdraw",
        "/shield/probe-log",
        "/shield/back",
        "/shield/back/confirm",
        "/markets",
        "/markets/confirm",
        "/nft/webhook/indexer",
        "/agent/register",
        "/agent/feed",
        "/agent/resolve",
        "/agent/webhook",
        "/narratives",
        "/narratives/{id}",
        "/narratives/prepare-mint",
        "/narratives/publish",
        "/narratives/{id}/back",
        "/narratives/{id}/score-history",
        "/narratives/{id}/market-history",
        "/narratives/{id}/rules",
        "/narratives/{id}/settlement",
        "/narratives/generate",
        "/narratives/generate/status/{jobId}",
        "/narrative-groups",
        "/conviction/{wallet}",
        "/conviction/creator/{wallet}",
    ] {
        assert!(
            paths.contains_key(path),
            "{path} missing from {:?}",
            paths.keys()
        );
    }
    assert!(document["components"]["securitySchemes"]["AdminAuth"].is_object());
    assert!(document["components"]["securitySchemes"]["WebhookAuth"].is_object());
    // Structurally sound: every reference resolves, every operation has responses and a tag.
    let mut refs = Vec::new();
    collect_refs(&document, &mut refs);
    assert!(!refs.is_empty());
    for reference in refs {
        let name = reference
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("unexpected reference {reference}"));
        assert!(
            document["components"]["schemas"][name].is_object(),
            "{reference} does not resolve"
        );
    }
    let tags: Vec<&str> = document["tags"]
        .as_array()
        .expect("tags")
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for (path, item) in paths {
        for (method, operation) in item.as_object().unwrap() {
            assert!(
                operation["responses"].is_object(),
                "{method} {path} has no responses"
            );
            let tag = operation["tags"][0].as_str().expect("a tag");
            assert!(tags.contains(&tag), "{method} {path}: undeclared tag {tag}");
        }
    }

    let docs = server.http.get(server.url("/docs/")).send().await.unwrap();
    assert_eq!(docs.status(), StatusCode::OK);
    assert!(docs.text().await.unwrap().contains("swagger"));
    server.stop().await;
}

#[tokio::test]
async fn malformed_unknown_and_oversized_requests_get_the_spec_envelopes() {
    let server = TestServer::start(|_| {}).await;
    let malformed = server
        .http
        .post(server.url("/v1/shield/partner-apply"))
        .header("content-type", "application/json")
        .body("{\"protocol_name\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status(), StatusCode::BAD_REQUEST);
    let body: Value = malformed.json().await.unwrap();
    assert_eq!(body["ok"], false);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("invalid request body"),
        "{body}"
    );

    let (status, body) = server
        .post("/v1/shield/partner-apply", &json!({"contact": "a@b.c"}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "missing field");
    assert_eq!(body["ok"], false);

    let (status, body) = server.get("/v1/no/such/route").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "not_found");
    assert!(body["message"].is_string());

    let huge = json!({"protocol_name": "x", "contact": "y", "message": "z".repeat(1024 * 1024)});
    let (status, body) = server.post("/v1/shield/partner-apply", &huge).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(body["error"], "payload_too_large");

    // Unknown fields are ignored; the write goes through.
    let (status, body) = server
        .post(
            "/v1/shield/partner-apply",
            &json!({"protocol_name": "Lendo", "contact": "sec@lendo.example", "favourite_colour": "teal"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["ok"], true);
    assert_eq!(body["id"].as_str().unwrap().len(), 36);
    assert_eq!(
        uuid::Uuid::parse_str(body["id"].as_str().unwrap())
            .unwrap()
            .get_version_num(),
        4
    );
    server.stop().await;
}

#[tokio::test]
async fn admin_pair_is_required_and_halting_blocks_writes() {
    let server = TestServer::start(|_| {}).await;
    let halt = json!({"component": "shield", "halted": true, "reason": "incident 42"});

    let (status, body) = server.post("/v1/admin/system/halt", &halt).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "no credentials");
    assert_eq!(body["error"], "Unauthorized");

    let wrong = server
        .http
        .post(server.url("/v1/admin/system/halt"))
        .header("x-admin-wallet", ADMIN_WALLET)
        .header("x-admin-secret", "guess")
        .json(&halt)
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED, "wrong secret");
    assert_eq!(
        wrong.json::<Value>().await.unwrap()["error"],
        "Unauthorized"
    );

    let other_wallet = server
        .http
        .post(server.url("/v1/admin/system/halt"))
        .header(
            "x-admin-wallet",
            "SomeoneE1se11111111111111111111111111111111",
        )
        .header("x-admin-secret", ADMIN_SECRET)
        .json(&halt)
        .send()
        .await
        .unwrap();
    assert_eq!(
        other_wallet.status(),
        StatusCode::UNAUTHORIZED,
        "wrong wallet"
    );

    let (status, _) = server.get("/v1/system/status").await;
    assert_eq!(status, StatusCode::OK);

    let (status, body) = server.admin_post("/v1/admin/system/halt", &halt).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let shield = body["components"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "shield")
        .unwrap()
        .clone();
    assert_eq!(shield["halted"], true);
    assert_eq!(shield["reason"], "incident 42");
    assert!(shield["updated_at"].as_str().unwrap().ends_with('Z'));
    assert_eq!(body["halted"], true);

    let application = json!({"protocol_name": "Lendo", "contact": "sec@lendo.example"});
    let (status, body) = server.post("/v1/shield/partner-apply", &application).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body["error"], "system_halted");
    assert_eq!(body["component"], "shield");

    let (status, body) = server
        .admin_post(
            "/v1/admin/system/halt",
            &json!({"component": "shield", "halted": false}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["halted"], false);
    let (status, _) = server.post("/v1/shield/partner-apply", &application).await;
    assert_eq!(status, StatusCode::CREATED);

    let (status, body) = server
        .admin_post(
            "/v1/admin/system/halt",
            &json!({"component": "moon", "halted": true}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["ok"], false);
    server.stop().await;
}

#[tokio::test]
async fn binary_routes_are_gated_with_503() {
    let server = TestServer::start(|_| {}).await;
    let (status, body) = server.get("/v1/binary/status").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body["feature"], "coming_soon");
    for path in [
        "/v1/binary/narratives",
        "/v1/binary/positions/11111111111111111111111111111111",
    ] {
        let (status, body) = server.get(path).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{path}");
        assert_eq!(body["error"], "coming_soon");
    }
    for path in ["/v1/binary/back", "/v1/binary/withdraw"] {
        let (status, body) = server.post(path, &json!({})).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{path}");
        assert_eq!(body["error"], "coming_soon");
    }
    server.stop().await;
}

#[tokio::test]
async fn binary_listing_reads_the_index_when_enabled() {
    let server = TestServer::start(|c| c.binary_markets_enabled = true).await;
    let market = common::fixtures::market(
        "Market1111111111111111111111111111111111111",
        &("ab".repeat(16) + &"00".repeat(16)),
        Some("abababab-abab-4bab-abab-abababababab"),
        "11111111111111111111111111111111",
        (3_000_000_000, 1_000_000_000),
        (3, 1),
    );
    market
        .into_active_model()
        .insert(server.db.store.db())
        .await
        .unwrap();
    let (status, body) = server.get("/v1/binary/status").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["feature"], "live");
    let (status, body) = server.get("/v1/binary/narratives?limit=100000").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["total"], 1);
    assert_eq!(body["markets"][0]["yes_total_sol"], 3.0);
    assert_eq!(body["markets"][0]["deadline"], "2026-02-01T00:00:00Z");
    let (status, body) = server.get("/v1/binary/positions/not-a-wallet").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body,
        json!({"ok": false, "error": "invalid path: wallet: must be a base58 public key of 32 bytes"})
    );
    server.stop().await;
}

#[tokio::test]
async fn shield_protocols_come_from_the_index_with_pool_state() {
    let server = TestServer::start(|_| {}).await;
    let db = server.db.store.db();
    let now = chrono::Utc::now().timestamp();
    common::fixtures::coverage(1, "active", now - 86_400)
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
    common::fixtures::coverage(2, "active", now - 2 * 86_400)
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
    // A partnership that EXPLOIT won: its seam share has gone to the Echo Pool, its treasury
    // and protocol shares still wait in the losing vault, the protocol's behind a wallet the
    // runtime could not credit.
    shield_coverages::Model {
        kind: "partnership".into(),
        protocol_wallet: Some("So11111111111111111111111111111111111111112".into()),
        outcome: Some("exploit".into()),
        protocol_payout: 1_250_000_000,
        treasury_payout: 300_000_000,
        seam_payout: 75_000_000,
        seam_forwarded: true,
        treasury_forwarded: true,
        ..common::fixtures::coverage(3, "resolved", now - 90 * 86_400)
    }
    .into_active_model()
    .insert(db)
    .await
    .unwrap();

    let (status, body) = server.get("/v1/shield/protocols").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["ok"], true);
    assert_eq!(body["total"], 2, "only active periods are listed");
    let first = &body["protocols"][0];
    assert_eq!(first["id"], "01".repeat(32), "newest period first");
    assert_eq!(first["backing_open"], true);
    assert_eq!(first["safe"]["principal_lamports"], 2_500_000_000i64);
    assert_eq!(first["safe"]["principal_sol"], 2.5);
    assert_eq!(first["exploit"]["backers"], 1);
    assert_eq!(first["total_backed_sol"], 3.0);
    for share in ["seam_share", "treasury_share", "protocol_share"] {
        assert_eq!(first[share], Value::Null, "{share} before resolution");
    }

    let (_, page) = server.get("/v1/shield/protocols?limit=1&offset=1").await;
    assert_eq!(page["protocols"].as_array().unwrap().len(), 1);
    assert_eq!(page["protocols"][0]["id"], "02".repeat(32));
    let (status, clamped) = server.get("/v1/shield/protocols?limit=-3").await;
    assert_eq!(status, StatusCode::OK, "caps clamp rather than reject");
    assert_eq!(clamped["protocols"].as_array().unwrap().len(), 1);

    let (status, detail) = server
        .get(&format!("/v1/shield/protocols/{}", "03".repeat(32)))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(detail["protocol"]["status"], "resolved");
    assert_eq!(detail["protocol"]["backing_open"], false);
    assert_eq!(
        detail["protocol"]["seam_share"],
        json!({"lamports": 75_000_000, "stage": "forwarded"})
    );
    assert_eq!(
        detail["protocol"]["treasury_share"],
        json!({"lamports": 300_000_000, "stage": "forwarded"})
    );
    assert_eq!(
        detail["protocol"]["protocol_share"],
        json!({"lamports": 1_250_000_000, "stage": "pending_forward"})
    );
    let (status, body) = server
        .get(&format!("/v1/shield/protocols/{}", "09".repeat(32)))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "not_found");
    let (status, body) = server.get("/v1/shield/protocols/nope").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["ok"], false);
    server.stop().await;
}

#[tokio::test]
async fn terms_acknowledgement_needs_the_wallets_signature() {
    let server = TestServer::start(|c| c.shield_terms_version = "v7".into()).await;
    let key = SigningKey::generate(&mut rand::rngs::OsRng);
    let wallet = bs58::encode(key.verifying_key().to_bytes()).into_string();
    let now = server.clock.now();
    let message = format!("narrative-market-service:shield-terms:v7:{wallet}:issued-at:{now}");
    let signature = bs58::encode(key.sign(message.as_bytes()).to_bytes()).into_string();

    let forged = bs58::encode(key.sign(b"something else").to_bytes()).into_string();
    let (status, body) = server
        .post(
            "/v1/shield/terms-ack",
            &json!({"wallet": wallet, "signature": forged, "issued_at": now}),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"], "invalid_signature");

    let (status, body) = server
        .post(
            "/v1/shield/terms-ack",
            &json!({"wallet": wallet, "signature": signature, "issued_at": now, "terms_version": "v6"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "stale terms version");
    assert_eq!(body["ok"], false);

    let (status, body) = server
        .post(
            "/v1/shield/terms-ack",
            &json!({"wallet": wallet, "signature": signature, "issued_at": now}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["ok"], true);
    assert_eq!(body["terms_version"], "v7");
    assert_eq!(body["wallet"], wallet);

    // The same proof again is a replay, refused though its signature is good.
    let (status, body) = server
        .post(
            "/v1/shield/terms-ack",
            &json!({"wallet": wallet, "signature": signature, "issued_at": now}),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"], "invalid_signature");
    assert!(
        body["message"].as_str().unwrap().contains("already used"),
        "{body}"
    );

    // A proof signed longer ago than the window is refused, and says the server's time.
    let old = now - 301;
    let stale = format!("narrative-market-service:shield-terms:v7:{wallet}:issued-at:{old}");
    let stale = bs58::encode(key.sign(stale.as_bytes()).to_bytes()).into_string();
    let (status, body) = server
        .post(
            "/v1/shield/terms-ack",
            &json!({"wallet": wallet, "signature": stale, "issued_at": old}),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"], "invalid_signature");
    assert!(body["server_time"].as_i64().is_some(), "{body}");

    let (status, body) = server
        .post(
            "/v1/shield/terms-ack",
            &json!({"wallet": "zz", "signature": signature, "issued_at": now}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body,
        json!({"ok": false, "error": "invalid request body: wallet: must be a base58 public key of 32 bytes"})
    );

    // The same route with the spec's trailing slash is logged under its one name; a body over
    // the 1 MiB limit is refused before the gate and holds no row.
    let (status, _) = server
        .post(
            "/v1/shield/terms-ack/",
            &json!({"wallet": wallet, "signature": forged, "issued_at": now}),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let oversized = server
        .http
        .post(server.url("/v1/shield/terms-ack"))
        .header("content-type", "application/json")
        .body(vec![b' '; 2 * 1024 * 1024])
        .send()
        .await
        .unwrap();
    assert_eq!(oversized.status(), StatusCode::PAYLOAD_TOO_LARGE);

    // Every attempt is in the gate's log, which only the operator may read.
    let (status, body) = server.get("/v1/shield/probe-log").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"], "Unauthorized");
    let log: Value = server
        .http
        .get(server.url("/v1/shield/probe-log?limit=500"))
        .header("x-admin-wallet", ADMIN_WALLET)
        .header("x-admin-secret", ADMIN_SECRET)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(log["total"], 7);
    let outcomes: Vec<&str> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        [
            "invalid_signature",
            "invalid request body: wallet: must be a base58 public key of 32 bytes",
            "invalid_signature",
            "invalid_signature",
            "acknowledged",
            "terms_version must be the current version v7",
            "invalid_signature"
        ]
    );
    assert_eq!(log["entries"][0]["route"], "/v1/shield/terms-ack");
    assert_eq!(log["entries"][4]["wallet"], wallet);
    assert_eq!(log["entries"][4]["ip"], "127.0.0.1");
    assert_eq!(log["entries"][4]["route"], "/v1/shield/terms-ack");
    server.stop().await;
}

#[tokio::test]
async fn cors_request_ids_and_metrics() {
    let server = TestServer::start(|_| {}).await;
    let preflight = server
        .http
        .request(reqwest::Method::OPTIONS, server.url("/v1/shield/terms-ack"))
        .header("origin", "https://app.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type,x-admin-secret",
        )
        .send()
        .await
        .unwrap();
    // Spec 7: a preflight answers 204.
    assert_eq!(preflight.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        preflight.headers()["access-control-allow-origin"],
        "https://app.example"
    );
    // A browser page may send the wallet proof of a preferences write, PUT or PATCH: the
    // preflight names both headers and both methods (a browser checks each header it sends).
    for method in ["PUT", "PATCH"] {
        let preflight = server
            .http
            .request(
                reqwest::Method::OPTIONS,
                server.url("/v1/notifications/push/preferences/11111111111111111111111111111111"),
            )
            .header("origin", "https://app.example")
            .header("access-control-request-method", method)
            .header(
                "access-control-request-headers",
                "content-type,x-wallet-signature,x-wallet-issued-at",
            )
            .send()
            .await
            .unwrap();
        assert_eq!(preflight.status(), StatusCode::NO_CONTENT, "{method}");
        let listed = |name: &str| -> Vec<String> {
            preflight.headers()[name]
                .to_str()
                .unwrap()
                .split(',')
                .map(|h| h.trim().to_ascii_lowercase())
                .collect()
        };
        let headers = listed("access-control-allow-headers");
        for header in ["content-type", "x-wallet-signature", "x-wallet-issued-at"] {
            assert!(headers.iter().any(|h| h == header), "{header}: {headers:?}");
        }
        assert!(
            listed("access-control-allow-methods").contains(&method.to_ascii_lowercase()),
            "{method}"
        );
    }
    let foreign = server
        .http
        .get(server.url("/v1/system/status"))
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    let native = server
        .http
        .get(server.url("/v1/system/status"))
        .send()
        .await
        .unwrap();
    assert_eq!(native.status(), StatusCode::OK, "no Origin header passes");
    assert!(native
        .headers()
        .get("access-control-allow-origin")
        .is_none());
    let request_id = native.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(uuid::Uuid::parse_str(&request_id).is_ok(), "{request_id}");

    // Ids and made-up paths do not grow the label set.
    for path in [
        format!("/v1/narratives/{}", uuid::Uuid::new_v4()),
        format!("/v1/narratives/{}", uuid::Uuid::new_v4()),
        "/v1/made/up/path".to_owned(),
        "/wp-login.php".to_owned(),
    ] {
        server.http.get(server.url(&path)).send().await.unwrap();
    }
    let metrics = server
        .http
        .get(server.url("/metrics"))
        .send()
        .await
        .unwrap();
    let text = metrics.text().await.unwrap();
    assert!(
        text.contains(
            r#"http_requests_total{method="GET",route="/v1/system/status",status="200"} 1"#
        ),
        "{text}"
    );
    assert!(
        text.contains(
            r#"http_requests_total{method="GET",route="/v1/narratives/{id}",status="404"} 2"#
        ),
        "{text}"
    );
    assert!(
        text.contains(r#"http_requests_total{method="GET",route="unmatched",status="404"} 2"#),
        "{text}"
    );
    assert!(
        !text.contains("made/up") && !text.contains("wp-login"),
        "{text}"
    );
    // The service's own origin (a page it serves posting back) is no cross-origin request.
    let own_origin = server.url("");
    let own = server
        .http
        .get(server.url("/v1/system/status"))
        .header("origin", own_origin.trim_end_matches('/'))
        .send()
        .await
        .unwrap();
    assert_eq!(own.status(), StatusCode::OK, "{own_origin}");
    let lookalike = server
        .http
        .get(server.url("/v1/system/status"))
        .header(
            "origin",
            format!("{}.evil.example", own_origin.trim_end_matches('/')),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(lookalike.status(), StatusCode::FORBIDDEN);
    server.stop().await;
}

#[tokio::test]
async fn nft_webhooks_need_the_shared_secret_and_keep_what_they_receive() {
    let server = TestServer::start(|c| c.webhook_secret = Some("inbound-hook-secret".into())).await;
    let event = json!({"mint": "Mint1111", "from": "A", "to": "B"});
    for path in ["/v1/nft/webhook/indexer", "/v1/nft/webhook/transfer"] {
        for secret in [None, Some("wrong")] {
            let mut request = server.http.post(server.url(path)).json(&event);
            if let Some(secret) = secret {
                request = request.header("x-webhook-secret", secret);
            }
            let response = request.send().await.unwrap();
            assert_eq!(
                response.status(),
                StatusCode::UNAUTHORIZED,
                "{path} {secret:?}"
            );
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["error"], "Unauthorized");
        }
        let response = server
            .http
            .post(server.url(path))
            .header("x-webhook-secret", "inbound-hook-secret")
            .json(&event)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["ok"], true);
    }
    let stored = narrative_store::entities::webhook_events::Entity::find()
        .all(server.db.store.db())
        .await
        .unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0].source, "indexer");
    assert_eq!(stored[1].source, "transfer");
    assert_eq!(stored[0].payload, event);

    // With no secret configured, nothing gets in.
    let closed = TestServer::start(|_| {}).await;
    let response = closed
        .http
        .post(closed.url("/v1/nft/webhook/indexer"))
        .header("x-webhook-secret", "")
        .json(&event)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref") {
                out.push(reference.clone());
            }
            map.values().for_each(|v| collect_refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}
