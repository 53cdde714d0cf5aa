//! Agents over HTTP: registration (201, the key once, about 5 per hour per IP), the feed
//! (narratives in open/live/pending, newest first, at most 50, totals from the indexed market,
//! about 60 per minute per key), with the spec's refusals.

mod common;

use common::{clock_at_hour_start, SigningWallet, TestServer};
use narrative_store::entities::{backings, markets, narratives};
use reqwest::StatusCode;
use sea_orm::{ActiveModelTrait, EntityTrait, IntoActiveModel};
use serde_json::{json, Value};

const WALLET: &str = "C9QjHcuPyyncqkpSqKdQpFJjUNTgbwmbEN4GeGUoSpjN";

fn narrative(i: u32, oracle_status: &str, created_at: i64) -> narratives::Model {
    let id = uuid::Uuid::from_u128(0x4000_0000_0000_4000_8000_0000_0000_0000 | i as u128);
    let mut n = common::fixtures::narrative(
        &id,
        WALLET,
        &format!("Narrative {i}"),
        "ONCHAIN",
        oracle_status,
        created_at,
    );
    n.thesis = format!("Thesis {i} resolves YES");
    n
}

fn market_for(n: &narratives::Model, yes: i64, no: i64) -> markets::Model {
    let address = format!("Market{}", &n.market_id[..32]);
    let mut market = common::fixtures::market(
        &address,
        &n.market_id,
        Some(&n.id),
        WALLET,
        (yes, no),
        (2, 1),
    );
    market.created_at = n.created_at;
    market.deadline = n.deadline_at;
    market
}

async fn feed(server: &TestServer, key: &str) -> (StatusCode, Value) {
    server.key_get("/v1/agent/feed", key).await
}

