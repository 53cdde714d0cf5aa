//! Narrative groups over HTTP: live aggregates from the index at a fixed SOL/USD price, the
//! list's filters, and the wrapped single read; the CoinGecko client against a local server.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::TestServer;
use narrative_api::providers::prices::{CoinGeckoFeed, PriceFeed, RETRY_AFTER_SECS};
use narrative_store::entities::{narrative_group_members, narrative_groups};
use poem::web::{Data, Json, Query};
use poem::{get, handler, EndpointExt, Route};
use reqwest::StatusCode;
use sea_orm::{ActiveModelTrait, IntoActiveModel};
use serde_json::{json, Value};

const CREATOR: &str = "C9QjHcuPyyncqkpSqKdQpFJjUNTgbwmbEN4GeGUoSpjN";

#[tokio::test]
async fn groups_aggregate_their_members_markets_live() {
    let server = TestServer::start(|c| c.sol_usd_price = Some(100.0)).await;
    let db = server.db.store.db();
    let now = chrono::Utc::now().timestamp();
    // N1 (pre-market) and N2 in the featured group, N3 alone in a small one.
    let mut ids = Vec::new();
    for (i, volume) in [(1u32, 0i64), (2, 3_000_000_000), (3, 500_000_000)] {
        let id = uuid::Uuid::from_u128(0x4000_0000_0000_4000_8000_0000_0000_0000 | i as u128);
        let mut n =
            common::fixtures::narrative(&id, CREATOR, &format!("N{i}"), "MACRO", "open", now);
        if i == 1 {
            n.opens_at = Some(now + 86_400);
        }
        n.clone().into_active_model().insert(db).await.unwrap();
        common::fixtures::market(
            &format!("Market{i}"),
            &n.market_id,
            Some(&n.id),
            CREATOR,
            (volume, 0),
            (1, 0),
        )
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
        ids.push(n);
    }
    // Wallets A and B back N2, B on both sides; A also backs N1 (the same group: counted once
    // there) and N3 (another group: counted there too).
    for (k, (wallet, member, side)) in [
        ("WalletA", 1usize, "yes"),
        ("WalletB", 1, "yes"),
        ("WalletB", 1, "no"),
        ("WalletA", 0, "yes"),
        ("WalletA", 2, "yes"),
    ]
    .iter()
    .enumerate()
    {
        common::fixtures::backing(
            &format!("Backing{k}"),
            &ids[*member].market_id,
            wallet,
            side,
            10_000_000,
        )
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
    }
    for (id, title, featured, created_at) in [
        ("g-featured", "Rates", true, now - 10),
        ("g-small", "Odds", false, now),
    ] {
        narrative_groups::Model {
            id: id.into(),
            title: title.into(),
            featured,
            created_at,
        }
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
    }
    for (group, member, position, source) in [
        ("g-featured", 0usize, 0, Some("kalshi_import")),
        ("g-featured", 1, 1, None),
        ("g-small", 2, 0, None),
    ] {
        narrative_group_members::Model {
            group_id: group.into(),
            narrative_id: ids[member].id.clone(),
            pre_market_source: source.map(String::from),
            position,
        }
        .into_active_model()
        .insert(db)
        .await
        .unwrap();
    }

    let (status, list) = server.get("/v1/narrative-groups").await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let groups = list["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    let featured = &groups[0];
    assert_eq!(featured["id"], "g-featured", "featured first");
    assert_eq!(featured["total_volume_usd"], 300.0, "3 SOL at $100");
    assert_eq!(featured["total_backers"], 2);
    assert_eq!(featured["narratives"][0]["title"], "N1");
    assert_eq!(featured["narratives"][0]["is_pre_market"], true);
    assert_eq!(
        featured["narratives"][0]["pre_market_source"],
        "kalshi_import"
    );
    assert_eq!(featured["narratives"][1]["is_pre_market"], false);
    assert_eq!(groups[1]["total_volume_usd"], 50.0);
    assert_eq!(groups[1]["total_backers"], 1);

    let only = |body: &Value| {
        body["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        only(&server.get("/v1/narrative-groups?featured=true").await.1),
        ["g-featured"]
    );
    assert_eq!(
        only(&server.get("/v1/narrative-groups?min_volume=100").await.1),
        ["g-featured"]
    );
    assert_eq!(
        only(&server.get("/v1/narrative-groups?min_backers=2").await.1),
        ["g-featured"]
    );
    assert_eq!(
        only(&server.get("/v1/narrative-groups?limit=1").await.1),
        ["g-featured"]
    );

    let (status, single) = server.get("/v1/narrative-groups/g-small").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(single["group"]["title"], "Odds");
    assert_eq!(single["group"]["narratives"][0]["id"], ids[2].id.as_str());
    let (status, _) = server.get("/v1/narrative-groups/nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    server.stop().await;
}

#[derive(serde::Deserialize)]
struct PriceQuery {
    ids: String,
    vs_currencies: String,
}

#[handler]
fn simple_price(Query(q): Query<PriceQuery>, Data(calls): Data<&Arc<AtomicUsize>>) -> Json<Value> {
    calls.fetch_add(1, Ordering::SeqCst);
    assert_eq!(
        (q.ids.as_str(), q.vs_currencies.as_str()),
        ("solana", "usd")
    );
    Json(json!({"solana": {"usd": 187.25}}))
}

/// CoinGecko answering 429 (its free tier's rate limit), counting the calls.
#[handler]
fn rate_limited(Data(calls): Data<&Arc<AtomicUsize>>) -> poem::Response {
    calls.fetch_add(1, Ordering::SeqCst);
    poem::Response::builder()
        .status(poem::http::StatusCode::TOO_MANY_REQUESTS)
        .finish()
}

/// Requests that need the price while CoinGecko refuses share one failed fetch, and the feed
/// does not ask again for RETRY_AFTER_SECS (before, each request fetched in turn, adding to the
/// rate limit it had met). The refusal, which is logged, leaves out the feed's address: here a
/// keyed proxy's, with its key in the path.
#[tokio::test]
async fn a_refused_price_fetch_is_shared_and_not_repeated_at_once() {
    let calls = Arc::new(AtomicUsize::new(0));
    let base = common::serve_locally(
        Route::new()
            .at("/key-s3cr3t/api/v3/simple/price", get(rate_limited))
            .data(calls.clone()),
    )
    .await;
    let clock = narrative_api::clock::ManualClock::at(1_790_000_000);
    let feed =
        Arc::new(CoinGeckoFeed::new(&format!("{base}/key-s3cr3t/api/v3"), clock.clone()).unwrap());
    let reads: Vec<_> = (0..8)
        .map(|_| {
            let feed = feed.clone();
            tokio::spawn(async move { feed.sol_usd().await })
        })
        .collect();
    for read in reads {
        let refused = read.await.unwrap().unwrap_err().to_string();
        assert!(refused.contains("429"), "{refused}");
        assert!(!refused.contains("s3cr3t"), "{refused}");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    clock.advance(RETRY_AFTER_SECS - 1);
    assert!(feed.sol_usd().await.is_err());
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "not asked within the retry time"
    );
    clock.advance(1);
    assert!(feed.sol_usd().await.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn the_coingecko_client_reads_and_caches_the_price() {
    let calls = Arc::new(AtomicUsize::new(0));
    let base = common::serve_locally(
        Route::new()
            .at("/api/v3/simple/price", get(simple_price))
            .data(calls.clone()),
    )
    .await;
    let clock = narrative_api::clock::ManualClock::at(1_790_000_000);
    let feed = CoinGeckoFeed::new(&format!("{base}/api/v3"), clock.clone()).unwrap();
    assert_eq!(feed.sol_usd().await.unwrap(), 187.25);
    clock.advance(59);
    assert_eq!(feed.sol_usd().await.unwrap(), 187.25);
    assert_eq!(calls.load(Ordering::SeqCst), 1, "cached for a minute");
    clock.advance(1);
    assert_eq!(feed.sol_usd().await.unwrap(), 187.25);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "read again after the minute"
    );
    assert!(CoinGeckoFeed::new("http://127.0.0.1:1", clock)
        .unwrap()
        .sol_usd()
        .await
        .is_err());
}
