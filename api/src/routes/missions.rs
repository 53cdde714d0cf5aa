//! `/v1/missions` (spec 4.4): a wallet's missions with progress, the check that completes newly
//! satisfied ones, and the leaderboard.

use std::sync::Arc;

use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::missions::leaderboard::{self, MissionSort};
use crate::domain::missions::{self, Metric, MissionState};
use crate::error::{refusals, Answer};
use crate::routes::conviction::MAX_LEADERBOARD;
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{page, sol_u64, Wallet};

pub struct MissionsApi {
    pub state: Arc<AppState>,
}

/// A mission with the wallet's progress.
#[derive(Object)]
pub struct MissionView {
    pub id: String,
    pub title: String,
    pub description: String,
    pub metric: Metric,
    pub target: u64,
    /// The wallet's measure, which may exceed the target.
    pub progress: u64,
    /// Progress as a percentage of the target, at most 100.
    pub progress_pct: f64,
    pub completed: bool,
    pub completed_at: Option<String>,
    pub points: u64,
    /// Ruffler tickets it wins.
    pub tickets: u32,
}

impl From<&MissionState> for MissionView {
    fn from(s: &MissionState) -> Self {
        let m = s.mission;
        MissionView {
            id: m.id.clone(),
            title: m.title.clone(),
            description: m.description.clone(),
            metric: m.metric,
            target: m.target,
            progress: s.progress,
            progress_pct: (s.progress.min(m.target) as f64 * 10_000.0 / m.target as f64).round()
                / 100.0,
            completed: s.completed_at.is_some(),
            completed_at: s.completed_at.map(iso),
            points: m.points,
            tickets: m.tickets,
        }
    }
}

#[derive(Object)]
pub struct WalletMissions {
    pub ok: bool,
    pub wallet: Wallet,
    pub missions: Vec<MissionView>,
    pub completed: u64,
    pub total: u64,
    /// Satisfied but not marked complete yet: `POST /v1/missions/check/:wallet` completes them.
    pub ready_to_complete: u64,
}

fn wallet_missions(wallet: Wallet, states: &[MissionState]) -> WalletMissions {
    WalletMissions {
        ok: true,
        wallet,
        missions: states.iter().map(MissionView::from).collect(),
        completed: states.iter().filter(|s| s.completed_at.is_some()).count() as u64,
        total: states.len() as u64,
        ready_to_complete: states
            .iter()
            .filter(|s| s.completed_at.is_none() && s.satisfied())
            .count() as u64,
    }
}

#[derive(Object)]
pub struct MissionCheck {
    pub ok: bool,
    pub wallet: Wallet,
    /// Ids of the missions this check completed (empty when nothing new).
    pub newly_completed: Vec<String>,
    /// Points this check awarded.
    pub points_awarded: u64,
    pub missions: Vec<MissionView>,
}

#[derive(Object)]
pub struct MissionLeader {
    pub rank: u64,
    pub wallet_address: String,
    pub missions_completed: u64,
    pub conviction_score: f64,
    pub conviction_tier: String,
    /// SOL allocated to the wallet over the last 12 closed Echo Pool epochs.
    pub epoch_performance_sol: f64,
}

#[derive(Object)]
pub struct MissionLeaderboard {
    pub ok: bool,
    pub sort: MissionSort,
    pub leaderboard: Vec<MissionLeader>,
    pub total: u64,
    pub limit: u64,
    pub offset: u64,
}

refusals! {
    MissionRefusals: [400];
}

#[OpenApi(prefix_path = "/missions", tag = "Tag::Missions")]
impl MissionsApi {
    /// The ranking by `sort` (`missions_completed` by default), `limit` default 50 (1–100).
    #[oai(path = "/leaderboard", method = "get")]
    async fn leaderboard(
        &self,
        sort: Query<Option<MissionSort>>,
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
    ) -> Answer<Json<MissionLeaderboard>, MissionRefusals> {
        let sort = sort.0.unwrap_or(MissionSort::MissionsCompleted);
        let (limit, offset) = page(limit.0, offset.0, 50, MAX_LEADERBOARD);
        let (rows, total) = leaderboard::leaderboard(&self.state, sort, limit, offset).await?;
        Ok(Json(MissionLeaderboard {
            ok: true,
            sort,
            leaderboard: rows
                .into_iter()
                .enumerate()
                .map(|(i, e)| MissionLeader {
                    rank: offset + i as u64 + 1,
                    wallet_address: e.wallet,
                    missions_completed: e.missions_completed,
                    conviction_score: e.conviction_score,
                    conviction_tier: e.conviction_tier,
                    epoch_performance_sol: sol_u64(e.epoch_performance_lamports),
                })
                .collect(),
            total,
            limit,
            offset,
        }))
    }

    /// The wallet's missions with progress and completion.
    #[oai(path = "/:wallet", method = "get")]
    async fn missions(
        &self,
        wallet: Path<Wallet>,
    ) -> Answer<Json<WalletMissions>, MissionRefusals> {
        let states = missions::missions(&self.state, &wallet.0).await?;
        Ok(Json(wallet_missions(wallet.0, &states)))
    }

    /// Re-evaluates the wallet's missions and marks the newly satisfied ones complete, each
    /// once (also under concurrent checks), awarding their points and tickets.
    #[oai(path = "/check/:wallet", method = "post")]
    async fn check(&self, wallet: Path<Wallet>) -> Answer<Json<MissionCheck>, MissionRefusals> {
        let checked = missions::check(&self.state, &wallet.0).await?;
        Ok(Json(MissionCheck {
            ok: true,
            wallet: wallet.0,
            newly_completed: checked
                .newly_completed
                .iter()
                .map(|m| m.id.clone())
                .collect(),
            points_awarded: checked.points_awarded,
            missions: checked.missions.iter().map(MissionView::from).collect(),
        }))
    }
}