#[tokio::test]
async fn registration_issues_a_working_key_once_and_is_limited_per_ip() {
    let server = TestServer::start_at(clock_at_hour_start(), |_| {}).await;
    let body = json!({"wallet_address": WALLET, "name": "scout", "description": "reads the feed"});
    let (status, registered) = server.post("/v1/agent/register", &body).await;
    assert_eq!(status, StatusCode::CREATED, "{registered}");
    let agent = &registered["agent"];
    assert!(agent["id"].as_str().unwrap().starts_with("ag_"));
    assert_eq!(agent["name"], "scout");
    assert_eq!(agent["wallet_address"], WALLET);
    let key = agent["api_key"].as_str().unwrap();
    assert!(narrative_api::domain::keys::well_formed(key), "{key}");
    let (status, answer) = feed(&server, key).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer, json!({"ok": true, "narratives": []}));

    let (status, answer) = server
        .post(
            "/v1/agent/register",
            &json!({"wallet_address": "nope", "name": "x"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(answer["ok"], false);

    // A malformed request is refused before it counts: four more make five, and the sixth is
    // refused until the hour turns.
    for _ in 0..4 {
        let (status, _) = server.post("/v1/agent/register", &body).await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let response = server
        .http
        .post(server.url("/v1/agent/register"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = response.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        retry_after, 3_600,
        "the clock stands at the start of the hour"
    );
    let refused: Value = response.json().await.unwrap();
    assert_eq!(refused["error"], "rate_limit_exceeded");
    assert!(refused["resets_at"].as_str().unwrap().ends_with('Z'));
    server.stop().await;
}

#[tokio::test]
async fn the_feed_lists_open_narratives_newest_first_with_market_totals() {
    // A Pro key, so the feed's own limit is what refuses: paid tiers issued.
    let server = TestServer::start_at(clock_at_hour_start(), |c| c.paid_tiers_active = true).await;
    let db = server.db.store.db();
    let base = 1_790_000_000;
    for i in 0..55u32 {
        let n = narrative(
            i,
            ["open", "live", "pending"][i as usize % 3],
            base + i as i64,
        );
        if i == 54 {
            market_for(&n, 3_000_000_000, 1_500_000_000)
                .into_active_model()
                .insert(db)
                .await
                .unwrap();
            // Four backings by three wallets: one holds both sides and counts once.
            for (k, (wallet, side)) in [("A", "yes"), ("A", "no"), ("B", "yes"), ("C", "no")]
                .into_iter()
                .enumerate()
            {
                common::fixtures::backing(&format!("Feed{k}"), &n.market_id, wallet, side, 1)
                    .into_active_model()
                    .insert(db)
                    .await
                    .unwrap();
            }
        }
        n.into_active_model().insert(db).await.unwrap();
    }
    for (i, state) in [(100u32, "resolved_true"), (101, "resolved_false")] {
        narrative(i, state, base + 1_000)
            .into_active_model()
            .insert(db)
            .await
            .unwrap();
    }
    let (status, answer) = server
        .admin_post(
            "/v1/admin/apikeys",
            &json!({"tier": "pro", "name": "feed reader"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let key = answer["key"].as_str().unwrap().to_owned();

    let (status, answer) = feed(&server, &key).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let items = answer["narratives"].as_array().unwrap();
    assert_eq!(items.len(), 50, "capped at 50");
    assert_eq!(
        items[0]["title"], "Narrative 54",
        "newest first, resolved ones left out"
    );
    assert_eq!(items[0]["total_backed_sol"], 4.5);
    assert_eq!(items[0]["backer_count"], 3);
    assert_eq!(items[0]["challenge_count"], 0);
    assert_eq!(items[1]["total_backed_sol"], 0.0);
    assert_eq!(items[49]["title"], "Narrative 5");
    for item in items {
        assert!(["open", "live", "pending"].contains(&item["oracle_status"].as_str().unwrap()));
    }

    // The feed's own limit: 60 per minute per key (this Pro key's tier allows 300).
    for _ in 1..60 {
        assert_eq!(feed(&server, &key).await.0, StatusCode::OK);
    }
    let (status, refused) = feed(&server, &key).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{refused}");
    assert_eq!(refused["error"], "rate_limit_exceeded");

    let (status, answer) = feed(&server, "nms_abcd_not-a-key").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        answer,
        json!({"ok": false, "error": "Invalid or missing API key"})
    );
    let response = server
        .http
        .get(server.url("/v1/agent/feed"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    server.stop().await;
}

#[tokio::test]
async fn portfolio_history_and_the_leaderboard_read_the_agents_backings() {
    let server =
        TestServer::start_at(clock_at_hour_start(), |c| c.sol_usd_price = Some(100.0)).await;
    let db = server.db.store.db();
    // Wallets proven by their signatures: the board ranks only those.
    let (alpha, beta) = (SigningWallet::new(31), SigningWallet::new(32));
    let (wallet_a, wallet_b) = (alpha.address.as_str(), beta.address.as_str());
    let now = server.clock.now();
    let mut keys = Vec::new();
    for (wallet, name) in [(&alpha, "alpha"), (&beta, "beta")] {
        let (status, body) = server
            .post(
                "/v1/agent/register",
                &common::signed_agent_registration(wallet, name, now),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        keys.push(body["agent"]["api_key"].as_str().unwrap().to_owned());
    }
    // An agent that merely names alpha's wallet (a label) is not ranked with its record.
    let (status, body) = server
        .post(
            "/v1/agent/register",
            &json!({"wallet_address": wallet_a, "name": "impostor"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let n = narrative(7, "open", 1_790_000_000);
    n.clone().into_active_model().insert(db).await.unwrap();
    market_for(&n, 0, 0)
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
    // alpha: one open 0.2 SOL backing on N7, one claimed (1 SOL staked, 1.5 paid); beta: one
    // claimed loss (0.5 staked, 0 paid).
    for (k, (backer, market_id, amount, claimed, payout)) in [
        (wallet_a, n.market_id.clone(), 200_000_000i64, false, 0i64),
        (
            wallet_a,
            "aa".repeat(32),
            1_000_000_000,
            true,
            1_500_000_000,
        ),
        (wallet_b, "bb".repeat(32), 500_000_000, true, 0),
    ]
    .into_iter()
    .enumerate()
    {
        let mut backing =
            common::fixtures::backing(&format!("Backing{k}"), &market_id, backer, "yes", amount);
        backing.claimed = claimed;
        backing.payout = payout;
        backing.first_backed_at += k as i64;
        backing.last_backed_at += k as i64;
        backing.into_active_model().insert(db).await.unwrap();
    }
    let get = |path: &'static str, key: String| {
        let server = &server;
        async move { server.key_get(path, &key).await }
    };
    let (status, portfolio) = get("/v1/agent/portfolio", keys[0].clone()).await;
    assert_eq!(status, StatusCode::OK, "{portfolio}");
    assert_eq!(portfolio["wallet_address"], wallet_a);
    let positions = portfolio["positions"].as_array().unwrap();
    assert_eq!(
        positions.len(),
        1,
        "claimed backings are not open positions"
    );
    assert_eq!(positions[0]["narrative_id"], n.id.as_str());
    assert_eq!(positions[0]["amount_sol"], 0.2);
    assert_eq!(positions[0]["usd_equivalent"], 20.0);
    assert_eq!(positions[0]["yield_type"], "yield");
    assert_eq!(
        positions[0]["narratives"],
        json!({"title": "Narrative 7", "oracle_status": "open"})
    );

    let (_, history) = get("/v1/agent/history", keys[0].clone()).await;
    let backings = history["backings"].as_array().unwrap();
    assert_eq!(backings.len(), 2);
    assert_eq!(backings[0]["claimed"], true, "newest first");

    let (status, board) = server.get("/v1/agent/leaderboard").await;
    assert_eq!(status, StatusCode::OK);
    let board = board["leaderboard"].as_array().unwrap();
    assert_eq!(board.len(), 2, "{board:?}");
    assert_eq!(board[0]["name"], "alpha");
    assert_eq!(board[0]["total_pnl_sol"], 0.5);
    assert_eq!(board[0]["total_backings"], 2);
    assert_eq!(board[0]["total_volume_sol"], 1.2);
    assert_eq!(board[1]["name"], "beta");
    assert_eq!(board[1]["total_pnl_sol"], -0.5);
    let (_, page) = server.get("/v1/agent/leaderboard?limit=1&offset=1").await;
    assert_eq!(page["leaderboard"][0]["name"], "beta");
    assert_eq!(page["leaderboard"].as_array().unwrap().len(), 1);
    server.stop().await;
}

/// An agent may name any wallet, so the reads of its wallet's backings are capped in the query:
/// of 501 open backings the portfolio answers the 500 newest and the history the 100 newest.
#[tokio::test]
async fn portfolio_and_history_read_at_most_their_caps() {
    let server = TestServer::start_at(clock_at_hour_start(), |_| {}).await;
    let db = server.db.store.db();
    let whale = SigningWallet::new(33);
    let (status, body) = server
        .post(
            "/v1/agent/register",
            &json!({"wallet_address": whale.address, "name": "names-a-whale"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let key = body["agent"]["api_key"].as_str().unwrap().to_owned();
    let rows = (0..501i64).map(|k| {
        let mut backing = common::fixtures::backing(
            &format!("Whale{k:04}"),
            &format!("{k:064x}"),
            &whale.address,
            "yes",
            10_000_000 + k,
        );
        backing.last_backed_at += k;
        backing.into_active_model()
    });
    backings::Entity::insert_many(rows)
        .exec_without_returning(db)
        .await
        .unwrap();
    let (status, portfolio) = server.key_get("/v1/agent/portfolio", &key).await;
    assert_eq!(status, StatusCode::OK, "{portfolio}");
    let positions = portfolio["positions"].as_array().unwrap();
    assert_eq!(positions.len(), 500);
    let amount = |p: &Value| p["amount_sol"].as_f64().unwrap();
    assert_eq!(amount(&positions[0]), 0.010_000_5, "newest first");
    assert_eq!(
        amount(&positions[499]),
        0.010_000_001,
        "the oldest left out"
    );
    let (_, history) = server.key_get("/v1/agent/history", &key).await;
    let held = history["backings"].as_array().unwrap();
    assert_eq!(held.len(), 100);
    assert_eq!(amount(&held[0]), 0.010_000_5);
    assert_eq!(amount(&held[99]), 0.010_000_401);
    server.stop().await;
}
