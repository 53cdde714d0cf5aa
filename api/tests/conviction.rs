//! `GET /v1/conviction/:wallet` over HTTP from indexed markets and backings: results in the
//! order the markets settled, unresolved backings ignored, categories from the narratives, and
//! the zeroed profile for an unseen wallet.

mod common;

use common::TestServer;
use narrative_store::entities::backings;
use reqwest::StatusCode;
use sea_orm::{ActiveModelTrait, IntoActiveModel};
use serde_json::{json, Value};

const WALLET: &str = "C9QjHcuPyyncqkpSqKdQpFJjUNTgbwmbEN4GeGUoSpjN";

#[tokio::test]
async fn profiles_come_from_resolved_backings_in_settlement_order() {
    let server = TestServer::start(|_| {}).await;
    let db = server.db.store.db();
    // Markets settled at t = 1..=5 with these outcomes; the wallet backed these sides.
    // Settlement order W W L W W, the fourth (t=4) in SPORTS, one unsettled market besides.
    let cases = [
        (1, Some("yes"), "yes", "ONCHAIN"),
        (2, Some("no"), "no", "ONCHAIN"),
        (3, Some("yes"), "no", "ONCHAIN"),
        (4, Some("no"), "no", "SPORTS"),
        (5, Some("yes"), "yes", "ONCHAIN"),
        (6, None, "yes", "ONCHAIN"),
    ];
    // Inserted out of order: the profile must sort by settlement time.
    for (t, outcome, side, category) in cases.iter().rev() {
        let market_id = format!("{:064x}", t);
        let mut market = common::fixtures::market(
            &format!("Market{t}"),
            &market_id,
            None,
            WALLET,
            (1_000_000_000, 1_000_000_000),
            (1, 1),
        );
        market.finalized = outcome.is_some();
        market.outcome = outcome.map(String::from);
        market.finalized_at = 1_790_000_000 + t;
        market.into_active_model().insert(db).await.unwrap();
        backings::Model {
            address: format!("Backing{t}"),
            market_id: market_id.clone(),
            backer: WALLET.into(),
            side: (*side).into(),
            amount: 50_000_000,
            claimed: false,
            payout: 0,
            first_backed_at: 1_789_000_000,
            last_backed_at: 1_789_000_000,
            slot: 5,
            write_version: 1,
            closed: false,
        }
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
        let id = uuid::Uuid::from_u128(0x4000_0000_0000_4000_8000_0000_0000_0000 | *t as u128);
        {
            let mut n = common::fixtures::narrative(
                &id,
                WALLET,
                &format!("N{t}"),
                category,
                "open",
                1_789_000_000,
            );
            n.market_id = market_id;
            n
        }
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
    }

    let (status, profile) = server.get(&format!("/v1/conviction/{WALLET}")).await;
    assert_eq!(status, StatusCode::OK, "{profile}");
    assert!(
        profile.get("ok").is_none(),
        "a legacy read: the payload itself"
    );
    // W(10) W(12) L(-5) W(10) W(12) = 39: below 50.
    assert_eq!(profile["conviction_score"], 39.0);
    assert_eq!(profile["conviction_tier"], "initiate");
    assert_eq!(profile["correct_backings"], 4);
    assert_eq!(profile["incorrect_backings"], 1);
    assert_eq!(profile["accuracy_rate"], 80.0);
    assert_eq!(profile["current_streak"], 2);
    assert_eq!(profile["longest_streak"], 2);
    assert_eq!(profile["streak_multiplier"], 1.1);
    assert_eq!(profile["combined_multiplier"], 1.1);
    assert_eq!(profile["fee_pct"], 2.0);
    assert_eq!(profile["terms_accepted"], false);
    assert_eq!(
        profile["per_category_stats"],
        json!({
            "ONCHAIN": {"backed": 4, "correct": 3, "accuracy": 75.0},
            "SPORTS": {"backed": 1, "correct": 1, "accuracy": 100.0},
        })
    );

    let (status, unseen) = server
        .get("/v1/conviction/11111111111111111111111111111111")
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(unseen["conviction_tier"], "ember");
    assert_eq!(unseen["conviction_score"], 0.0);
    for field in [
        "conviction_multiplier",
        "streak_multiplier",
        "combined_multiplier",
    ] {
        assert_eq!(unseen[field], 1.0, "{field}");
    }
    assert_eq!(unseen["fee_pct"], 2.0);
    assert_eq!(unseen["per_category_stats"], json!({}));

    let (status, refused) = server.get("/v1/conviction/not-a-wallet").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(refused["ok"], false);
    server.stop().await;
}

