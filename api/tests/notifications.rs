//! The in-app notification feed, each type produced by its real cause on a program-test bank:
//! backings of a wallet's narrative, a referred wallet's first backing, verdicts on narratives,
//! a dispute opened and upheld, settlements that build a streak, raise a tier and break the
//! streak, a payout, missions and announcements. Every notification is written once per event
//! and wallet (the follower replayed from the start writes nothing new), and a wallet marks its
//! feed read with its signature. The Echo Pool's types are produced in `echo_pool.rs`.

mod common;

use std::collections::BTreeMap;

use common::bank::BankLedger;
use common::chain::{self, run_indexed};
use common::{eventually, eventually_some, TestServer};
use integration_tests::harness::{HarnessOptions, DAY, SOL};
use narrative_sdk::binary_vault::state::{DisputeAction, Side};
use narrative_store::entities::{event_cursors, narratives};
use reqwest::StatusCode;
use sea_orm::{ActiveModelTrait, EntityTrait, IntoActiveModel, QueryOrder};
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_signer::Signer;

const AGENT_WALLET: &str = "C9QjHcuPyyncqkpSqKdQpFJjUNTgbwmbEN4GeGUoSpjN";

/// A Yield market on chain for a new narrative of `creator` (its row as publish writes it);
/// the narrative's id and the market id.
async fn narrative_market(
    server: &TestServer,
    ledger: &BankLedger,
    creator: &Keypair,
    title: &str,
) -> (uuid::Uuid, [u8; 32]) {
    let uuid = uuid::Uuid::new_v4();
    let market_id = narrative_sdk::market_id::market_id_from_uuid(&uuid);
    chain::create_yield_market(server, ledger, creator, market_id, DAY).await;
    common::fixtures::narrative(
        &uuid,
        &creator.pubkey().to_string(),
        title,
        "TECHNOLOGY",
        "open",
        chrono::Utc::now().timestamp(),
    )
    .into_active_model()
    .insert(server.db.store.db())
    .await
    .unwrap();
    (uuid, market_id)
}

async fn back(
    server: &TestServer,
    ledger: &BankLedger,
    wallet: &Keypair,
    market: &[u8; 32],
    side: Side,
    amount: u64,
) {
    let ix = narrative_sdk::binary::back_market(wallet.pubkey(), market, side, amount);
    run_indexed(server, ledger, &[ix], &[wallet]).await;
}

/// `wallet` joins the waitlist by its signature, naming `referrer`; the answer.
async fn join_waitlist(server: &TestServer, wallet: &Keypair, referrer: &Keypair) -> Value {
    let body = common::signed_waitlist_join(
        json!({"referrer": referrer.pubkey().to_string()}),
        &wallet.pubkey().to_string(),
        server.clock.now(),
        |message| wallet.sign_message(message.as_bytes()).to_string(),
    );
    let (status, joined) = server.post("/v1/waitlist", &body).await;
    assert_eq!(status, StatusCode::OK, "{joined}");
    joined
}

/// The one oracle votes `side` on `market` (after its deadline).
async fn vote(server: &TestServer, ledger: &BankLedger, market: &[u8; 32], side: Side) {
    let oracle = ledger.harness.lock().await.oracles[0].insecure_clone();
    let ix = narrative_sdk::binary::submit_oracle_resolution(oracle.pubkey(), market, side, 9_000);
    run_indexed(server, ledger, &[ix], &[&oracle]).await;
}

async fn finalize(server: &TestServer, ledger: &BankLedger, market: &[u8; 32]) {
    // Ten seconds apart, so the settlements have an order of their own.
    ledger.harness.lock().await.warp_by(10).await;
    let ix = narrative_sdk::binary::finalize_resolution(market);
    run_indexed(server, ledger, &[ix], &[]).await;
}

