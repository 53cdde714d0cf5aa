//! The points, missions and agents leaderboards over 10,000 wallets seeded in bulk: ranked and
//! paged in SQL (ties by wallet or id, byte order), the right page at the top and in the middle,
//! and served again from the response cache until a write changes what they rank.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::leaderboards::{self, agent_id, agent_pnl, missions, points, wallet};
use common::{sample, TestServer};
use narrative_api::domain::profiles::conviction;
use reqwest::StatusCode;
use serde_json::Value;

const WALLETS: usize = 10_000;

/// `(key, figure)` pairs ranked by figure descending, then key ascending (byte order).
fn ranked<T: PartialOrd + Copy>(mut rows: Vec<(String, T)>) -> Vec<(String, T)> {
    rows.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap()
            .then_with(|| a.0.as_bytes().cmp(b.0.as_bytes()))
    });
    rows
}

async fn page(server: &TestServer, path: &str) -> Value {
    let (status, body) = server.get(path).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body
}

async fn cache_hits(server: &TestServer) -> f64 {
    sample(
        &server.get_text("/metrics").await,
        "http_cache_requests_total{outcome=\"hit\"}",
    )
    .unwrap_or(0.0)
}

#[tokio::test]
async fn leaderboards_over_ten_thousand_wallets_rank_in_sql_and_are_served_from_the_cache() {
    let server = TestServer::start(|_| {}).await;
    let db = server.db.store.db();
    let now = server.clock.now();
    leaderboards::seed(db, WALLETS, now).await;

    // Points: totals with many ties.
    let expected = ranked((0..WALLETS).map(|i| (wallet(i), points(i))).collect());
    for offset in [0, 4_950] {
        let body = page(
            &server,
            &format!("/v1/points/leaderboard?limit=100&offset={offset}"),
        )
        .await;
        assert_eq!(body["total"], WALLETS as u64);
        let got: Vec<(String, i64)> = body["leaderboard"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["wallet_address"].as_str().unwrap().to_owned(),
                    e["total_points"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            got,
            expected[offset..offset + 100].to_vec(),
            "offset {offset}"
        );
        assert_eq!(body["leaderboard"][0]["rank"], offset as u64 + 1);
    }

    // Missions: the universe is the wallets with a completion or a resolved backing; the
    // conviction scores the SQL computes are the ones the profile's rules give.
    let scores = conviction::scores(db, None).await.unwrap();
    assert!(scores.len() > WALLETS / 2, "most wallets have a score");
    let universe: BTreeSet<String> = (0..WALLETS)
        .filter(|i| missions(*i) > 0)
        .map(wallet)
        .chain(scores.keys().cloned())
        .collect();
    let completed: BTreeMap<String, usize> =
        (0..WALLETS).map(|i| (wallet(i), missions(i))).collect();
    let by_missions = ranked(
        universe
            .iter()
            .map(|w| (w.clone(), completed[w] as f64))
            .collect(),
    );
    let by_score = ranked(
        universe
            .iter()
            .map(|w| (w.clone(), scores.get(w).map_or(0.0, |s| s.score)))
            .collect(),
    );
    for (sort, expected) in [
        ("missions_completed", &by_missions),
        ("conviction_score", &by_score),
    ] {
        for offset in [0, 3_000] {
            let body = page(
                &server,
                &format!("/v1/missions/leaderboard?sort={sort}&limit=100&offset={offset}"),
            )
            .await;
            assert_eq!(body["total"], universe.len() as u64, "{sort}");
            let entries = body["leaderboard"].as_array().unwrap();
            let got: Vec<String> = entries
                .iter()
                .map(|e| e["wallet_address"].as_str().unwrap().to_owned())
                .collect();
            let want: Vec<String> = expected[offset..offset + 100]
                .iter()
                .map(|(w, _)| w.clone())
                .collect();
            assert_eq!(got, want, "{sort} at {offset}");
            for entry in entries {
                let w = entry["wallet_address"].as_str().unwrap();
                let profile = scores.get(w);
                assert_eq!(
                    entry["conviction_score"].as_f64().unwrap(),
                    profile.map_or(0.0, |s| s.score),
                    "{w}"
                );
                assert_eq!(
                    entry["conviction_tier"],
                    profile.map_or("ember", |s| s.tier.name()),
                    "{w}"
                );
                assert_eq!(entry["missions_completed"], completed[w] as u64);
            }
        }
    }
    // Past the end: nothing, and still the count.
    let body = page(&server, "/v1/missions/leaderboard?limit=10&offset=1000000").await;
    assert_eq!(body["leaderboard"], serde_json::json!([]));
    assert_eq!(body["total"], universe.len() as u64);

    // Agents: by realised PnL, ties by id.
    let expected = ranked((0..WALLETS).map(|i| (agent_id(i), agent_pnl(i))).collect());
    for offset in [0, 5_000] {
        let body = page(
            &server,
            &format!("/v1/agent/leaderboard?limit=200&offset={offset}"),
        )
        .await;
        let entries = body["leaderboard"].as_array().unwrap();
        let got: Vec<(String, f64)> = entries
            .iter()
            .map(|e| {
                (
                    e["id"].as_str().unwrap().to_owned(),
                    e["total_pnl_sol"].as_f64().unwrap(),
                )
            })
            .collect();
        let want: Vec<(String, f64)> = expected[offset..offset + 200]
            .iter()
            .map(|(id, pnl)| (id.clone(), *pnl as f64 / 1e9))
            .collect();
        assert_eq!(got, want, "offset {offset}");
    }

    // Asked again, each is answered from the response cache.
    let hits = cache_hits(&server).await;
    for path in [
        "/v1/points/leaderboard?limit=100&offset=0",
        "/v1/missions/leaderboard?sort=conviction_score&limit=100&offset=0",
        "/v1/agent/leaderboard?limit=200&offset=0",
    ] {
        page(&server, path).await;
    }
    assert_eq!(cache_hits(&server).await, hits + 3.0);
    server.stop().await;
}
