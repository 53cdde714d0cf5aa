//! `GET /v1/conviction/:wallet` over HTTP from indexed markets and backings: results in the
//! order the markets settled, unresolved backings ignored, categories from the narratives, and
//! the zeroed profile for an unseen wallet.

mod common;

use common::TestServer;
use narrative_store::entities::backings;
use reqwest::StatusCode;
use sea_orm::{ActiveModelTrait, IntoActiveModel};
use serde_json::json;

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
