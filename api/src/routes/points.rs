//! `/v1/points` (spec 4.10): a wallet's points with the awards they add up from, and the
//! leaderboard.

use std::collections::BTreeMap;
use std::sync::Arc;

use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::points::{self, Reason};
use crate::error::{refusals, Answer};
use crate::routes::conviction::MAX_LEADERBOARD;
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{page, JsonDocument, Wallet};

pub struct PointsApi {
    pub state: Arc<AppState>,
}

/// One row of the points ledger.
#[derive(Object)]
pub struct PointAward {
    pub id: i64,
    pub points: i64,
    pub reason: Reason,
    /// The cause it came from (unique: no cause pays twice).
    pub source: String,
    pub detail: Option<JsonDocument>,
    pub created_at: String,
}

#[derive(Object)]
pub struct WalletPoints {
    pub ok: bool,
    pub wallet: Wallet,
    pub total_points: i64,
    /// 1-based; null without points.
    pub rank: Option<u64>,
    /// Totals per reason: `mission`, `backing`, `referral`, `ruffler`.
    pub by_reason: BTreeMap<String, i64>,
    /// The wallet's awards, newest first (`limit` default 50, 1–200; `offset`); they sum to
    /// `total_points` over all pages.
    pub awards: Vec<PointAward>,
    pub awards_total: u64,
}

#[derive(Object)]
pub struct PointsLeader {
    pub rank: u64,
    pub wallet_address: String,
    pub total_points: i64,
}

#[derive(Object)]
pub struct PointsLeaderboard {
    pub ok: bool,
    pub leaderboard: Vec<PointsLeader>,
    pub total: u64,
    pub limit: u64,
    pub offset: u64,
}

refusals! {
    PointsRefusals: [400];
}

#[OpenApi(prefix_path = "/points", tag = "Tag::Points")]
impl PointsApi {
    /// Wallets by total points (`limit` default 50, 1–100; `offset`).
    #[oai(path = "/leaderboard", method = "get")]
    async fn leaderboard(
        &self,
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
    ) -> Answer<Json<PointsLeaderboard>, PointsRefusals> {
        let (limit, offset) = page(limit.0, offset.0, 50, MAX_LEADERBOARD);
        let (rows, total) = points::leaderboard(&self.state, limit, offset).await?;
        Ok(Json(PointsLeaderboard {
            ok: true,
            leaderboard: rows
                .into_iter()
                .enumerate()
                .map(|(i, (wallet, total_points))| PointsLeader {
                    rank: offset + i as u64 + 1,
                    wallet_address: wallet,
                    total_points,
                })
                .collect(),
            total,
            limit,
            offset,
        }))
    }

    /// A wallet's total, rank, totals per reason and its awards.
    #[oai(path = "/:wallet", method = "get")]
    async fn wallet(
        &self,
        wallet: Path<Wallet>,
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
    ) -> Answer<Json<WalletPoints>, PointsRefusals> {
        let (limit, offset) = page(limit.0, offset.0, 50, 200);
        let standing = points::standing(&self.state, &wallet.0, limit, offset).await?;
        Ok(Json(WalletPoints {
            ok: true,
            wallet: wallet.0,
            total_points: standing.total,
            rank: standing.rank,
            by_reason: standing
                .by_reason
                .iter()
                .map(|(reason, total)| (reason.as_str().to_owned(), *total))
                .collect(),
            awards: standing
                .awards
                .into_iter()
                .map(|a| PointAward {
                    id: a.id,
                    points: a.points,
                    reason: a.reason.parse().unwrap_or(Reason::Mission),
                    source: a.source_key,
                    detail: a.detail.map(JsonDocument),
                    created_at: iso(a.created_at),
                })
                .collect(),
            awards_total: standing.awards_count,
        }))
    }
}
