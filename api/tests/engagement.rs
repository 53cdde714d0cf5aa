//! Missions, points, a user's backings, the terms and the waitlist over HTTP, from indexed rows
//! as the indexer writes them: every route's shape, caps and refusals, missions completed once
//! under concurrent checks, and points that add up row by row.

mod common;

use common::fixtures;
use common::TestServer;
use narrative_store::entities::{echo_allocations, echo_distributions, point_awards};
use reqwest::StatusCode;
use sea_orm::{ActiveModelTrait, EntityTrait, IntoActiveModel, PaginatorTrait};
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_signer::Signer;

const SOL: i64 = 1_000_000_000;

/// `wallet` backed `side` on `n` markets (their narratives' too) that settled with `outcomes`
/// in order (`None`: still open), each with `amount`.
async fn seed_results(
    server: &TestServer,
    wallet: &str,
    results: &[(Option<&str>, &str, i64)],
    first: u64,
) {
    let db = server.db.store.db();
    for (i, (outcome, side, amount)) in results.iter().enumerate() {
        let n = first + i as u64;
        let uuid = uuid::Uuid::from_u128(0x4000_0000_0000_4000_8000_0000_0000_0000 | n as u128);
        let market_id = hex::encode(narrative_sdk::market_id::market_id_from_uuid(&uuid));
        let mut market = fixtures::market(
            &format!("Market{n}"),
            &market_id,
            Some(&uuid.to_string()),
            "Creator1111111111111111111111111111111111",
            (SOL, SOL),
            (1, 1),
        );
        market.finalized = outcome.is_some();
        market.outcome = outcome.map(String::from);
        market.finalized_at = 1_790_000_000 + n as i64;
        market.oracle_status = i32::from(outcome.is_some());
        if market.into_active_model().insert(db).await.is_err() {
            // The market exists (another wallet's seed): only the backing is new.
        }
        let narrative = fixtures::narrative(
            &uuid,
            "Creator1111111111111111111111111111111111",
            &format!("Narrative {n}"),
            "ONCHAIN",
            "open",
            1_789_000_000,
        );
        let _ = narrative.into_active_model().insert(db).await;
        let mut backing = fixtures::backing(
            &format!("Backing{n}{wallet}"),
            &market_id,
            wallet,
            side,
            *amount,
        );
        backing.last_backed_at = 1_789_000_000 + n as i64;
        backing.into_active_model().insert(db).await.unwrap();
    }
}

fn sign(wallet: &Keypair, message: &str) -> String {
    bs58::encode(wallet.sign_message(message.as_bytes()).as_ref()).into_string()
}