#[tokio::test]
async fn creator_profiles_come_from_published_narratives_and_their_markets() {
    let server = TestServer::start(|_| {}).await;
    let db = server.db.store.db();
    let (_, unseen) = server
        .get(&format!("/v1/conviction/creator/{WALLET}"))
        .await;
    assert_eq!(
        unseen,
        json!({
            "wallet_address": WALLET,
            "creator_score": 0.0,
            "creator_tier": "ember",
            "creator_share_pct": 5.0,
            "total_creator_earnings_sol": 0.0,
            "narratives_submitted": 0,
            "narratives_resolved_true": 0,
            "narratives_pending": 0,
        })
    );
    // Two TRUE (30 and 3 outside backers: 20 + 20, 20 + 3), one FALSE (5 + 1), one open. The
    // creator's own stake is on every market and is not an outside backer; one outside wallet
    // holds both sides and counts once.
    let cases = [
        ("resolved_true", 30, Some(2_000_000_000i64)),
        ("resolved_true", 3, Some(400_000_000)),
        ("resolved_false", 1, Some(0)),
        ("open", 0, None),
    ];
    for (i, (status, outside, crucible)) in cases.into_iter().enumerate() {
        let id = uuid::Uuid::new_v4();
        let narrative = common::fixtures::narrative(
            &id,
            WALLET,
            "Creator's call",
            "MARKET",
            status,
            1_790_000_000,
        );
        let mut market = common::fixtures::market(
            &format!("CreatorMarket{i}"),
            &narrative.market_id,
            Some(&id.to_string()),
            WALLET,
            (5_000_000_000, 1_000_000_000),
            (outside + 1, 1),
        );
        market.finalized = crucible.is_some();
        market.crucible_amount = crucible.unwrap_or(0);
        let mut backings = vec![(WALLET.to_owned(), "yes")];
        backings.extend((0..outside).map(|k| (format!("Outside{i}x{k}"), "yes")));
        if outside > 0 {
            backings.push((format!("Outside{i}x0"), "no"));
        }
        for (k, (wallet, side)) in backings.iter().enumerate() {
            common::fixtures::backing(
                &format!("CreatorBacking{i}x{k}"),
                &narrative.market_id,
                wallet,
                side,
                10_000_000,
            )
            .into_active_model()
            .insert(db)
            .await
            .unwrap();
        }
        narrative.into_active_model().insert(db).await.unwrap();
        market.into_active_model().insert(db).await.unwrap();
    }
    let (status, profile) = server
        .get(&format!("/v1/conviction/creator/{WALLET}"))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(profile["creator_score"], 69.0, "{profile}");
    assert_eq!(profile["creator_tier"], "ember");
    assert_eq!(profile["creator_share_pct"], 5.0);
    // 5 % of the 2.4 SOL the creator's finalized markets sent to the Crucible.
    assert_eq!(profile["total_creator_earnings_sol"], 0.12);
    assert_eq!(profile["narratives_submitted"], 4);
    assert_eq!(profile["narratives_resolved_true"], 2);
    assert_eq!(profile["narratives_pending"], 1);
    let (status, body) = server.get("/v1/conviction/creator/not-a-wallet").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    server.stop().await;
}

/// Market `t` settled with `outcome`, created by [`WALLET`], `backers` on their sides.
async fn settled(server: &TestServer, t: i64, outcome: &str, backers: &[(&str, &str)]) {
    common::fixtures::settled(server.db.store.db(), WALLET, t, outcome, backers).await;
}

