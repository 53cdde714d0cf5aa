//! Oracle authority over HTTP (issue 26): an agent may resolve only by an operator's grant, or
//! under the `ORACLE_AGENT_WALLETS` bootstrap with a wallet it proved by signing its
//! registration; a wallet merely named at registration is a label that confers nothing. Grants
//! and revocations are the operators' (idempotent, 404 for an unknown agent) and land in their
//! log. A registration proof that fails (stale, replayed, not the wallet's) registers nothing.

mod common;

use common::{clock_at_hour_start, SigningWallet, TestServer, ADMIN_WALLET};
use narrative_store::entities::{admin_actions, agents, api_keys};
use reqwest::{Method, StatusCode};
use sea_orm::{ConnectionTrait, EntityTrait, PaginatorTrait, QueryOrder};
use serde_json::{json, Value};

/// The oracle's wallet: public (config, leaderboards), so anyone can name it.
fn oracle_wallet() -> SigningWallet {
    SigningWallet::new(41)
}

/// A server whose bootstrap list names the oracle's wallet, as deployments configured it; its
/// time stands still (at an hour's start, so the registrations' hourly window is fresh).
async fn start() -> TestServer {
    let listed = oracle_wallet().address;
    TestServer::start_at(clock_at_hour_start(), move |c| {
        c.oracle_agent_wallets = vec![listed]
    })
    .await
}

async fn register(server: &TestServer, body: Value) -> (StatusCode, Value) {
    server.post("/v1/agent/register", &body).await
}

/// A registration under `wallet`'s address with its signature of the registration statement.
use common::signed_agent_registration as signed_registration;

/// A verdict on a narrative that does not exist: an authorised agent gets 404, any other 403.
async fn resolve_unknown(server: &TestServer, key: &str) -> (StatusCode, Value) {
    server
        .key_post(
            "/v1/agent/resolve",
            key,
            &json!({
                "narrative_id": uuid::Uuid::new_v4().to_string(),
                "resolution": "true",
                "confidence": 0.9,
            }),
        )
        .await
}

fn refused() -> Value {
    json!({"ok": false, "error": "agent is not authorised to resolve"})
}

async fn set_authority(server: &TestServer, method: Method, agent_id: &str) -> (StatusCode, Value) {
    server
        .admin_request(
            ADMIN_WALLET,
            method,
            &format!("/v1/admin/agents/{agent_id}/oracle"),
            None,
        )
        .await
}

use common::operators_log as logged;

