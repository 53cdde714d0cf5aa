//! Missions (spec 4.4): a catalogue defined as data (`catalogue`), each wallet's progress from
//! what it did (`progress`), and the check that marks newly satisfied missions complete: once
//! each, whatever the number of concurrent checks (the completion's primary key decides which
//! one records it), with its points, its ruffler tickets and a `mission_completed` notification
//! in the same transaction. `leaderboard` ranks wallets by missions, conviction or Echo Pool
//! performance.

pub mod catalogue;
pub mod leaderboard;
pub mod progress;

use std::collections::HashMap;

use narrative_store::entities::mission_completions;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};
use serde_json::json;

use crate::domain::echo::ruffler;
use crate::domain::notifications::{notices, notify};
use crate::domain::points::{self, Award, Reason};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::Wallet;
pub use catalogue::{Metric, Mission};
pub use progress::Progress;

/// A mission as it stands for one wallet.
pub struct MissionState {
    pub mission: &'static Mission,
    pub progress: u64,
    pub completed_at: Option<i64>,
}

impl MissionState {
    pub fn satisfied(&self) -> bool {
        self.progress >= self.mission.target
    }
}

/// Every mission with the wallet's progress and completion, in catalogue order.
pub async fn missions(state: &AppState, wallet: &Wallet) -> Result<Vec<MissionState>, ApiError> {
    let progress = progress::progress(state, wallet).await?;
    let completed: HashMap<String, i64> = mission_completions::Entity::find()
        .filter(mission_completions::Column::Wallet.eq(wallet.to_string()))
        .all(state.store.db())
        .await?
        .into_iter()
        .map(|c| (c.mission_id, c.completed_at))
        .collect();
    Ok(catalogue::missions()
        .iter()
        .map(|mission| MissionState {
            progress: progress.of(mission.metric),
            completed_at: completed.get(&mission.id).copied(),
            mission,
        })
        .collect())
}

/// What a check did.
pub struct Checked {
    pub missions: Vec<MissionState>,
    /// Missions this check completed.
    pub newly_completed: Vec<&'static Mission>,
    pub points_awarded: u64,
}

/// Re-evaluates the wallet's missions and marks those newly satisfied complete, each with its
/// points, tickets and notification, once.
pub async fn check(state: &AppState, wallet: &Wallet) -> Result<Checked, ApiError> {
    let mut states = missions(state, wallet).await?;
    let owner = wallet.to_string();
    let now = state.now();
    let mut newly_completed = Vec::new();
    let mut points_awarded = 0;
    for mission_state in states
        .iter_mut()
        .filter(|s| s.completed_at.is_none() && s.satisfied())
    {
        let mission = mission_state.mission;
        let txn = state.store.begin_write().await?;
        let recorded = mission_completions::Entity::insert(mission_completions::ActiveModel {
            wallet: Set(owner.clone()),
            mission_id: Set(mission.id.clone()),
            points: Set(mission.points as i64),
            completed_at: Set(now),
        })
        .on_conflict(
            OnConflict::columns([
                mission_completions::Column::Wallet,
                mission_completions::Column::MissionId,
            ])
            .do_nothing()
            .to_owned(),
        )
        .exec_without_returning(&txn)
        .await?;
        if recorded == 1 {
            points::award(
                &txn,
                Award {
                    wallet: &owner,
                    points: mission.points,
                    reason: Reason::Mission,
                    source_key: format!("mission:{}:{owner}", mission.id),
                    detail: Some(json!({"mission_id": mission.id})),
                },
                now,
            )
            .await?;
            let round = ruffler::current_round(&txn).await?;
            for n in 0..mission.tickets {
                ruffler::win_ticket(
                    &txn,
                    &owner,
                    round,
                    format!("mission:{}:{owner}:{n}", mission.id),
                    now,
                )
                .await?;
            }
            notify(
                &txn,
                notices::mission_completed(&owner, &mission.id, &mission.title, mission.points),
                now,
            )
            .await?;
        }
        txn.commit().await?;
        if recorded == 1 {
            newly_completed.push(mission);
            points_awarded += mission.points;
        }
        // Completed by this check or a concurrent one: its time is the recorded one.
        mission_state.completed_at =
            mission_completions::Entity::find_by_id((owner.clone(), mission.id.clone()))
                .one(state.store.db())
                .await?
                .map(|c| c.completed_at);
    }
    Ok(Checked {
        missions: states,
        newly_completed,
        points_awarded,
    })
}