async fn accept_terms(server: &TestServer, wallet: &Keypair) -> (StatusCode, Value) {
    let address = wallet.pubkey().to_string();
    let now = server.clock.now();
    let message = format!("narrative-market-service:terms:2026-11:{address}:issued-at:{now}");
    server
        .post(
            "/v1/terms/accept",
            &json!({"wallet": address, "signature": sign(wallet, &message), "issued_at": now}),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn missions_complete_once_however_many_checks_race_and_award_their_points() {
    let server = TestServer::start(|_| {}).await;
    let wallet = Keypair::new();
    let address = wallet.pubkey().to_string();
    // Five correct results in a row on five narratives, 2.5 SOL each: 12.5 SOL backed.
    seed_results(
        &server,
        &address,
        &[(Some("yes"), "yes", 5 * SOL / 2); 5],
        1,
    )
    .await;
    let (status, _) = accept_terms(&server, &wallet).await;
    assert_eq!(status, StatusCode::OK);

    let (status, before) = server.get(&format!("/v1/missions/{address}")).await;
    assert_eq!(status, StatusCode::OK, "{before}");
    let mission = |body: &Value, id: &str| {
        body["missions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["id"] == id)
            .cloned()
            .unwrap()
    };
    assert_eq!(mission(&before, "five_backings")["progress"], 5);
    assert_eq!(mission(&before, "explorer")["progress"], 5);
    assert_eq!(
        mission(&before, "skin_in_the_game")["progress"],
        12_500_000_000u64
    );
    assert_eq!(mission(&before, "streak_5")["progress"], 5);
    assert_eq!(mission(&before, "first_narrative")["progress"], 0);
    assert_eq!(mission(&before, "first_narrative")["progress_pct"], 0.0);
    assert_eq!(mission(&before, "three_narratives")["target"], 3);
    assert_eq!(mission(&before, "on_the_record")["progress"], 1);
    assert_eq!(before["completed"], 0);
    // Satisfied: first_backing, five_backings, explorer, skin_in_the_game, first_correct,
    // streak_3, streak_5, on_the_record.
    let satisfied = [
        "first_backing",
        "five_backings",
        "explorer",
        "skin_in_the_game",
        "first_correct",
        "streak_3",
        "streak_5",
        "on_the_record",
    ];
    assert_eq!(before["ready_to_complete"], satisfied.len());
    let points: u64 = satisfied
        .iter()
        .map(|id| mission(&before, id)["points"].as_u64().unwrap())
        .sum();
    let tickets: u64 = satisfied
        .iter()
        .map(|id| mission(&before, id)["tickets"].as_u64().unwrap())
        .sum();

    // Ten checks at once: each mission is completed by exactly one of them.
    let answers = concurrently(
        &server,
        10,
        &format!("/v1/missions/check/{address}"),
        json!({}),
    )
    .await;
    let mut completed: Vec<String> = Vec::new();
    let mut awarded = 0;
    for (status, body) in &answers {
        assert_eq!(*status, StatusCode::OK, "{body}");
        completed.extend(
            body["newly_completed"]
                .as_array()
                .unwrap()
                .iter()
                .map(|id| id.as_str().unwrap().to_owned()),
        );
        awarded += body["points_awarded"].as_u64().unwrap();
    }
    completed.sort();
    let mut expected: Vec<String> = satisfied.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(completed, expected, "each satisfied mission completed once");
    assert_eq!(awarded, points);

    let db = server.db.store.db();
    assert_eq!(
        point_awards::Entity::find().count(db).await.unwrap(),
        satisfied.len() as u64,
        "one award per mission"
    );
    let (_, standing) = server.get(&format!("/v1/points/{address}")).await;
    assert_eq!(standing["total_points"], points);
    assert_eq!(standing["by_reason"]["mission"], points);
    assert_eq!(standing["rank"], 1);
    assert_eq!(standing["awards_total"], satisfied.len());
    let listed: i64 = standing["awards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["points"].as_i64().unwrap())
        .sum();
    assert_eq!(listed as u64, points, "the awards add up to the total");
    let (_, feed) = server.get(&format!("/v1/notifications/{address}")).await;
    assert_eq!(feed["total"], satisfied.len(), "{feed}");
    assert!(feed["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .all(|n| n["type"] == "mission_completed"));
    assert_eq!(
        narrative_store::entities::ruffler_tickets::Entity::find()
            .count(db)
            .await
            .unwrap(),
        tickets
    );

    // A later check finds nothing new; the missions show their completion.
    let (_, again) = server
        .post(&format!("/v1/missions/check/{address}"), &json!({}))
        .await;
    assert_eq!(again["newly_completed"], json!([]));
    assert_eq!(again["points_awarded"], 0);
    let (_, after) = server.get(&format!("/v1/missions/{address}")).await;
    assert_eq!(after["completed"], satisfied.len());
    assert_eq!(after["ready_to_complete"], 0);
    assert_eq!(mission(&after, "streak_5")["completed"], true);
    assert!(mission(&after, "streak_5")["completed_at"].is_string());
    assert_eq!(mission(&after, "first_narrative")["completed"], false);

    // A malformed wallet is a 400 in the envelope.
    let (status, body) = server.post("/v1/missions/check/nope", &json!({})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["ok"], false);
    server.stop().await;
}

/// `n` POSTs of `body` to `path` at once, each on a task of its own (the runtime has several
/// threads), so the server sees them race.
async fn concurrently(
    server: &TestServer,
    n: usize,
    path: &str,
    body: Value,
) -> Vec<(StatusCode, Value)> {
    let mut requests = tokio::task::JoinSet::new();
    for _ in 0..n {
        let (http, url, body) = (server.http.clone(), server.url(path), body.clone());
        requests.spawn(async move {
            let response = http.post(url).json(&body).send().await.expect("request");
            let status = response.status();
            (status, response.json().await.unwrap_or(Value::Null))
        });
    }
    requests.join_all().await
}

#[tokio::test]
async fn the_missions_leaderboard_sorts_by_each_figure() {
    let server = TestServer::start(|_| {}).await;
    let (busy, sharp, lucky) = (Keypair::new(), Keypair::new(), Keypair::new());
    // busy: one backing, terms accepted → 2 missions; sharp: three correct results → 3
    // missions (first backing, first correct, streak of 3) and a higher score; lucky: one Echo
    // Pool share, nothing else.
    seed_results(
        &server,
        &busy.pubkey().to_string(),
        &[(None, "yes", SOL)],
        1,
    )
    .await;
    accept_terms(&server, &busy).await;
    seed_results(
        &server,
        &sharp.pubkey().to_string(),
        &[(Some("no"), "no", SOL); 3],
        10,
    )
    .await;
    for wallet in [&busy, &sharp] {
        let (status, _) = server
            .post(
                &format!("/v1/missions/check/{}", wallet.pubkey()),
                &json!({}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    let db = server.db.store.db();
    echo_distributions::Model {
        epoch_address: "Epoch1111111111111111111111111111111111111".into(),
        mint: None,
        epoch_number: 3,
        window_start: 0,
        window_end: 10,
        available: SOL,
        conviction_pool: SOL,
        creator_pool: 0,
        merkle_root: "00".repeat(32),
        status: "closed".into(),
        computed_at: 10,
        closed_at: Some(10),
        close_signature: None,
        claimable_at: Some(20),
        claim_deadline: Some(30),
        rolled_over_at: None,
    }
    .into_active_model()
    .insert(db)
    .await
    .unwrap();
    echo_allocations::Model {
        epoch_address: "Epoch1111111111111111111111111111111111111".into(),
        wallet: lucky.pubkey().to_string(),
        epoch_number: 3,
        conviction_amount: SOL,
        creator_amount: 0,
        amount: SOL,
        proof: json!([]),
        detail: json!({}),
    }
    .into_active_model()
    .insert(db)
    .await
    .unwrap();

    let board = |sort: &'static str| {
        let server = &server;
        async move {
            let (status, body) = server
                .get(&format!("/v1/missions/leaderboard?{sort}"))
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            body
        }
    };
    let wallets = |body: &Value| -> Vec<String> {
        body["leaderboard"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["wallet_address"].as_str().unwrap().to_owned())
            .collect()
    };
    let by_missions = board("").await;
    assert_eq!(by_missions["sort"], "missions_completed");
    assert_eq!(by_missions["limit"], 50);
    assert_eq!(by_missions["total"], 3);
    assert_eq!(wallets(&by_missions)[0], sharp.pubkey().to_string());
    assert_eq!(by_missions["leaderboard"][0]["missions_completed"], 3);
    assert_eq!(by_missions["leaderboard"][1]["missions_completed"], 2);
    assert_eq!(by_missions["leaderboard"][0]["rank"], 1);
    let by_score = board("sort=conviction_score").await;
    assert_eq!(wallets(&by_score)[0], sharp.pubkey().to_string());
    assert_eq!(by_score["leaderboard"][0]["conviction_score"], 36.0);
    let by_epochs = board("sort=epoch_performance").await;
    assert_eq!(wallets(&by_epochs)[0], lucky.pubkey().to_string());
    assert_eq!(by_epochs["leaderboard"][0]["epoch_performance_sol"], 1.0);
    // Caps clamp, offsets page; an unknown sort is a 400.
    let capped = board("sort=epoch_performance&limit=100000&offset=1").await;
    assert_eq!(capped["limit"], 100);
    assert_eq!(capped["leaderboard"].as_array().unwrap().len(), 2);
    assert_eq!(capped["leaderboard"][0]["rank"], 2);
    let (status, body) = server.get("/v1/missions/leaderboard?sort=vibes").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // The points leaderboard ranks by total, ties by wallet.
    let (_, points) = server.get("/v1/points/leaderboard?limit=1").await;
    assert_eq!(points["total"], 2);
    assert_eq!(points["limit"], 1);
    assert_eq!(points["leaderboard"].as_array().unwrap().len(), 1);
    assert_eq!(
        points["leaderboard"][0]["wallet_address"],
        sharp.pubkey().to_string()
    );
    let (_, second) = server.get("/v1/points/leaderboard?offset=1").await;
    assert_eq!(second["leaderboard"][0]["rank"], 2);
    assert_eq!(
        second["leaderboard"][0]["wallet_address"],
        busy.pubkey().to_string()
    );
    let (_, standing) = server.get(&format!("/v1/points/{}", busy.pubkey())).await;
    assert_eq!(standing["rank"], 2);
    let (_, nobody) = server
        .get(&format!("/v1/points/{}", Keypair::new().pubkey()))
        .await;
    assert_eq!(
        (nobody["total_points"].as_i64(), nobody["rank"].is_null()),
        (Some(0), true)
    );
    server.stop().await;
}

#[tokio::test]
async fn a_users_backings_come_in_pages_with_their_totals() {
    let server = TestServer::start(|_| {}).await;
    let wallet = Keypair::new().pubkey().to_string();
    // Seven backings: won, lost, and open ones, 0.1 to 0.7 SOL.
    let results: Vec<(Option<&str>, &str, i64)> = (1..=7)
        .map(|i| {
            let outcome = match i % 3 {
                0 => Some("yes"),
                1 => Some("no"),
                _ => None,
            };
            (outcome, "yes", i * SOL / 10)
        })
        .collect();
    seed_results(&server, &wallet, &results, 1).await;
    let page = |query: String| {
        let server = &server;
        let wallet = wallet.clone();
        async move {
            let (status, body) = server
                .get(&format!("/v1/users/{wallet}/backings{query}"))
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            body
        }
    };
    let first = page(String::new()).await;
    assert_eq!(first["total"], 7);
    assert_eq!(first["total_backed_sol"], 2.8);
    assert_eq!(
        (first["page"].as_u64(), first["limit"].as_u64()),
        (Some(1), Some(50))
    );
    let items = first["backings"].as_array().unwrap();
    assert_eq!(items.len(), 7);
    // Most recently backed first: market 7 (lost), 6 (won), 5 (open)…
    assert_eq!(items[0]["amount_sol"], 0.7);
    assert_eq!(items[0]["status"], "lost");
    assert_eq!(items[1]["status"], "won");
    assert_eq!(items[2]["status"], "open");
    assert_eq!(items[0]["side"], "true");
    assert_eq!(items[0]["title"], "Narrative 7");
    let second = page("?page=2&limit=3".into()).await;
    let amounts: Vec<f64> = second["backings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["amount_sol"].as_f64().unwrap())
        .collect();
    assert_eq!(amounts, vec![0.4, 0.3, 0.2]);
    assert_eq!(second["total"], 7, "the total counts every page");
    let last = page("?page=3&limit=3".into()).await;
    assert_eq!(last["backings"].as_array().unwrap().len(), 1);
    let beyond = page("?page=9&limit=3".into()).await;
    assert_eq!(beyond["backings"], json!([]));
    // A page whose rows would start past what a database offset holds is as empty.
    let furthest = page(format!("?page={}&limit=3", i64::MAX)).await;
    assert_eq!(furthest["backings"], json!([]));
    assert_eq!(furthest["total"], 7);
    // Caps clamp: the page size stops at 200, a page below 1 is the first.
    let capped = page("?limit=100000&page=0".into()).await;
    assert_eq!(
        (capped["limit"].as_u64(), capped["page"].as_u64()),
        (Some(200), Some(1))
    );
    let (_, unseen) = server
        .get(&format!("/v1/users/{}/backings", Keypair::new().pubkey()))
        .await;
    assert_eq!(
        (
            unseen["total"].as_u64(),
            unseen["total_backed_sol"].as_f64()
        ),
        (Some(0), Some(0.0))
    );
    let (status, _) = server.get("/v1/users/nope/backings").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    server.stop().await;
}

/// A deployment that names itself (`WALLET_PROOF_DOMAIN`) words every message with its name,
/// says so where it says what to sign, and refuses a signature of the same statement under the
/// default name, which is what another deployment of the service collects: a proof a wallet gave
/// elsewhere is not replayed here.
#[tokio::test]
async fn a_deployment_that_names_itself_refuses_proofs_given_to_another() {
    let server = TestServer::start(|c| {
        c.terms_version = "v3".into();
        c.wallet_proof_domain = "app.example.org".into();
    })
    .await;
    let wallet = Keypair::new();
    let address = wallet.pubkey().to_string();
    let (_, current) = server.get("/v1/terms/current").await;
    assert_eq!(
        current["message_template"],
        "app.example.org:terms:v3:<wallet>:issued-at:<issued_at>"
    );
    let now = server.clock.now();
    let elsewhere = format!("narrative-market-service:terms:v3:{address}:issued-at:{now}");
    let (code, body) = server
        .post(
            "/v1/terms/accept",
            &json!({"wallet": address, "signature": sign(&wallet, &elsewhere), "issued_at": now}),
        )
        .await;
    assert_eq!(code, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"], "invalid_signature");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("`app.example.org:terms:v3:"),
        "the refusal says what to sign here: {body}"
    );
    let (_, status) = server.get(&format!("/v1/terms/status/{address}")).await;
    assert_eq!(status["accepted"], false);

    let here = format!("app.example.org:terms:v3:{address}:issued-at:{now}");
    let (code, body) = server
        .post(
            "/v1/terms/accept",
            &json!({"wallet": address, "signature": sign(&wallet, &here), "issued_at": now}),
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{body}");
    let (_, status) = server.get(&format!("/v1/terms/status/{address}")).await;
    assert_eq!(status["accepted"], true);

    // The served document words the messages it quotes as this deployment does.
    let (_, document) = server.get("/v1/openapi.json").await;
    let document = document.to_string();
    assert!(
        document.contains("app.example.org:terms:"),
        "the terms message"
    );
    assert!(
        document.contains("app.example.org:kyc-start:"),
        "the KYC message"
    );
    assert!(
        !document.contains("narrative-market-service:"),
        "no default-named message left"
    );
    server.stop().await;
}

#[tokio::test]
async fn terms_are_accepted_once_by_the_wallets_signature_of_the_current_version() {
    let server = TestServer::start(|c| c.terms_version = "v3".into()).await;
    let wallet = Keypair::new();
    let address = wallet.pubkey().to_string();
    let (_, current) = server.get("/v1/terms/current").await;
    assert_eq!(current["terms_version"], "v3");
    assert_eq!(
        current["message_template"],
        "narrative-market-service:terms:v3:<wallet>:issued-at:<issued_at>"
    );
    let (_, status) = server.get(&format!("/v1/terms/status/{address}")).await;
    assert_eq!(
        status,
        json!({"ok": true, "wallet": address, "accepted": false, "terms_version": "v3",
               "accepted_at": null, "accepted_version": null})
    );
    let now = server.clock.now();
    let message = format!("narrative-market-service:terms:v3:{address}:issued-at:{now}");
    // Another wallet's signature, a signature of another version, a stale version.
    let (code, body) = server
        .post(
            "/v1/terms/accept",
            &json!({"wallet": address, "signature": sign(&Keypair::new(), &message), "issued_at": now}),
        )
        .await;
    assert_eq!(code, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"], "invalid_signature");
    let stale = format!("narrative-market-service:terms:v2:{address}:issued-at:{now}");
    let (code, _) = server
        .post(
            "/v1/terms/accept",
            &json!({"wallet": address, "signature": sign(&wallet, &stale), "issued_at": now}),
        )
        .await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);
    let (code, body) = server
        .post(
            "/v1/terms/accept",
            &json!({"wallet": address, "signature": sign(&wallet, &stale), "issued_at": now,
                    "terms_version": "v2"}),
        )
        .await;
    assert_eq!(code, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        body["error"],
        "terms_version must be the current version v3"
    );
    // The message without its issued-at time (as it was signed before) proves nothing.
    let timeless = format!("narrative-market-service:terms:v3:{address}");
    let (code, _) = server
        .post(
            "/v1/terms/accept",
            &json!({"wallet": address, "signature": sign(&wallet, &timeless), "issued_at": now}),
        )
        .await;
    assert_eq!(code, StatusCode::UNAUTHORIZED);

    let (code, accepted) = server
        .post(
            "/v1/terms/accept",
            &json!({"wallet": address, "signature": sign(&wallet, &message), "issued_at": now,
                    "terms_version": "v3"}),
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{accepted}");
    assert_eq!(accepted["terms_version"], "v3");
    // The same proof twice is a replay; a new one answers the first acceptance.
    let (code, body) = server
        .post(
            "/v1/terms/accept",
            &json!({"wallet": address, "signature": sign(&wallet, &message), "issued_at": now}),
        )
        .await;
    assert_eq!(code, StatusCode::UNAUTHORIZED, "{body}");
    let later = now + 1;
    let again_message = format!("narrative-market-service:terms:v3:{address}:issued-at:{later}");
    let (code, again) = server
        .post(
            "/v1/terms/accept",
            &json!({"wallet": address, "signature": sign(&wallet, &again_message), "issued_at": later}),
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{again}");
    assert_eq!(
        again["accepted_at"], accepted["accepted_at"],
        "accepted once"
    );
    let (_, status) = server.get(&format!("/v1/terms/status/{address}")).await;
    assert_eq!(status["accepted"], true);
    assert_eq!(status["accepted_version"], "v3");
    assert_eq!(status["accepted_at"], accepted["accepted_at"]);
    // The conviction profile reports the same record.
    let (_, profile) = server.get(&format!("/v1/conviction/{address}")).await;
    assert_eq!(profile["terms_accepted"], true);
    assert_eq!(profile["terms_version"], "v3");
    assert_eq!(profile["terms_accepted_at"], accepted["accepted_at"]);
    // The document names the one version accepted.
    let (_, document) = server.get("/v1/openapi.json").await;
    assert_eq!(
        document["components"]["schemas"]["TermsAccept"]["properties"]["terms_version"]["enum"],
        json!(["v3", null])
    );
    server.stop().await;
}

/// `wallet`'s signed join of the waitlist (`body` gives the email and referrer).
fn signed_join(server: &TestServer, wallet: &Keypair, body: Value) -> Value {
    common::signed_waitlist_join(
        body,
        &wallet.pubkey().to_string(),
        server.clock.now(),
        |m| sign(wallet, m),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_waitlist_keeps_one_place_per_email_and_wallet() {
    let server = TestServer::start(|_| {}).await;
    let (signer, referrer) = (Keypair::new(), Keypair::new().pubkey().to_string());
    let wallet = signer.pubkey().to_string();
    let join = |body: Value| {
        let server = &server;
        async move { server.post("/v1/waitlist", &body).await }
    };
    let (code, first) = join(json!({"email": "Ada@Example.com"})).await;
    assert_eq!(code, StatusCode::OK, "{first}");
    assert_eq!(
        first,
        json!({"ok": true, "position": 1, "total": 1, "created": true, "referral": null})
    );
    let (code, second) = join(signed_join(&server, &signer, json!({"referrer": referrer}))).await;
    assert_eq!(code, StatusCode::OK, "{second}");
    assert_eq!(
        (
            second["position"].as_u64(),
            second["total"].as_u64(),
            second["referral"].as_str()
        ),
        (Some(2), Some(2), Some("recorded"))
    );
    // The same address in another case, or the same wallet with a new email: the place held,
    // answered only to the wallet that signs for it (an email proves nobody).
    let (code, again) = join(json!({"email": "ADA@example.COM"})).await;
    assert_eq!(code, StatusCode::OK);
    assert_eq!(
        (again["position"].as_u64(), again["created"].as_bool()),
        (None, Some(false))
    );
    let (_, again) = join(signed_join(
        &server,
        &signer,
        json!({"email": "new@example.com"}),
    ))
    .await;
    assert_eq!(
        (again["position"].as_u64(), again["created"].as_bool()),
        (Some(2), Some(false))
    );
    // Racing joins of one address write one row.
    let answers = concurrently(
        &server,
        6,
        "/v1/waitlist",
        json!({"email": "race@example.org"}),
    )
    .await;
    let created = answers
        .iter()
        .filter(|(_, body)| body["created"] == true)
        .count();
    assert_eq!(created, 1, "{answers:?}");
    assert!(answers
        .iter()
        .all(|(_, body)| (body["created"] == true) == (body["position"] == 3)));
    let (_, place) = server.get(&format!("/v1/waitlist/{wallet}")).await;
    assert_eq!(
        (place["position"].as_u64(), place["total"].as_u64()),
        (Some(2), Some(3))
    );
    let (code, _) = server
        .get(&format!("/v1/waitlist/{}", Keypair::new().pubkey()))
        .await;
    assert_eq!(code, StatusCode::NOT_FOUND);

    // Refusals, each in the envelope, writing nothing.
    for (body, error) in [
        (json!({}), "give an email, a wallet or both"),
        (
            json!({"email": null, "wallet": null}),
            "give an email, a wallet or both",
        ),
        (
            json!({"wallet": referrer, "referrer": referrer}),
            "a wallet cannot refer itself",
        ),
        (
            json!({"email": "someone@example.com", "referrer": referrer}),
            "a referrer is named by a joining wallet, with its signature",
        ),
        (
            json!({"email": "not an email"}),
            "invalid request body: email: must be an email address such as name@example.com",
        ),
        // The join has two fields of the kind the parse error names; the body shows which.
        (
            json!({"wallet": "nope"}),
            "invalid request body: wallet: must be a base58 public key of 32 bytes",
        ),
        (
            json!({"email": "someone@example.com", "referrer": "nope"}),
            "invalid request body: referrer: must be a base58 public key of 32 bytes",
        ),
    ] {
        let (code, refused) = join(body.clone()).await;
        assert_eq!(code, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(refused, json!({"ok": false, "error": error}), "{body}");
    }
    let (_, place) = server.get(&format!("/v1/waitlist/{wallet}")).await;
    assert_eq!(place["total"], 3);
    // The document says a join needs one of the two.
    let (_, document) = server.get("/v1/openapi.json").await;
    let rule = &document["components"]["schemas"]["WaitlistJoin"]["anyOf"];
    assert_eq!(rule[0]["required"], json!(["email"]));
    assert_eq!(rule[1]["required"], json!(["wallet"]));
    server.stop().await;
}

/// The waitlist links no email to a wallet in any answer, and a wallet joins (naming a
/// referrer) only by its own signature: requests that answered or wrote these before.
#[tokio::test]
async fn the_waitlist_leaks_no_identity_and_joins_a_wallet_by_its_signature() {
    let server = TestServer::start(|_| {}).await;
    let (owner, victim, attacker) = (Keypair::new(), Keypair::new(), Keypair::new());
    let (owner_address, victim_address, attacker_address) = (
        owner.pubkey().to_string(),
        victim.pubkey().to_string(),
        attacker.pubkey().to_string(),
    );
    let (code, joined) = server
        .post(
            "/v1/waitlist",
            &signed_join(&server, &owner, json!({"email": "owner@example.com"})),
        )
        .await;
    assert_eq!(code, StatusCode::OK, "{joined}");
    assert_eq!(joined["created"], true);
    let leaks = |body: &Value| {
        let text = body.to_string();
        text.contains("owner@example.com") || text.contains(&owner_address)
    };
    assert!(!leaks(&joined), "{joined}");

    // Before: the wallet's place answered its email.
    let (code, place) = server.get(&format!("/v1/waitlist/{owner_address}")).await;
    assert_eq!(code, StatusCode::OK, "{place}");
    assert!(place.get("email").is_none(), "{place}");
    assert!(!place.to_string().contains("owner@example.com"), "{place}");
    assert_eq!(place["wallet"], owner_address.as_str());
    // Before: joining with a listed email answered the wallet that joined with it.
    let (code, known) = server
        .post("/v1/waitlist", &json!({"email": "OWNER@example.com"}))
        .await;
    assert_eq!(code, StatusCode::OK, "{known}");
    // Nor its place, which the wallet's public place would have matched (both were 1).
    assert_eq!(
        known,
        json!({"ok": true, "position": null, "total": null, "created": false, "referral": null})
    );
    assert!(!leaks(&known), "{known}");

    // A join for another wallet without its signature (it wrote the entry, and the referrer
    // with it, before); with the attacker's signature; with the victim's signature of another
    // referrer; with a signature already used; and issued too long ago.
    let now = server.clock.now();
    let unsigned = json!({"wallet": victim_address, "referrer": attacker_address});
    let by_attacker = common::signed_waitlist_join(unsigned.clone(), &victim_address, now, |m| {
        sign(&attacker, m)
    });
    let mut other_referrer =
        common::signed_waitlist_join(json!({}), &victim_address, now, |m| sign(&victim, m));
    other_referrer["referrer"] = attacker_address.clone().into();
    let stale = common::signed_waitlist_join(unsigned.clone(), &victim_address, now - 301, |m| {
        sign(&victim, m)
    });
    let mut no_time = by_attacker.clone();
    no_time["issued_at"] = Value::Null;
    for attempt in [&unsigned, &by_attacker, &other_referrer, &stale, &no_time] {
        let (code, refused) = server.post("/v1/waitlist", attempt).await;
        assert_eq!(code, StatusCode::UNAUTHORIZED, "{attempt}: {refused}");
        assert_eq!(refused["error"], "invalid_signature", "{refused}");
    }
    let (code, _) = server.get(&format!("/v1/waitlist/{victim_address}")).await;
    assert_eq!(code, StatusCode::NOT_FOUND, "nothing was written");
    let (_, place) = server.get(&format!("/v1/waitlist/{owner_address}")).await;
    assert_eq!(place["total"], 1);

    // The victim's own signed join is taken, once.
    let own = common::signed_waitlist_join(json!({}), &victim_address, now, |m| sign(&victim, m));
    let (code, joined) = server.post("/v1/waitlist", &own).await;
    assert_eq!(code, StatusCode::OK, "{joined}");
    assert_eq!(
        (joined["position"].clone(), joined["created"].clone()),
        (json!(2), json!(true))
    );
    let (code, replayed) = server.post("/v1/waitlist", &own).await;
    assert_eq!(code, StatusCode::UNAUTHORIZED, "{replayed}");
    let entries = narrative_store::entities::waitlist_entries::Entity::find()
        .all(server.db.store.db())
        .await
        .unwrap();
    assert_eq!(entries.len(), 2);
    assert!(entries.iter().all(|e| e.referrer.is_none()), "{entries:?}");
    server.stop().await;
}