#[tokio::test]
async fn a_claimed_oracle_wallet_confers_nothing_and_a_proven_one_bootstraps() {
    let server = start().await;
    let oracle = oracle_wallet();

    // The attack: register under the oracle's public wallet, no proof. Registration still
    // works as the spec's body says, but the wallet is a label.
    let (status, claimed) = register(
        &server,
        json!({"wallet_address": oracle.address, "name": "impostor"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{claimed}");
    assert_eq!(claimed["agent"]["wallet_address"], oracle.address.as_str());
    assert_eq!(claimed["agent"]["wallet_proven"], false);
    let impostor = claimed["agent"]["api_key"].as_str().unwrap().to_owned();
    // Before, this key passed the check (404 for the unknown narrative); now it is refused.
    let (status, body) = resolve_unknown(&server, &impostor).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body, refused());

    // The wallet's holder registers with its signature: proven, and listed, so it may resolve.
    let now = server.clock.now();
    let (status, proven) = register(&server, signed_registration(&oracle, "oracle-bot", now)).await;
    assert_eq!(status, StatusCode::CREATED, "{proven}");
    assert_eq!(proven["agent"]["wallet_proven"], true);
    let key = proven["agent"]["api_key"].as_str().unwrap().to_owned();
    let (status, body) = resolve_unknown(&server, &key).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(
        body,
        json!({"ok": false, "error": "narrative not found or not open for resolution"})
    );

    // Nor is the impostor's key filed under the wallet: the holder's listing shows only the
    // key of the agent it proved, and `me` names no wallet for the impostor's.
    let (status, listed) = server.get(&format!("/v1/apikeys/{}", oracle.address)).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    let names: Vec<&str> = listed["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["oracle-bot"]);
    let (_, me) = server.key_get("/v1/apikeys/me", &impostor).await;
    assert_eq!(me["wallet"], Value::Null, "{me}");

    // A proven wallet that is not listed confers nothing either.
    let other = SigningWallet::new(42);
    let (status, unlisted) = register(&server, signed_registration(&other, "scout", now)).await;
    assert_eq!(status, StatusCode::CREATED, "{unlisted}");
    assert_eq!(unlisted["agent"]["wallet_proven"], true);
    let unlisted = unlisted["agent"]["api_key"].as_str().unwrap().to_owned();
    assert_eq!(
        resolve_unknown(&server, &unlisted).await.0,
        StatusCode::FORBIDDEN
    );
    server.stop().await;
}

#[tokio::test]
async fn operators_grant_and_revoke_authority_in_their_log() {
    let server = start().await;
    let oracle = oracle_wallet();
    let (status, claimed) = register(
        &server,
        json!({"wallet_address": oracle.address, "name": "impostor"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{claimed}");
    let agent_id = claimed["agent"]["id"].as_str().unwrap().to_owned();
    let key = claimed["agent"]["api_key"].as_str().unwrap().to_owned();
    assert_eq!(
        resolve_unknown(&server, &key).await.0,
        StatusCode::FORBIDDEN
    );

    // The pair is needed; an unknown agent is 404, a malformed id 400.
    let path = format!("/v1/admin/agents/{agent_id}/oracle");
    let (status, _) = server.post(&path, &json!({})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let unknown = format!("ag_{}", "0".repeat(32));
    let (status, body) = set_authority(&server, Method::POST, &unknown).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["error"], "not_found");
    let (status, body) = set_authority(&server, Method::DELETE, &unknown).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(
        set_authority(&server, Method::POST, "ag_nope").await.0,
        StatusCode::BAD_REQUEST
    );
    // Revoking an agent without authority changes nothing and logs nothing.
    let (status, body) = set_authority(&server, Method::DELETE, &agent_id).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (&body["oracle"], &body["changed"]),
        (&json!(false), &json!(false))
    );
    assert!(logged(&server).await.is_empty());

    // The grant: the agent's key now passes (404 for the unknown narrative).
    let (status, granted) = set_authority(&server, Method::POST, &agent_id).await;
    assert_eq!(status, StatusCode::OK, "{granted}");
    assert_eq!(granted["ok"], true);
    assert_eq!(granted["agent_id"], agent_id.as_str());
    assert_eq!(granted["oracle"], true);
    assert_eq!(granted["authority"], "grant");
    assert_eq!(granted["changed"], true);
    assert_eq!(granted["wallet_proven"], false);
    assert_eq!(granted["granted_by"], ADMIN_WALLET);
    assert!(granted["granted_at"].is_string());
    assert_eq!(granted["revoked_at"], Value::Null);
    let (status, body) = resolve_unknown(&server, &key).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // Granting again is idempotent: the first grant stands, nothing is logged.
    let (status, again) = set_authority(&server, Method::POST, &agent_id).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["changed"], false);
    assert_eq!(again["oracle"], true);
    assert_eq!(again["granted_at"], granted["granted_at"]);

    // The revocation: 403 again.
    let (status, revoked) = set_authority(&server, Method::DELETE, &agent_id).await;
    assert_eq!(status, StatusCode::OK, "{revoked}");
    assert_eq!(revoked["oracle"], false);
    assert_eq!(revoked["authority"], Value::Null);
    assert_eq!(revoked["changed"], true);
    assert!(revoked["revoked_at"].is_string());
    let (status, body) = resolve_unknown(&server, &key).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body, refused());
    let (status, again) = set_authority(&server, Method::DELETE, &agent_id).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["changed"], false);

    // A revocation overrides the bootstrap: the wallet's holder, proven and listed, resolves
    // until an operator revokes it, and again once one grants it.
    let now = server.clock.now();
    let (status, proven) = register(&server, signed_registration(&oracle, "oracle-bot", now)).await;
    assert_eq!(status, StatusCode::CREATED, "{proven}");
    let proven_id = proven["agent"]["id"].as_str().unwrap().to_owned();
    let proven_key = proven["agent"]["api_key"].as_str().unwrap().to_owned();
    assert_eq!(
        resolve_unknown(&server, &proven_key).await.0,
        StatusCode::NOT_FOUND
    );
    let (status, body) = set_authority(&server, Method::DELETE, &proven_id).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["changed"], true);
    assert_eq!(
        resolve_unknown(&server, &proven_key).await.0,
        StatusCode::FORBIDDEN
    );
    // The revocation is of the wallet's bootstrap: its holder registering a new agent, proven
    // and listed, does not win it back.
    let (status, again) = register(
        &server,
        signed_registration(&oracle, "oracle-bot-2", now + 1),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{again}");
    assert_eq!(again["agent"]["wallet_proven"], true);
    let again_key = again["agent"]["api_key"].as_str().unwrap().to_owned();
    let (status, body) = resolve_unknown(&server, &again_key).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, body) = set_authority(&server, Method::POST, &proven_id).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["authority"], "grant");
    assert_eq!(
        resolve_unknown(&server, &proven_key).await.0,
        StatusCode::NOT_FOUND
    );

    // Each change, and only those, is in the operators' log with the operator's wallet.
    let actor = ADMIN_WALLET.to_owned();
    assert_eq!(
        logged(&server).await,
        vec![
            ("agent.oracle_grant".into(), agent_id.clone(), actor.clone()),
            (
                "agent.oracle_revoke".into(),
                agent_id.clone(),
                actor.clone()
            ),
            (
                "agent.oracle_revoke".into(),
                proven_id.clone(),
                actor.clone()
            ),
            (
                "agent.oracle_grant".into(),
                proven_id.clone(),
                actor.clone()
            ),
        ]
    );
    let details: Vec<Value> = admin_actions::Entity::find()
        .order_by_asc(admin_actions::Column::Id)
        .all(server.db.store.db())
        .await
        .unwrap()
        .into_iter()
        .map(|a| a.detail)
        .collect();
    assert_eq!(
        details[2],
        json!({"authority": "bootstrap", "wallet_address": oracle.address})
    );
    server.stop().await;
}