async fn feed(server: &TestServer, wallet: &Keypair) -> Value {
    let (status, body) = server
        .get(&format!("/v1/notifications/{}?limit=200", wallet.pubkey()))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// How many notifications of each type the wallet has.
async fn counts(server: &TestServer, wallet: &Keypair) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for n in feed(server, wallet).await["notifications"]
        .as_array()
        .unwrap()
    {
        *counts
            .entry(n["type"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    counts
}

fn expect(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, n)| ((*k).to_owned(), *n)).collect()
}

#[tokio::test]
async fn every_cause_writes_its_notification_once() {
    let options = HarnessOptions {
        threshold: 1,
        wallets: 6,
        ..Default::default()
    };
    let (server, ledger) = chain::start_on_bank_with(options, |_, _| {}).await;
    let [a, b, c, creator, referrer] = {
        let h = ledger.harness.lock().await;
        [0, 1, 2, 3, 4].map(|i| h.wallets[i].insecure_clone())
    };

    // a joined the waitlist on the referrer's word.
    let joined = join_waitlist(&server, &a, &referrer).await;
    assert_eq!(joined["referral"], "recorded", "{joined}");

    // The creator's two narratives; a and b back the first, c the second.
    let (first, m1) = narrative_market(&server, &ledger, &creator, "Kestrel ships").await;
    let (second, m2) = narrative_market(&server, &ledger, &creator, "Osprey ships").await;
    back(&server, &ledger, &a, &m1, Side::Yes, 2 * SOL).await;
    back(&server, &ledger, &b, &m1, Side::No, SOL).await;
    back(&server, &ledger, &c, &m2, Side::Yes, SOL).await;
    // a's first backing rewarded its referrer once; a's second does not.
    back(&server, &ledger, &a, &m2, Side::No, SOL).await;

    // Four more markets: a backs YES on each, b NO; the first three and m1 resolve YES (a's
    // streak reaches 3, then 4 with 52 points: ember), the last resolves NO (the streak breaks).
    let mut markets = vec![m1];
    for _ in 0..4 {
        let (_, m) = narrative_market(&server, &ledger, &creator, "More").await;
        back(&server, &ledger, &a, &m, Side::Yes, SOL).await;
        back(&server, &ledger, &b, &m, Side::No, SOL).await;
        markets.push(m);
    }

    // Verdicts through the agent route: the first narrative TRUE, the second FALSE.
    let (status, agent) = server
        .post(
            "/v1/agent/register",
            &json!({"wallet_address": AGENT_WALLET, "name": "oracle-bot"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{agent}");
    let key = agent["agent"]["api_key"].as_str().unwrap().to_owned();
    let agent_id = agent["agent"]["id"].as_str().unwrap();
    let (status, granted) = server
        .admin_post(&format!("/v1/admin/agents/{agent_id}/oracle"), &json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{granted}");
    for (narrative, resolution) in [(first, "true"), (second, "false")] {
        let (status, body) = server
            .key_post(
                "/v1/agent/resolve",
                &key,
                &json!({"narrative_id": narrative.to_string(), "resolution": resolution, "confidence": 0.9}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    // On chain: the deadlines pass, the oracle votes; c disputes m1 during the hold and the
    // admin upholds; then everything settles in order, m1 first.
    ledger.harness.lock().await.warp_by(DAY + 60).await;
    for (i, m) in markets.iter().enumerate() {
        vote(
            &server,
            &ledger,
            m,
            if i == 4 { Side::No } else { Side::Yes },
        )
        .await;
    }
    let admin = ledger.harness.lock().await.admin.insecure_clone();
    let open = narrative_sdk::binary::open_dispute(c.pubkey(), &m1);
    run_indexed(&server, &ledger, &[open], &[&c]).await;
    let uphold = narrative_sdk::binary::resolve_dispute(
        admin.pubkey(),
        &m1,
        c.pubkey(),
        DisputeAction::Uphold,
    );
    run_indexed(&server, &ledger, &[uphold], &[&admin]).await;
    ledger.harness.lock().await.warp_by(2 * DAY + 60).await;
    for m in &markets {
        finalize(&server, &ledger, m).await;
    }
    // a claims its winnings on m1.
    let claim = narrative_sdk::binary::claim(a.pubkey(), &m1, Side::Yes);
    run_indexed(&server, &ledger, &[claim], &[&a]).await;

    // Missions: a's check completes what its backings and results satisfy.
    let (status, checked) = server
        .post(&format!("/v1/missions/check/{}", a.pubkey()), &json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{checked}");
    let completed = checked["newly_completed"].as_array().unwrap().len() as u64;
    assert!(completed >= 4, "{checked}");

    // Everything the chain said reaches the feeds through the follower.
    eventually("the payout notification", || async {
        counts(&server, &a).await.contains_key("payout_received")
    })
    .await;
    eventually("the referral reward", || async {
        counts(&server, &referrer)
            .await
            .contains_key("referral_rewarded")
    })
    .await;

    // An announcement to everyone the service knows.
    let (status, announced) = server
        .admin_post(
            "/v1/admin/notifications/announce",
            &json!({"title": "Maintenance", "body": "Devnet restarts at noon UTC."}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{announced}");
    assert_eq!(announced["audience"], "all");

    eventually("the announcement", || async {
        counts(&server, &referrer)
            .await
            .contains_key("system_announcement")
    })
    .await;

    let a_expected = expect(&[
        ("narrative_resolved_true", 1),
        ("narrative_resolved_false", 1),
        ("challenge_opened", 1),
        ("challenge_resolved", 1),
        ("streak_milestone", 1),
        ("conviction_tier_up", 1),
        ("nft_tier_unlocked", 1),
        ("streak_broken", 1),
        ("payout_received", 1),
        ("mission_completed", completed),
        ("system_announcement", 1),
    ]);
    assert_eq!(counts(&server, &a).await, a_expected);
    assert_eq!(
        counts(&server, &creator).await,
        expect(&[
            ("narrative_resolved_true", 1),
            ("narrative_resolved_false", 1),
            // a and b on m1, c and a on m2, a and b on each of the four others.
            ("new_backer_on_my_narrative", 12),
            ("challenge_opened", 1),
            ("challenge_resolved", 1),
            ("system_announcement", 1),
        ])
    );
    assert_eq!(
        counts(&server, &referrer).await,
        expect(&[("referral_rewarded", 1), ("system_announcement", 1)])
    );
    assert_eq!(
        counts(&server, &c).await,
        // c disputed m1 without backing it: told of the ruling on its bond only.
        expect(&[
            ("narrative_resolved_false", 1),
            ("challenge_resolved", 1),
            ("system_announcement", 1),
        ])
    );

    // What the notifications say.
    let a_feed = feed(&server, &a).await;
    let find = |kind: &str| {
        a_feed["notifications"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["type"] == kind)
            .cloned()
            .unwrap()
    };
    assert_eq!(find("streak_milestone")["data"]["streak"], 3);
    assert_eq!(
        find("conviction_tier_up")["data"],
        json!({"from": "initiate", "to": "ember", "market_id": hex::encode(markets[3])})
    );
    assert_eq!(find("streak_broken")["data"]["previous_streak"], 4);
    assert_eq!(find("nft_tier_unlocked")["data"]["tier"], "ember");
    assert_eq!(find("challenge_resolved")["data"]["ruling"], "uphold");
    let payout = find("payout_received");
    assert_eq!(payout["data"]["principal_lamports"], 2 * SOL);
    assert_eq!(payout["data"]["narrative_id"], first.to_string());
    assert!(payout["data"]["payout_lamports"].as_u64().unwrap() > 2 * SOL);
    assert_eq!(
        find("narrative_resolved_true")["data"],
        json!({"narrative_id": first.to_string(), "role": "backer"})
    );

    // Points: a's backings (2 SOL → 20, five of 1 SOL → 10 each), its missions; the referrer's
    // reward.
    let (_, a_points) = server.get(&format!("/v1/points/{}", a.pubkey())).await;
    assert_eq!(a_points["by_reason"]["backing"], 20 + 5 * 10, "{a_points}");
    assert_eq!(a_points["by_reason"]["mission"], checked["points_awarded"]);
    let (_, r_points) = server
        .get(&format!("/v1/points/{}", referrer.pubkey()))
        .await;
    assert_eq!(r_points["total_points"], 50, "{r_points}");
    assert_eq!(r_points["awards"][0]["reason"], "referral");

    // Replayed from the first event, the follower writes nothing twice.
    let mut snapshot = Vec::new();
    for wallet in [&a, &b, &c, &creator, &referrer] {
        snapshot.push(counts(&server, wallet).await);
    }
    let db = server.db.store.db();
    let mut cursor = event_cursors::Entity::find_by_id("follow_events")
        .one(db)
        .await
        .unwrap()
        .unwrap();
    let last = cursor.last_event_id;
    let mut reset = cursor.clone().into_active_model();
    reset.last_event_id = sea_orm::ActiveValue::Set(0);
    reset.update(db).await.unwrap();
    cursor = eventually_some("the follower to pass everything again", || async {
        event_cursors::Entity::find_by_id("follow_events")
            .one(db)
            .await
            .unwrap()
            .filter(|c| c.last_event_id == last)
    })
    .await;
    assert_eq!(cursor.last_event_id, last);
    for (wallet, expected) in [&a, &b, &c, &creator, &referrer].iter().zip(&snapshot) {
        assert_eq!(
            &counts(&server, wallet).await,
            expected,
            "{}",
            wallet.pubkey()
        );
    }
    let (_, r_points) = server
        .get(&format!("/v1/points/{}", referrer.pubkey()))
        .await;
    assert_eq!(r_points["total_points"], 50, "the referral paid once");

    // The narratives' statuses moved with the verdicts.
    let resolved = narratives::Entity::find_by_id(second.to_string())
        .one(db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(resolved.oracle_status, "resolved_false");
    server.stop().await;
}

#[tokio::test]
async fn a_wallet_reads_its_feed_in_pages_and_marks_it_read_with_its_signature() {
    let server = TestServer::start(|_| {}).await;
    let wallet = Keypair::new();
    let other = Keypair::new();
    let address = wallet.pubkey().to_string();
    // Five announcements to the wallet (and one to another wallet).
    for i in 0..5 {
        let (status, body) = server
            .admin_post(
                "/v1/admin/notifications/announce",
                &json!({"title": format!("Note {i}"), "body": "b", "wallets": [address]}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["audience"], "1");
    }
    // Named twice, announced to once.
    let (status, body) = server
        .admin_post(
            "/v1/admin/notifications/announce",
            &json!({"title": "Elsewhere", "body": "b",
                    "wallets": [other.pubkey().to_string(), other.pubkey().to_string()]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["audience"], "1");
    let page = |query: &'static str| {
        let server = &server;
        let address = address.clone();
        async move {
            let (status, body) = server
                .get(&format!("/v1/notifications/{address}{query}"))
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            body
        }
    };
    let all = eventually_some("five announcements in the feed", || async {
        let body = page("").await;
        (body["total"] == 5 && body["notifications"].as_array().unwrap().len() == 5).then_some(body)
    })
    .await;
    assert_eq!(all["unread_count"], 5);
    // The feed is a public read: each notification's fields, and no more.
    let mut fields: Vec<&str> = all["notifications"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    fields.sort();
    assert_eq!(
        fields,
        [
            "body",
            "created_at",
            "data",
            "id",
            "read",
            "read_at",
            "title",
            "type"
        ]
    );
    let titles: Vec<&str> = all["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        vec!["Note 4", "Note 3", "Note 2", "Note 1", "Note 0"]
    );
    let second_page = page("?limit=2&offset=2").await;
    assert_eq!(second_page["notifications"][0]["title"], "Note 2");
    assert_eq!(second_page["notifications"].as_array().unwrap().len(), 2);
    assert_eq!(second_page["limit"], 2);
    // Caps clamp: limit 0 is 1, 10,000 is 200.
    assert_eq!(page("?limit=0").await["limit"], 1);
    assert_eq!(page("?limit=10000").await["limit"], 200);

    // Marking read needs the wallet's fresh signature of exactly what is marked, once.
    let third = all["notifications"][2]["id"].as_i64().unwrap();
    let signed = |who: &Keypair, message: String| {
        bs58::encode(who.sign_message(message.as_bytes()).as_ref()).into_string()
    };
    let timeless =
        |target: &str| format!("narrative-market-service:notifications-read:{address}:{target}");
    let sign_at = |who: &Keypair, target: &str, at: i64| {
        signed(who, format!("{}:issued-at:{at}", timeless(target)))
    };
    let now = server.clock.now();
    let sign = |who: &Keypair, target: &str| sign_at(who, target, now);
    let read_path = format!("/v1/notifications/{address}/read");
    let up_to_third = |signature: String, at: i64| json!({"up_to_id": third, "signature": signature, "issued_at": at});
    let third_text = third.to_string();
    for (body, why) in [
        (
            up_to_third(sign(&other, &third_text), now),
            "another wallet",
        ),
        (up_to_third(sign(&wallet, "all"), now), "another target"),
        (
            up_to_third(sign_at(&wallet, &third_text, now - 301), now - 301),
            "signed 301 s ago",
        ),
        (
            up_to_third(signed(&wallet, timeless(&third_text)), now),
            "without its issued-at time",
        ),
    ] {
        let (status, refused) = server.post(&read_path, &body).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{why}: {refused}");
        assert_eq!(refused["error"], "invalid_signature");
    }
    let (status, refused) = server
        .post(
            &read_path,
            &json!({"up_to_id": third, "signature": sign(&wallet, &third_text)}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "no issued_at: {refused}");
    assert_eq!(
        page("?unread_only=true").await["total"],
        5,
        "nothing marked"
    );
    let (status, marked) = server
        .post(&read_path, &up_to_third(sign(&wallet, &third_text), now))
        .await;
    assert_eq!(status, StatusCode::OK, "{marked}");
    assert_eq!(
        (marked["marked"].as_u64(), marked["unread_count"].as_u64()),
        (Some(3), Some(2))
    );
    let (status, refused) = server
        .post(&read_path, &up_to_third(sign(&wallet, &third_text), now))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "replayed: {refused}");
    assert_eq!(refused["error"], "invalid_signature");
    let unread = page("?unread_only=true").await;
    assert_eq!(unread["total"], 2);
    let unread_titles: Vec<&str> = unread["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["title"].as_str().unwrap())
        .collect();
    assert_eq!(unread_titles, vec!["Note 4", "Note 3"]);
    let (_, marked) = server
        .post(
            &read_path,
            &json!({"signature": sign(&wallet, "all"), "issued_at": now}),
        )
        .await;
    assert_eq!(
        (marked["marked"].as_u64(), marked["unread_count"].as_u64()),
        (Some(2), Some(0))
    );
    // Again, with a new signature: nothing more to mark.
    let (_, again) = server
        .post(
            &read_path,
            &json!({"signature": sign_at(&wallet, "all", now + 1), "issued_at": now + 1}),
        )
        .await;
    assert_eq!(again["marked"], 0);
    let read = page("").await;
    assert_eq!(read["notifications"][0]["read"], true);
    assert!(read["notifications"][0]["read_at"].is_string());
    // The other wallet's feed is its own.
    let (_, others) = server
        .get(&format!("/v1/notifications/{}", other.pubkey()))
        .await;
    assert_eq!(others["unread_count"], 1);

    // Refusals: a malformed wallet, an announcement without the admin pair.
    let (status, _) = server.get("/v1/notifications/not-a-wallet").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = server
        .post(
            "/v1/admin/notifications/announce",
            &json!({"title": "x", "body": "y"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    server.stop().await;
}

/// Points grow with the amount backed, however it is split; a referral credits only a wallet
/// that had not backed before it joined, once its backing earns points.
#[tokio::test]
async fn backing_points_grow_with_the_amount_and_referrals_credit_only_new_backers() {
    let options = HarnessOptions {
        wallets: 7,
        ..Default::default()
    };
    let (server, ledger) = chain::start_on_bank_with(options, |_, _| {}).await;
    let [whole, split, creator, referrer, veteran, newcomer, duster] = {
        let h = ledger.harness.lock().await;
        [0, 1, 2, 3, 4, 5, 6].map(|i| h.wallets[i].insecure_clone())
    };
    let (_, market) = narrative_market(&server, &ledger, &creator, "Kestrel ships").await;

    // One backing of 0.5 SOL against ten of 0.05 SOL (each of which earned 1 point before, as
    // the minimum: 10 against 5).
    back(&server, &ledger, &whole, &market, Side::Yes, SOL / 2).await;
    for _ in 0..10 {
        back(&server, &ledger, &split, &market, Side::Yes, SOL / 20).await;
    }

    // The veteran backed before joining: its referrer is not kept, and its next backing
    // credits nothing. The newcomer joins first, then backs: its referrer is credited.
    back(&server, &ledger, &veteran, &market, Side::No, SOL / 10).await;
    let joined = join_waitlist(&server, &veteran, &referrer).await;
    assert_eq!(joined["referral"], "not_eligible", "{joined}");
    back(&server, &ledger, &veteran, &market, Side::No, SOL / 10).await;
    let joined = join_waitlist(&server, &newcomer, &referrer).await;
    assert_eq!(joined["referral"], "recorded", "{joined}");
    back(&server, &ledger, &newcomer, &market, Side::No, SOL / 10).await;
    // A referred wallet whose backing earns no point (0.05 SOL) pays its referrer nothing: a
    // flat 50 for a minimal backing would make splitting across fresh wallets pay after all.
    let joined = join_waitlist(&server, &duster, &referrer).await;
    assert_eq!(joined["referral"], "recorded", "{joined}");
    back(&server, &ledger, &duster, &market, Side::No, SOL / 20).await;

    // The follower passes every event.
    let db = server.db.store.db();
    let last = narrative_store::entities::program_events::Entity::find()
        .order_by_desc(narrative_store::entities::program_events::Column::Id)
        .one(db)
        .await
        .unwrap()
        .unwrap()
        .id;
    eventually("the follower to pass every event", || async {
        event_cursors::Entity::find_by_id("follow_events")
            .one(db)
            .await
            .unwrap()
            .is_some_and(|c| c.last_event_id >= last)
    })
    .await;
    let points = |wallet: &Keypair| {
        let path = format!("/v1/points/{}", wallet.pubkey());
        let server = &server;
        async move { server.get(&path).await.1 }
    };
    let (one, ten) = (points(&whole).await, points(&split).await);
    assert_eq!(one["by_reason"]["backing"], 5, "{one}");
    assert_eq!(ten["by_reason"]["backing"], 5, "{ten}");
    assert_eq!(one["total_points"], ten["total_points"]);
    // The veteran's two backings of 0.1 SOL on one side: 2; the referrer: the newcomer's only.
    assert_eq!(points(&veteran).await["by_reason"]["backing"], 2);
    let rewarded = points(&referrer).await;
    assert_eq!(rewarded["total_points"], 50, "{rewarded}");
    assert_eq!(
        rewarded["awards"].as_array().unwrap().len(),
        1,
        "{rewarded}"
    );
    assert_eq!(
        rewarded["awards"][0]["detail"]["referred"],
        newcomer.pubkey().to_string()
    );
    server.stop().await;
}