#[tokio::test]
async fn leaderboards_rank_wallets_by_score_in_pages() {
    let server = TestServer::start(|_| {}).await;
    // Five results: "A…" wins all (10+12+14+16+18 = 70), "B…" and "C…" win the first two and
    // lose the rest (22 - 15 = 7, floored at each step: 10, 22, 17, 12, 7), "D…" loses all (0).
    let (a, b, c, d) = (
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB",
        "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC",
        "DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD",
    );
    for t in 1..=5 {
        let tail = if t <= 2 { "yes" } else { "no" };
        settled(
            &server,
            t,
            "yes",
            &[(a, "yes"), (b, tail), (c, tail), (d, "no")],
        )
        .await;
    }
    let board = |query: &'static str| {
        let server = &server;
        async move {
            let (status, body) = server
                .get(&format!("/v1/conviction/leaderboard/conviction{query}"))
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            body
        }
    };
    let builds = || async {
        common::sample(
            &server.get_text("/metrics").await,
            "conviction_leaderboard_builds_total",
        )
        .expect("the ranking's metric")
    };
    let built_before = builds().await;
    let all = board("").await;
    assert_eq!(
        (all["limit"].as_u64(), all["offset"].as_u64()),
        (Some(50), Some(0))
    );
    assert_eq!(all["total"], 4);
    let ranked: Vec<(&str, f64)> = all["leaderboard"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["wallet_address"].as_str().unwrap(),
                e["conviction_score"].as_f64().unwrap(),
            )
        })
        .collect();
    // B and C tie: by wallet.
    assert_eq!(ranked, vec![(a, 70.0), (b, 7.0), (c, 7.0), (d, 0.0)]);
    assert_eq!(all["leaderboard"][0]["conviction_tier"], "ember");
    assert_eq!(all["leaderboard"][0]["current_streak"], 5);
    assert_eq!(all["leaderboard"][1]["accuracy_rate"], 40.0);
    let page = board("?limit=2&offset=1").await;
    assert_eq!(page["leaderboard"][0]["rank"], 2);
    assert_eq!(page["leaderboard"][0]["wallet_address"], b);
    assert_eq!(page["leaderboard"].as_array().unwrap().len(), 2);
    assert_eq!(board("?limit=0").await["limit"], 1);
    assert_eq!(board("?limit=5000&offset=-4").await["limit"], 100);
    assert_eq!(board("?offset=-4").await["offset"], 0);
    // Five pages (five keys of the response cache) cut from one ranking: a write landing
    // between them may add a scoring; five would mean none was shared.
    let built = builds().await - built_before;
    assert!(
        (1.0..5.0).contains(&built),
        "{built} scorings for five pages"
    );

    // Creators: two wallets with published narratives; a resolved TRUE one outranks none.
    let db = server.db.store.db();
    for (creator, status) in [(a, "resolved_true"), (b, "open")] {
        let id = uuid::Uuid::new_v4();
        common::fixtures::narrative(&id, creator, "Call", "MARKET", status, 1_790_000_000)
            .into_active_model()
            .insert(db)
            .await
            .unwrap();
    }
    let (_, creators) = server.get("/v1/conviction/leaderboard/creators").await;
    assert_eq!(creators["total"], 2, "{creators}");
    assert_eq!(creators["leaderboard"][0]["wallet_address"], a);
    assert_eq!(creators["leaderboard"][0]["creator_score"], 20.0);
    assert_eq!(creators["leaderboard"][0]["narratives_resolved_true"], 1);
    assert_eq!(creators["leaderboard"][1]["creator_tier"], "ember");
    server.stop().await;
}

/// A `MarketBacked` event by `backer` at the ledger time `timestamp`, as the indexer stores it.
fn backed_event(backer: &str, timestamp: i64, amount: u64, n: u32) -> narrative_store::EventRecord {
    use anchor_lang::Event;
    let event = narrative_sdk::binary_vault::events::MarketBacked {
        market_id: [n as u8; 32],
        backer: backer.parse().unwrap(),
        side: narrative_sdk::binary_vault::state::Side::Yes,
        amount,
        backing_amount: amount,
        yes_total: amount,
        no_total: 0,
        timestamp,
    };
    let mut raw = anchor_lang::event::EVENT_IX_TAG_LE.to_vec();
    raw.extend(event.data());
    narrative_store::EventRecord {
        event: narrative_sdk::decode::decode_event(&narrative_sdk::ids::BINARY_VAULT, &raw)
            .expect("the event decodes"),
        raw,
        slot: u64::from(n),
        signature: format!("Sig{n}"),
        tx_index: 0,
        instruction_index: 0,
        inner_index: 0,
    }
}

