//! The narrative feed and single read over HTTP: every query parameter, the caps, the
//! wrapping, and backing totals from the index.

mod common;

use common::TestServer;
use narrative_store::entities::{jobs, narratives};
use reqwest::StatusCode;
use sea_orm::{ActiveModelTrait, EntityTrait, IntoActiveModel};
use serde_json::{json, Value};

const CREATOR: &str = "C9QjHcuPyyncqkpSqKdQpFJjUNTgbwmbEN4GeGUoSpjN";
const BACKER: &str = "11111111111111111111111111111111";

fn narrative(
    i: u32,
    category: &str,
    tag: &str,
    created_at: i64,
    status: &str,
) -> narratives::Model {
    let id = uuid::Uuid::from_u128(0x4000_0000_0000_4000_8000_0000_0000_0000 | i as u128);
    let mut n =
        common::fixtures::narrative(&id, CREATOR, &format!("N{i}"), category, status, created_at);
    n.sub_category = i.is_multiple_of(2).then(|| "L2".to_owned());
    n.asset_tag = i.is_multiple_of(3).then(|| "SOL".to_owned());
    n.deadline_at = created_at + 30 * 86_400;
    n.deadline_tag = tag.into();
    n
}

fn titles(body: &Value) -> Vec<String> {
    body["narratives"]
        .as_array()
        .unwrap_or_else(|| panic!("{body}"))
        .iter()
        .map(|n| n["title"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_feed_filters_sorts_caps_and_reads_totals_from_the_index() {
    let server = TestServer::start(|_| {}).await;
    let db = server.db.store.db();
    let now = chrono::Utc::now().timestamp();
    // 110 old ONCHAIN/LONG narratives, then 5 recent ones in other categories and tags.
    for i in 0..110u32 {
        narrative(i, "ONCHAIN", "LONG", now - 30 * 86_400 + i as i64, "open")
            .into_active_model()
            .insert(db)
            .await
            .unwrap();
    }
    let recent = [
        (200, "SPORTS", "SHORT"),
        (201, "SPORTS", "LONG"),
        (202, "MACRO", "SHORT"),
        (203, "SPORTS", "SHORT"),
        (204, "MACRO", "SHORT"),
    ];
    for (k, (i, category, tag)) in recent.iter().enumerate() {
        narrative(*i, category, tag, now - 3_600 + k as i64, "live")
            .into_active_model()
            .insert(db)
            .await
            .unwrap();
    }
    narrative(300, "SPORTS", "SHORT", now, "resolved_true")
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
    // Markets with totals for N202 (3 SOL) and N5 (7 SOL); the backer holds N202 and N5.
    for (i, yes, no) in [
        (202u32, 2_000_000_000i64, 1_000_000_000i64),
        (5, 7_000_000_000, 0),
    ] {
        let n = narrative(i, "X", "X", 0, "open");
        common::fixtures::market(
            &format!("Market{i}"),
            &n.market_id,
            Some(&n.id),
            CREATOR,
            (yes, no),
            (2, 1),
        )
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
        common::fixtures::backing(
            &format!("Backing{i}"),
            &n.market_id,
            BACKER,
            "yes",
            10_000_000,
        )
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
    }
    // On N202 the backer also holds NO and the creator YES: two wallets, three backings.
    let n202 = narrative(202, "X", "X", 0, "open");
    for (k, (wallet, side)) in [(BACKER, "no"), (CREATOR, "yes")].into_iter().enumerate() {
        common::fixtures::backing(
            &format!("More{k}"),
            &n202.market_id,
            wallet,
            side,
            10_000_000,
        )
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
    }

    let (status, feed) = server.get("/v1/narratives/").await;
    assert_eq!(status, StatusCode::OK, "{feed}");
    assert!(feed.get("ok").is_none(), "a legacy read");
    let all = titles(&feed);
    assert_eq!(all.len(), 20, "default limit");
    assert_eq!(
        &all[..5],
        ["N204", "N203", "N202", "N201", "N200"],
        "newest first"
    );
    assert!(
        !all.contains(&"N300".to_owned()),
        "resolved narratives leave the feed"
    );
    let first = &feed["narratives"][2];
    assert_eq!(first["sol_backed"], 3.0);
    assert_eq!(first["backers"], 2, "distinct wallets, not backings");
    assert!(first["created_at"].as_str().unwrap().ends_with('Z'));

    assert_eq!(
        titles(&server.get("/v1/narratives/?limit=500").await.1).len(),
        100,
        "clamped to 100"
    );
    assert_eq!(
        titles(&server.get("/v1/narratives/?limit=0").await.1).len(),
        1,
        "clamped to 1"
    );
    assert_eq!(
        titles(&server.get("/v1/narratives/?limit=500&broad=true").await.1).len(),
        115
    );

    let sports = titles(&server.get("/v1/narratives/?category=sports").await.1);
    assert_eq!(sports, ["N203", "N201", "N200"]);
    let short_sports = titles(
        &server
            .get("/v1/narratives/?category=SPORTS&duration=short")
            .await
            .1,
    );
    assert_eq!(short_sports, ["N203", "N200"]);
    let l2 = titles(
        &server
            .get("/v1/narratives/?category=SPORTS&sub_category=L2")
            .await
            .1,
    );
    assert_eq!(l2, ["N200"]);
    let sol = titles(
        &server
            .get("/v1/narratives/?asset_tag=SOL&limit=100&sort=oldest")
            .await
            .1,
    );
    assert_eq!(
        sol.len(),
        (0..110u32).filter(|i| i.is_multiple_of(3)).count() + 2,
        "every third of 0..110, plus N201 and N204"
    );
    assert_eq!(sol[0], "N0");

    let new = titles(&server.get("/v1/narratives/?filter=new").await.1);
    assert_eq!(new, ["N204", "N203", "N202", "N201", "N200"]);
    let trending = titles(
        &server
            .get("/v1/narratives/?filter=trending&limit=3")
            .await
            .1,
    );
    assert_eq!(
        trending,
        ["N5", "N202", "N204"],
        "most SOL backed first, then newest"
    );
    let deadline = titles(&server.get("/v1/narratives/?sort=deadline&limit=2").await.1);
    assert_eq!(deadline, ["N0", "N1"]);

    let (status, counts) = server.get("/v1/narratives/filter-counts").await;
    assert_eq!(status, StatusCode::OK, "{counts}");
    assert_eq!(counts["total_active"], 115);
    assert_eq!(
        counts["categories"],
        json!({"ONCHAIN": 110, "SPORTS": 3, "MACRO": 2})
    );
    assert_eq!(counts["durations"], json!({"LONG": 111, "SHORT": 4}));
    assert_eq!(
        counts["sub_categories"]["L2"],
        55 + 3,
        "even i: 55 old, N200, N202, N204"
    );
    // N7's thesis is "N7: the thesis"; a reworded copy is close, a new claim is not.
    let (status, close) = server
        .post(
            "/v1/narratives/check-originality",
            &json!({"thesis": "N7 is the thesis"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{close}");
    assert_eq!(close["ok"], true);
    assert_eq!(
        close["similarity"], 1.0,
        "the same words once stop words are left out"
    );
    assert_eq!(close["suggested_category"], "ONCHAIN");
    let (_, fresh) = server
        .post(
            "/v1/narratives/check-originality",
            &json!({"thesis": "The Fed cuts rates as inflation cools"}),
        )
        .await;
    assert_eq!(fresh["similarity"], 0.0);
    assert_eq!(fresh["score"], 100.0);
    assert_eq!(fresh["suggested_category"], "MACRO");
    let (status, _) = server
        .post("/v1/narratives/check-originality", &json!({"thesis": "  "}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let hero = titles(&server.get("/v1/narratives/hero").await.1);
    assert_eq!(hero, ["N5", "N202", "N204", "N203", "N201"]);

    let (status, body) = server.get("/v1/narratives/?filter=backed").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "wallet required when filter=backed");
    let backed = titles(
        &server
            .get(&format!("/v1/narratives/?filter=backed&wallet={BACKER}"))
            .await
            .1,
    );
    assert_eq!(backed, ["N202", "N5"]);
    for bad in [
        "?category=WEATHER",
        "?filter=hot",
        "?sort=random",
        "?filter=backed&wallet=nope",
    ] {
        let (status, body) = server.get(&format!("/v1/narratives/{bad}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert_eq!(body["ok"], false);
    }
    server.stop().await;
}

#[tokio::test]
async fn the_single_read_is_wrapped_and_carries_the_market_gate() {
    let server = TestServer::start(|_| {}).await;
    let db = server.db.store.db();
    let now = chrono::Utc::now().timestamp();
    let mut pre = narrative(1, "MACRO", "SHORT", now, "open");
    pre.opens_at = Some(now + 86_400);
    pre.clone().into_active_model().insert(db).await.unwrap();
    let open = narrative(2, "MACRO", "SHORT", now, "open");
    open.clone().into_active_model().insert(db).await.unwrap();

    let (status, body) = server.get(&format!("/v1/narratives/{}", pre.id)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["narrative"]["id"], pre.id.as_str());
    assert_eq!(body["narrative"]["is_pre_market"], true);
    assert!(body["narrative"]["opens_at"]
        .as_str()
        .unwrap()
        .ends_with('Z'));
    assert_eq!(body["narrative"]["sol_backed"], 0.0);
    let (_, body) = server.get(&format!("/v1/narratives/{}", open.id)).await;
    assert_eq!(body["narrative"]["is_pre_market"], false);
    assert_eq!(body["narrative"]["opens_at"], Value::Null);

    let (status, _) = server
        .get(&format!("/v1/narratives/{}", uuid::Uuid::new_v4()))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = server.get("/v1/narratives/not-a-uuid").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    server.stop().await;
}

/// The public read says the settlement gave up, not why: the job's error is the node's, the
/// database's or the keeper's own words (the queue page shows it to operators).
#[tokio::test]
async fn a_settlement_that_gave_up_shows_as_failed_without_its_error() {
    let server = TestServer::start(|_| {}).await;
    let db = server.db.store.db();
    let n = narrative(7, "ONCHAIN", "SHORT", 1_790_000_000, "resolved_false");
    n.clone().into_active_model().insert(db).await.unwrap();
    let (status, missing) = server
        .get(&format!(
            "/v1/narratives/{}/settlement",
            uuid::Uuid::new_v4()
        ))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
    // The job ran out of attempts (e.g. the oracle key has no SOL for fees). Queued far in the
    // future, so the server's worker cannot take it before it is marked dead here.
    let job = narrative_api::jobs::enqueue(
        db,
        &narrative_api::jobs::settle_narrative::SettleNarrative {
            narrative_id: n.id.parse().unwrap(),
            market_id: n.market_id.parse().unwrap(),
            outcome: false,
            confidence_bps: 9_000,
        },
        1_790_000_000,
        i64::MAX / 2,
    )
    .await
    .unwrap();
    let mut dead = jobs::Entity::find_by_id(job)
        .one(db)
        .await
        .unwrap()
        .unwrap()
        .into_active_model();
    dead.status = sea_orm::ActiveValue::Set("dead".into());
    dead.attempts = sea_orm::ActiveValue::Set(8);
    dead.last_error = sea_orm::ActiveValue::Set(Some("oracle vote: insufficient funds".into()));
    dead.update(db).await.unwrap();
    let (status, body) = server
        .get(&format!("/v1/narratives/{}/settlement", n.id))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({
            "ok": true,
            "narrative_id": n.id,
            "oracle_status": "resolved_false",
            "settlement": {
                "stage": "failed",
                "job_status": "dead",
                "attempts": 8,
                "next_attempt_at": null,
                "outcome": null,
                "hold_ends_at": null,
                "finalized_at": null,
                "dispute": null,
            },
        })
    );
    // An operator cancels it instead of retrying: still failed, not voting for ever.
    assert!(narrative_api::jobs::queue::cancel(db, job, 1_790_000_100)
        .await
        .unwrap());
    let (_, body) = server
        .get(&format!("/v1/narratives/{}/settlement", n.id))
        .await;
    assert_eq!(body["settlement"]["stage"], "failed");
    assert_eq!(body["settlement"]["job_status"], "cancelled");
    server.stop().await;
}

/// Issue 27: while a dispute is open the settlement names when the operator may rule against
/// the outcome and when the dispute lapses; a finalized Yield market whose crucible share has
/// not left the losing vault yet says so, and says `finalized` once it has.
#[tokio::test]
async fn a_settlement_shows_a_pending_disputes_times_and_a_share_waiting_to_forward() {
    use narrative_api::clock::iso;
    use narrative_store::entities::disputes;
    let server = TestServer::start(|_| {}).await;
    let db = server.db.store.db();
    let n = narrative(8, "ONCHAIN", "SHORT", 1_790_000_000, "disputed");
    n.clone().into_active_model().insert(db).await.unwrap();
    let proposed_at = 1_790_100_000;
    let mut market = common::fixtures::market(
        "Market1111111111111111111111111111111111111",
        &n.market_id,
        Some(&n.id),
        CREATOR,
        (2_000_000_000, 1_000_000_000),
        (1, 1),
    );
    market.oracle_status = 3;
    market.outcome = Some("yes".into());
    market.resolution_proposed_at = proposed_at;
    market.clone().into_active_model().insert(db).await.unwrap();
    let opened_at = proposed_at + 3_600;
    let dispute = disputes::Model {
        address: "Dispute111111111111111111111111111111111111".into(),
        market_id: n.market_id.clone(),
        disputer: "Disputer11111111111111111111111111111111111".into(),
        status: "open".into(),
        bond_lamports: 1_000_000_000,
        opened_at,
        settled_at: 0,
        dispute_count: 1,
        bond_forwarded: false,
        slot: 6,
        write_version: 1,
        closed: false,
    };
    dispute
        .clone()
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
    // Queued far in the future, so the server's worker leaves it alone.
    narrative_api::jobs::enqueue(
        db,
        &narrative_api::jobs::settle_narrative::SettleNarrative {
            narrative_id: n.id.parse().unwrap(),
            market_id: n.market_id.parse().unwrap(),
            outcome: true,
            confidence_bps: 9_000,
        },
        1_790_000_000,
        i64::MAX / 2,
    )
    .await
    .unwrap();
    let url = format!("/v1/narratives/{}/settlement", n.id);
    let (status, body) = server.get(&url).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let settlement = &body["settlement"];
    assert_eq!(settlement["stage"], "disputed");
    assert_eq!(
        settlement["dispute"],
        json!({
            "disputer": dispute.disputer,
            "bond_sol": 1.0,
            "opened_at": iso(opened_at),
            "ruling_from": iso(opened_at + 86_400),
            "lapses_at": iso(proposed_at + 172_800 + 604_800),
        })
    );

    // Upheld and finalized; the crucible share has not been forwarded yet.
    let mut upheld = dispute.into_active_model();
    upheld.status = sea_orm::ActiveValue::Set("upheld".into());
    upheld.update(db).await.unwrap();
    let mut finalized = market.into_active_model();
    finalized.oracle_status = sea_orm::ActiveValue::Set(1);
    finalized.finalized = sea_orm::ActiveValue::Set(true);
    finalized.crucible_amount = sea_orm::ActiveValue::Set(175_000_000);
    let finalized = finalized.update(db).await.unwrap();
    let (_, body) = server.get(&url).await;
    assert_eq!(body["settlement"]["stage"], "share_pending_forward");
    assert_eq!(body["settlement"]["dispute"], Value::Null);
    let mut forwarded = finalized.into_active_model();
    forwarded.crucible_forwarded = sea_orm::ActiveValue::Set(true);
    forwarded.update(db).await.unwrap();
    let (_, body) = server.get(&url).await;
    assert_eq!(body["settlement"]["stage"], "finalized");
    server.stop().await;
}
