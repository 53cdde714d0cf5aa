//! The operators' dashboard (spec 5.6): the job queue's counts and health, how far behind the
//! indexer's checkpoints are, the halt flags, whether the ledger answers, and the programs'
//! admin changes waiting for their timelock.

use std::time::Duration;

use narrative_store::entities::{indexer_checkpoints, jobs};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use crate::domain::admin::pending_changes::{self, PendingAdminChange};
use crate::domain::admin::queue_monitor;
use crate::domain::system::{self, ComponentState};
use crate::error::ApiError;
use crate::state::AppState;

/// A queued job due longer ago than this means the workers are not keeping up.
pub const BACKLOG_SECS: i64 = 300;

pub struct JobCount {
    pub kind: String,
    pub status: String,
    pub count: i64,
}

/// The queue's health: `ok`, or `degraded` with a dead job or a backlog.
pub struct QueueHealth {
    pub status: &'static str,
    pub dead: i64,
    /// Seconds the oldest due, queued job has waited past its time (0 when none waits).
    pub oldest_due_secs: i64,
}

pub struct IndexerLag {
    pub name: String,
    pub slot: i64,
    pub updated_at: i64,
    /// Seconds since the checkpoint last moved.
    pub lag_secs: i64,
}

/// How long the dashboard waits for the node's answer.
pub const NODE_PROBE_TIMEOUT: Duration = Duration::from_secs(2);

pub struct Dashboard {
    pub jobs: Vec<JobCount>,
    pub queue: QueueHealth,
    pub indexer: Vec<IndexerLag>,
    pub components: Vec<ComponentState>,
    /// The ledger answered a blockhash request within [`NODE_PROBE_TIMEOUT`] (a blockhash the
    /// prepares fetched in the last 10 s counts).
    pub node_reachable: bool,
    pub pending_admin_changes: Vec<PendingAdminChange>,
}

/// The queue's part of the dashboard: jobs by kind and status, and its health (what the queue
/// page shows too).
pub struct QueueBoard {
    pub jobs: Vec<JobCount>,
    pub queue: QueueHealth,
}

pub async fn queue_board(state: &AppState) -> Result<QueueBoard, ApiError> {
    let now = state.now();
    let jobs: Vec<JobCount> = queue_monitor::counts(state)
        .await?
        .into_iter()
        .map(|(kind, status, count)| JobCount {
            kind,
            status,
            count,
        })
        .collect();
    let dead = jobs
        .iter()
        .filter(|j| j.status == "dead")
        .map(|j| j.count)
        .sum();
    let oldest_due = jobs::Entity::find()
        .filter(jobs::Column::Status.eq("queued"))
        .filter(jobs::Column::RunAt.lte(now))
        .order_by_asc(jobs::Column::RunAt)
        .one(state.store.db())
        .await?;
    let oldest_due_secs = oldest_due.map_or(0, |job| now - job.run_at);
    let queue = QueueHealth {
        status: if dead > 0 || oldest_due_secs > BACKLOG_SECS {
            "degraded"
        } else {
            "ok"
        },
        dead,
        oldest_due_secs,
    };
    Ok(QueueBoard { jobs, queue })
}

pub async fn dashboard(state: &AppState) -> Result<Dashboard, ApiError> {
    let db = state.store.db();
    let now = state.now();
    let QueueBoard { jobs, queue } = queue_board(state).await?;
    let indexer = indexer_checkpoints::Entity::find()
        .order_by_asc(indexer_checkpoints::Column::Name)
        .all(db)
        .await?
        .into_iter()
        .map(|c| IndexerLag {
            lag_secs: (now - c.updated_at).max(0),
            name: c.name,
            slot: c.slot,
            updated_at: c.updated_at,
        })
        .collect();
    let components = system::status(state).await?;
    let pending_admin_changes = pending_changes::pending(db).await?;
    // A node that accepts the connection and never answers would hold the dashboard for the
    // RPC client's whole timeout, when the dashboard is most needed.
    let node_reachable =
        tokio::time::timeout(NODE_PROBE_TIMEOUT, state.chain.ledger.latest_blockhash())
            .await
            .is_ok_and(|answer| answer.is_ok());
    Ok(Dashboard {
        jobs,
        queue,
        indexer,
        components,
        node_reachable,
        pending_admin_changes,
    })
}