#[tokio::test]
async fn eruption_reads_the_streak_and_the_last_days_backings() {
    let server = TestServer::start(|_| {}).await;
    let (_, dormant) = server
        .get(&format!("/v1/conviction/eruption/{WALLET}"))
        .await;
    assert_eq!(dormant["state"], "dormant", "{dormant}");
    assert_eq!(dormant["next_milestone"], 3);
    assert_eq!(dormant["burst"]["active"], false);
    assert_eq!(dormant["last_backed_at"], Value::Null);

    // Five correct results in a row: erupting.
    for t in 1..=5 {
        settled(&server, t, "no", &[(WALLET, "no")]).await;
    }
    // Three backings in the last day (and one a week ago): a burst of 0.6 SOL.
    let now = chrono::Utc::now().timestamp();
    let batch = narrative_store::Batch {
        events: vec![
            backed_event(WALLET, now - 7 * 86_400, 1_000_000_000, 1),
            backed_event(WALLET, now - 3_600, 100_000_000, 2),
            backed_event(WALLET, now - 600, 200_000_000, 3),
            backed_event(WALLET, now - 60, 300_000_000, 4),
        ],
        ..Default::default()
    };
    server.db.store.write_batch("test", &batch).await.unwrap();
    let (status, erupting) = server
        .get(&format!("/v1/conviction/eruption/{WALLET}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{erupting}");
    assert_eq!(erupting["state"], "erupting");
    assert_eq!(erupting["erupting"], true);
    assert_eq!(erupting["current_streak"], 5);
    assert_eq!(erupting["next_milestone"], 10);
    assert_eq!(erupting["streak_multiplier"], 1.25);
    assert_eq!(
        erupting["burst"],
        json!({"active": true, "backings": 3, "backed_sol": 0.6, "window_hours": 24})
    );
    let last = chrono::DateTime::parse_from_rfc3339(erupting["last_backed_at"].as_str().unwrap())
        .unwrap()
        .timestamp();
    assert_eq!(last, now - 60);

    // A loss resets the streak: with the burst still on, the wallet is warming.
    settled(&server, 6, "yes", &[(WALLET, "no")]).await;
    let (_, warming) = server
        .get(&format!("/v1/conviction/eruption/{WALLET}"))
        .await;
    assert_eq!(warming["state"], "warming");
    assert_eq!(warming["current_streak"], 0);
    assert_eq!(warming["longest_streak"], 5);
    server.stop().await;
}

#[tokio::test]
async fn the_echo_pool_reads_answer_before_crucible_pool_is_indexed() {
    let server = TestServer::start(|_| {}).await;
    for path in [
        "/v1/conviction/epoch/current".to_owned(),
        format!("/v1/conviction/epoch/preview/{WALLET}"),
        format!("/v1/conviction/echo-pool/preview/{WALLET}"),
    ] {
        let (status, body) = server.get(&path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}: {body}");
        assert_eq!(body["error"], "echo_pool_not_found");
    }
    let (_, history) = server.get("/v1/conviction/epoch/history").await;
    assert_eq!(history, json!({"ok": true, "epochs": []}));
    let (_, mine) = server
        .get(&format!("/v1/conviction/echo-pool/history/{WALLET}"))
        .await;
    assert_eq!(mine["epochs"], json!([]));
    assert_eq!(mine["total_allocated_sol"], 0.0);
    let (status, claim) = server
        .post("/v1/conviction/echo-pool/claim", &json!({"wallet": WALLET}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{claim}");
    assert_eq!(claim["error"], "nothing_to_claim");
    // Halted, the claim answers 503 before anything else.
    let (status, _) = server
        .admin_post(
            "/v1/admin/system/halt",
            &json!({"component": "echo_pool", "halted": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, halted) = server
        .post("/v1/conviction/echo-pool/claim", &json!({"wallet": WALLET}))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{halted}");
    assert_eq!(halted["error"], "system_halted");
    server.stop().await;
}
