//! Scoring a published narrative (spec 2.1 `score`, 0 while pending), run by the job queue
//! after publish. The score is the mean of two 0–100 measures, kept with it in the history:
//! originality (100 × (1 − the highest similarity to another published thesis)) and the
//! uncertainty the publish review gave. A scored narrative never shows 0: the floor is 1.

use anyhow::Context;
use narrative_store::entities::{narrative_score_history, narratives};
use narrative_store::Store;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::clock::SharedClock;
use crate::jobs::score_narrative::ScoreNarrative;
use crate::jobs::{Handler, JobOutcome, Leased};

/// Theses compared against, newest first.
const COMPARED: u64 = 5_000;

pub fn combine(originality: f64, uncertainty: f64) -> f64 {
    ((originality + uncertainty) / 2.0)
        .round()
        .clamp(1.0, 100.0)
}

/// Runs `score_narrative`.
pub struct Scorer {
    pub store: Store,
    pub clock: SharedClock,
}

#[async_trait::async_trait]
impl Handler<ScoreNarrative> for Scorer {
    async fn run(&self, job: Leased<ScoreNarrative>) -> anyhow::Result<JobOutcome> {
        score(
            &self.store,
            &job.job.narrative_id.to_string(),
            self.clock.now(),
        )
        .await?;
        Ok(JobOutcome::Done)
    }
}

async fn score(store: &Store, id: &str, now: i64) -> anyhow::Result<()> {
    let db = store.db();
    let narrative = narratives::Entity::find_by_id(id.to_owned())
        .one(db)
        .await?
        .context("the narrative is gone")?;
    let others: Vec<(String, String)> = narratives::Entity::find()
        .select_only()
        .column(narratives::Column::Thesis)
        .column(narratives::Column::Category)
        .filter(narratives::Column::Id.ne(id))
        .order_by_desc(narratives::Column::CreatedAt)
        .limit(COMPARED)
        .into_tuple()
        .all(db)
        .await?;
    let originality = crate::domain::narratives::originality::check(
        &narrative.thesis,
        others.iter().map(|(t, c)| (t.as_str(), c.as_str())),
    )
    .score;
    let uncertainty = narrative.uncertainty_score;
    let score = combine(originality, uncertainty);
    let txn = store.begin_write().await?;
    narratives::Entity::update_many()
        .col_expr(narratives::Column::Score, score.into())
        .filter(narratives::Column::Id.eq(id))
        .exec(&txn)
        .await?;
    narrative_score_history::Entity::insert(narrative_score_history::ActiveModel {
        narrative_id: Set(id.to_owned()),
        score: Set(score),
        originality: Set(originality),
        uncertainty: Set(uncertainty),
        recorded_at: Set(now),
        ..Default::default()
    })
    .exec_without_returning(&txn)
    .await?;
    txn.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::combine;

    #[test]
    fn the_score_is_the_mean_and_never_the_pending_zero() {
        assert_eq!(combine(100.0, 80.0), 90.0);
        assert_eq!(combine(35.0, 30.0), 33.0);
        assert_eq!(combine(0.0, 0.0), 1.0);
    }
}
