//! Score recalculation (spec 5.6): queues the scoring job (`score_narrative`) again for one
//! narrative, or for every narrative open for resolution; each run recomputes originality
//! against today's theses and appends to the score history.

use std::collections::HashSet;

use narrative_store::entities::{jobs, narratives};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use serde_json::json;

use crate::domain::admin::{log, Operator};
use crate::error::ApiError;
use crate::jobs::score_narrative::ScoreNarrative;
use crate::jobs::JobKind;
use crate::state::AppState;
use crate::values::{NarrativeId, OracleStatus};

/// One call queues at most this many (newest first); call again for older ones by id.
pub const MAX_PER_CALL: u64 = 5_000;

/// Queues the rescoring of `narrative` (404 when unknown), or of the open narratives when
/// `None`, except those whose scoring is queued already; how many were queued.
pub async fn recalculate(
    state: &AppState,
    operator: &Operator,
    narrative: Option<NarrativeId>,
) -> Result<u64, ApiError> {
    let db = state.store.db();
    let ids: Vec<String> = match narrative {
        Some(id) => {
            let found = narratives::Entity::find_by_id(id.to_string())
                .one(db)
                .await?;
            vec![found.ok_or_else(|| ApiError::not_found("narrative"))?.id]
        }
        None => {
            narratives::Entity::find()
                .select_only()
                .column(narratives::Column::Id)
                .filter(narratives::Column::OracleStatus.is_in(OracleStatus::eligible_names()))
                .order_by_desc(narratives::Column::CreatedAt)
                .limit(MAX_PER_CALL)
                .into_tuple()
                .all(db)
                .await?
        }
    };
    let now = state.now();
    let txn = state.store.begin_write().await?;
    // A narrative whose scoring waits to run already will be scored as of that run.
    let waiting: HashSet<String> = jobs::Entity::find()
        .select_only()
        .column(jobs::Column::Subject)
        .filter(jobs::Column::Kind.eq(ScoreNarrative::NAME))
        .filter(jobs::Column::Status.eq("queued"))
        .filter(jobs::Column::Subject.is_in(ids.iter().map(String::as_str)))
        .into_tuple::<Option<String>>()
        .all(&txn)
        .await?
        .into_iter()
        .flatten()
        .collect();
    let scorings = ids
        .iter()
        .filter(|id| !waiting.contains(*id))
        .map(|id| {
            let narrative_id: NarrativeId = id.parse().map_err(ApiError::internal)?;
            Ok(ScoreNarrative { narrative_id })
        })
        .collect::<Result<Vec<_>, ApiError>>()?;
    crate::jobs::enqueue_many(&txn, &scorings, now, now).await?;
    let subject = narrative.map_or_else(|| "open".to_owned(), |id| id.to_string());
    log(
        &txn,
        operator,
        "scores.recalculate",
        &subject,
        json!({"queued": scorings.len()}),
        now,
    )
    .await?;
    txn.commit().await?;
    state.chain.jobs_wake.notify_one();
    Ok(scorings.len() as u64)
}