#[tokio::test]
async fn a_failed_registration_proof_registers_nothing() {
    let server = start().await;
    let oracle = oracle_wallet();
    let db = server.db.store.db();
    let now = server.clock.now();
    let count = || async {
        (
            agents::Entity::find().count(db).await.unwrap(),
            api_keys::Entity::find().count(db).await.unwrap(),
        )
    };
    let expect_refused = |(status, body): (StatusCode, Value)| {
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_eq!(body["error"], "invalid_signature", "{body}");
    };

    // Stale: signed more than 300 s ago. (Each refusal counts toward the 5 registrations an
    // hour an address may attempt: this test makes five.)
    let stale = signed_registration(&oracle, "oracle-bot", now - 301);
    let (status, body) = register(&server, stale).await;
    assert_eq!(body["server_time"], now, "{body}");
    expect_refused((status, body));
    // Not the wallet's: another wallet signed the oracle's statement.
    let mut forged = signed_registration(&SigningWallet::new(7), "oracle-bot", now);
    forged["wallet_address"] = json!(oracle.address);
    expect_refused(register(&server, forged).await);
    // Another name than the one signed.
    let mut renamed = signed_registration(&oracle, "oracle-bot", now);
    renamed["name"] = json!("impostor");
    expect_refused(register(&server, renamed).await);
    // Half a proof proves nothing, either half.
    let mut half = signed_registration(&oracle, "oracle-bot", now);
    half.as_object_mut().unwrap().remove("issued_at");
    let (status, body) = register(&server, half).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"], "invalid_signature");
    let mut half = signed_registration(&oracle, "oracle-bot", now);
    half.as_object_mut().unwrap().remove("wallet_signature");
    let (status, body) = register(&server, half).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"], "invalid_signature");
    assert_eq!(count().await, (0, 0));

    // Replayed: the signed body registers once, and the same body again registers nothing.
    let signed = signed_registration(&oracle, "oracle-bot", now);
    let (status, body) = register(&server, signed.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(count().await, (1, 1));
    expect_refused(register(&server, signed).await);
    assert_eq!(count().await, (1, 1));
    server.stop().await;
}

/// An agent registered before wallet proofs existed (a row written without the new columns)
/// is unproven and ungranted: having named a listed wallet then confers nothing now.
#[tokio::test]
async fn agents_from_before_are_unproven_and_ungranted() {
    let server = start().await;
    let (status, issued) = server
        .admin_post(
            "/v1/admin/apikeys",
            &json!({"wallet": oracle_wallet().address, "name": "old"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{issued}");
    let id = format!("ag_{}", "ab".repeat(16));
    let db = server.db.store.db();
    db.execute_unprepared(&format!(
        "INSERT INTO agents (id, name, description, wallet_address, api_key_id, created_at) \
         VALUES ('{id}', 'old', NULL, '{}', '{}', 1)",
        oracle_wallet().address,
        issued["id"].as_str().unwrap(),
    ))
    .await
    .unwrap();
    let row = agents::Entity::find_by_id(id.clone())
        .one(db)
        .await
        .unwrap()
        .unwrap();
    assert!(!row.wallet_proven);
    assert_eq!(
        (
            row.oracle_granted_at,
            row.oracle_granted_by,
            row.oracle_revoked_at
        ),
        (None, None, None)
    );
    let key = issued["key"].as_str().unwrap();
    assert_eq!(resolve_unknown(&server, key).await.0, StatusCode::FORBIDDEN);
    // An operator's grant is how it becomes an oracle again.
    assert_eq!(
        set_authority(&server, Method::POST, &id).await.0,
        StatusCode::OK
    );
    assert_eq!(resolve_unknown(&server, key).await.0, StatusCode::NOT_FOUND);
    server.stop().await;
}

/// A verdict already past the route's check when its agent is revoked: the verdict's own
/// transaction asks again, so a revocation that answered first stops it (here the verdict is
/// recorded directly, as a request that passed the check before the revocation would).
#[tokio::test]
async fn a_verdict_recorded_after_a_revocation_is_refused() {
    use narrative_api::domain::agents::resolve::{record, Resolver, Verdict};
    use narrative_api::values::{Confidence, NarrativeSide};
    use narrative_store::entities::narratives;
    use sea_orm::{ActiveModelTrait, IntoActiveModel};

    let server = start().await;
    let (status, registered) = register(
        &server,
        json!({"wallet_address": SigningWallet::new(42).address, "name": "resolver"}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{registered}");
    let agent_id = registered["agent"]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        set_authority(&server, Method::POST, &agent_id).await.0,
        StatusCode::OK
    );
    // The same deployment's state, as the request handling a verdict holds it.
    let config = common::test_config(|_| {});
    let providers = narrative_api::Providers::with_clock(&config, server.clock.clone()).unwrap();
    let state =
        narrative_api::AppState::from_config_with(server.db.store.clone(), &config, providers)
            .await
            .unwrap();
    let now = server.clock.now();
    let mut open = Vec::new();
    for title in ["First", "Second"] {
        let id = uuid::Uuid::new_v4();
        common::fixtures::narrative(
            &id,
            &SigningWallet::new(43).address,
            title,
            "crypto",
            "open",
            now,
        )
        .into_active_model()
        .insert(server.db.store.db())
        .await
        .unwrap();
        open.push(id.to_string());
    }
    let verdict = |id: &str| Verdict {
        narrative_id: id.parse().unwrap(),
        outcome: NarrativeSide::Yes,
        evidence: None,
        confidence: Confidence::new(0.9).unwrap(),
    };
    let db = server.db.store.db().clone();
    let status_of = |id: String| {
        let db = db.clone();
        async move {
            narratives::Entity::find_by_id(id)
                .one(&db)
                .await
                .unwrap()
                .unwrap()
                .oracle_status
        }
    };
    // Granted: recorded.
    let recorded = record(&state, Resolver::Agent(&agent_id), verdict(&open[0]))
        .await
        .unwrap();
    assert_eq!(
        recorded.expect("open for resolution").as_str(),
        "resolved_true"
    );
    assert_eq!(status_of(open[0].clone()).await, "resolved_true");

    let (status, revoked) = set_authority(&server, Method::DELETE, &agent_id).await;
    assert_eq!(status, StatusCode::OK, "{revoked}");
    assert_eq!(revoked["changed"], true);
    let refused = record(&state, Resolver::Agent(&agent_id), verdict(&open[1]))
        .await
        .unwrap_err();
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(status_of(open[1].clone()).await, "open");
    server.stop().await;
}
