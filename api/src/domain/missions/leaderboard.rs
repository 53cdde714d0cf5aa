//! The missions leaderboard (spec 4.4): every wallet that completed a mission, has a conviction
//! score or shared in a recent Echo Pool epoch, ranked by the chosen figure (ties by wallet, so
//! pages are stable), each entry carrying all three.

use std::collections::BTreeMap;

use narrative_store::entities::{echo_allocations, echo_distributions, mission_completions};
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::domain::echo::keeper::{CLOSED, ROLLED_OVER};
use crate::domain::echo::reads::HISTORY_EPOCHS;
use crate::domain::profiles::conviction;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::enum_value;

enum_value!(
    /// What the missions leaderboard ranks by.
    MissionSort,
    "mission_sort",
    "What to rank by: missions completed, conviction score, or epoch performance (lamports \
     allocated to the wallet over the last 12 closed Echo Pool epochs).",
    [
        MissionsCompleted => "missions_completed",
        ConvictionScore => "conviction_score",
        EpochPerformance => "epoch_performance",
    ]
);

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Entry {
    pub wallet: String,
    pub missions_completed: u64,
    pub conviction_score: f64,
    pub conviction_tier: String,
    pub epoch_performance_lamports: u64,
}

pub async fn leaderboard(
    state: &AppState,
    sort: MissionSort,
    limit: u64,
    offset: u64,
) -> Result<(Vec<Entry>, u64), ApiError> {
    let db = state.store.db();
    let mut entries: BTreeMap<String, Entry> = BTreeMap::new();
    let entry = |entries: &mut BTreeMap<String, Entry>, wallet: &str| {
        entries
            .entry(wallet.to_owned())
            .or_insert_with(|| Entry {
                wallet: wallet.to_owned(),
                conviction_tier: conviction::Tier::Ember.name().into(),
                ..Entry::default()
            })
            .wallet
            .clone()
    };
    let completed: Vec<(String, i64)> = mission_completions::Entity::find()
        .select_only()
        .column(mission_completions::Column::Wallet)
        .column_as(
            Expr::col(mission_completions::Column::MissionId).count(),
            "completed",
        )
        .group_by(mission_completions::Column::Wallet)
        .into_tuple()
        .all(db)
        .await?;
    for (wallet, count) in completed {
        let key = entry(&mut entries, &wallet);
        entries.get_mut(&key).expect("inserted").missions_completed =
            u64::try_from(count).unwrap_or(0);
    }
    for (wallet, score) in conviction::scores(db, None).await? {
        let key = entry(&mut entries, &wallet);
        let e = entries.get_mut(&key).expect("inserted");
        e.conviction_score = score.score;
        e.conviction_tier = score.tier.name().into();
    }
    let recent: Vec<String> = echo_distributions::Entity::find()
        .select_only()
        .column(echo_distributions::Column::EpochAddress)
        .filter(echo_distributions::Column::Mint.is_null())
        .filter(echo_distributions::Column::Status.is_in([CLOSED, ROLLED_OVER]))
        .order_by_desc(echo_distributions::Column::EpochNumber)
        .limit(HISTORY_EPOCHS)
        .into_tuple()
        .all(db)
        .await?;
    let allocated: Vec<(String, i64)> = echo_allocations::Entity::find()
        .select_only()
        .column(echo_allocations::Column::Wallet)
        .column_as(
            narrative_store::sql::sum_bigint(echo_allocations::Column::Amount),
            "allocated",
        )
        .filter(echo_allocations::Column::EpochAddress.is_in(recent))
        .group_by(echo_allocations::Column::Wallet)
        .into_tuple()
        .all(db)
        .await?;
    for (wallet, lamports) in allocated {
        let key = entry(&mut entries, &wallet);
        entries
            .get_mut(&key)
            .expect("inserted")
            .epoch_performance_lamports = u64::try_from(lamports).unwrap_or(0);
    }
    let total = entries.len() as u64;
    let mut ranked: Vec<Entry> = entries.into_values().collect();
    ranked.sort_by(|a, b| {
        let by_figure = match sort {
            MissionSort::MissionsCompleted => b.missions_completed.cmp(&a.missions_completed),
            MissionSort::ConvictionScore => b.conviction_score.total_cmp(&a.conviction_score),
            MissionSort::EpochPerformance => b
                .epoch_performance_lamports
                .cmp(&a.epoch_performance_lamports),
        };
        by_figure.then_with(|| a.wallet.cmp(&b.wallet))
    });
    Ok((
        ranked
            .into_iter()
            .skip(offset as usize)
            .take(limit as usize)
            .collect(),
        total,
    ))
}
