//! The job queue as operators see it (`/admin/queues`): jobs by kind and status, the latest
//! ones with their last errors, and the two actions, retry and cancel
//! (`crate::jobs::queue::{retry, cancel}`), each logged.

use narrative_store::entities::jobs;
use poem::http::StatusCode;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use serde_json::json;

use crate::domain::admin::{log, Operator};
use crate::error::ApiError;
pub use crate::jobs::queue::{cancellable, retryable};
use crate::state::AppState;

/// Every status a job can be in, in the order the page shows them.
pub const STATUSES: [&str; 5] = ["queued", "running", "dead", "done", "cancelled"];
/// Jobs one page lists at most.
pub const PAGE: u64 = 100;

/// The number of jobs of each (kind, status), sorted.
pub async fn counts(state: &AppState) -> Result<Vec<(String, String, i64)>, ApiError> {
    let rows: Vec<(String, String, i64)> = jobs::Entity::find()
        .select_only()
        .column(jobs::Column::Kind)
        .column(jobs::Column::Status)
        .column_as(jobs::Column::Id.count(), "n")
        .group_by(jobs::Column::Kind)
        .group_by(jobs::Column::Status)
        .order_by_asc(jobs::Column::Kind)
        .order_by_asc(jobs::Column::Status)
        .into_tuple()
        .all(state.store.db())
        .await?;
    Ok(rows)
}

/// What the page lists: a kind and a status, either or both.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub kind: Option<String>,
    pub status: Option<String>,
}

/// The latest jobs matching `filter` (most recently changed first), at most [`PAGE`].
pub async fn latest(state: &AppState, filter: &Filter) -> Result<Vec<jobs::Model>, ApiError> {
    let mut query = jobs::Entity::find();
    if let Some(kind) = &filter.kind {
        query = query.filter(jobs::Column::Kind.eq(kind.as_str()));
    }
    if let Some(status) = &filter.status {
        query = query.filter(jobs::Column::Status.eq(status.as_str()));
    }
    Ok(query
        .order_by_desc(jobs::Column::UpdatedAt)
        .order_by_desc(jobs::Column::Id)
        .limit(PAGE)
        .all(state.store.db())
        .await?)
}

/// What an operator can do to a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobAction {
    Retry,
    Cancel,
}

impl JobAction {
    pub fn name(self) -> &'static str {
        match self {
            JobAction::Retry => "retry",
            JobAction::Cancel => "cancel",
        }
    }

    /// The refusal's code when the job's state does not allow it.
    fn refused_code(self) -> &'static str {
        match self {
            JobAction::Retry => "job_not_retryable",
            JobAction::Cancel => "job_not_cancellable",
        }
    }
}

/// Retries or cancels job `id`: 404 when there is none, 409 `job_not_retryable` /
/// `job_not_cancellable` when its state does not allow it (a running job, a finished one, a
/// perpetual one for cancel).
pub async fn act(
    state: &AppState,
    operator: &Operator,
    id: i64,
    action: JobAction,
) -> Result<jobs::Model, ApiError> {
    let now = state.now();
    let txn = state.store.begin_write().await?;
    let before = jobs::Entity::find_by_id(id)
        .one(&txn)
        .await?
        .ok_or_else(|| ApiError::not_found("job"))?;
    let done = match action {
        JobAction::Retry => crate::jobs::queue::retry(&txn, id, now).await?,
        JobAction::Cancel => crate::jobs::queue::cancel(&txn, id, now).await?,
    };
    if !done {
        return Err(ApiError::coded(
            StatusCode::CONFLICT,
            action.refused_code(),
            format!(
                "a {} {} job cannot be {}",
                before.status,
                before.kind,
                match action {
                    JobAction::Retry => "retried",
                    JobAction::Cancel => "cancelled",
                }
            ),
        )
        .with("status", before.status.as_str()));
    }
    log(
        &txn,
        operator,
        &format!("job.{}", action.name()),
        &id.to_string(),
        json!({"kind": before.kind, "was": before.status, "last_error": before.last_error}),
        now,
    )
    .await?;
    txn.commit().await?;
    if action == JobAction::Retry {
        state.chain.jobs_wake.notify_one();
    }
    jobs::Entity::find_by_id(id)
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::internal("a job vanished"))
}
