//! The durable job queue: follow-up work stored in the `jobs` table, so it survives restarts.
//! A worker leases one job at a time with a conditional update (so two workers, or two
//! processes, never run the same job at once), runs it, and marks it done, or schedules a retry
//! with exponential backoff, or marks it dead after [`MAX_ATTEMPTS`]. A lease that expires (a
//! worker that died mid-job) makes the job claimable again; handlers are idempotent.

use std::sync::Arc;
use std::time::Duration;

use narrative_store::entities::jobs;
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ActiveValue::NotSet, ActiveValue::Set, ColumnTrait, Condition, ConnectionTrait, EntityTrait,
    QueryFilter, QueryOrder, QuerySelect,
};
use serde_json::Value;
use tokio::sync::Notify;

use crate::time::now;

/// Attempts before a job is marked `dead`.
pub const MAX_ATTEMPTS: i32 = 8;
/// How long a worker owns a job it leased.
pub const LEASE_SECS: i64 = 60;

/// Puts a job on the queue (inside the caller's transaction when given one).
pub async fn enqueue(
    db: &impl ConnectionTrait,
    kind: &str,
    payload: Value,
    run_at: i64,
) -> Result<i64, sea_orm::DbErr> {
    enqueue_about(db, kind, None, payload, run_at).await
}

/// [`enqueue`] for a job about `subject`, so that its progress can be looked up by it.
pub async fn enqueue_about(
    db: &impl ConnectionTrait,
    kind: &str,
    subject: Option<&str>,
    payload: Value,
    run_at: i64,
) -> Result<i64, sea_orm::DbErr> {
    let now = now();
    let inserted = jobs::Entity::insert(jobs::ActiveModel {
        id: NotSet,
        kind: Set(kind.to_owned()),
        subject: Set(subject.map(str::to_owned)),
        payload: Set(payload),
        status: Set("queued".into()),
        attempts: Set(0),
        run_at: Set(run_at),
        locked_until: Set(None),
        last_error: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
    })
    .exec(db)
    .await?;
    Ok(inserted.last_insert_id)
}

/// Jobs that may be taken at `now`: queued and due, or running with an expired lease.
fn claimable(now: i64) -> Condition {
    Condition::any()
        .add(
            Condition::all()
                .add(jobs::Column::Status.eq("queued"))
                .add(jobs::Column::RunAt.lte(now)),
        )
        .add(
            Condition::all()
                .add(jobs::Column::Status.eq("running"))
                .add(jobs::Column::LockedUntil.lt(now)),
        )
}

/// Leases the next due job for `lease_secs`, if any.
pub async fn lease_next(
    db: &impl ConnectionTrait,
    lease_secs: i64,
) -> Result<Option<jobs::Model>, sea_orm::DbErr> {
    loop {
        let now = now();
        let Some(candidate) = jobs::Entity::find()
            .filter(claimable(now))
            .order_by_asc(jobs::Column::RunAt)
            .order_by_asc(jobs::Column::Id)
            .limit(1)
            .one(db)
            .await?
        else {
            return Ok(None);
        };
        // Only one worker's update matches: the others see zero rows and look again.
        let taken = jobs::Entity::update_many()
            .col_expr(jobs::Column::Status, Expr::value("running"))
            .col_expr(jobs::Column::LockedUntil, Expr::value(now + lease_secs))
            .col_expr(
                jobs::Column::Attempts,
                Expr::col(jobs::Column::Attempts).add(1),
            )
            .col_expr(jobs::Column::UpdatedAt, Expr::value(now))
            .filter(jobs::Column::Id.eq(candidate.id))
            .filter(claimable(now))
            .exec(db)
            .await?;
        if taken.rows_affected == 1 {
            return jobs::Entity::find_by_id(candidate.id).one(db).await;
        }
    }
}

pub async fn complete(db: &impl ConnectionTrait, id: i64) -> Result<(), sea_orm::DbErr> {
    jobs::Entity::update_many()
        .col_expr(jobs::Column::Status, Expr::value("done"))
        .col_expr(jobs::Column::LockedUntil, Expr::value(Option::<i64>::None))
        .col_expr(jobs::Column::UpdatedAt, Expr::value(now()))
        .filter(jobs::Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}

/// Seconds before attempt `attempts + 1`: 2, 4, 8 … capped at ten minutes.
pub fn backoff_secs(attempts: i32) -> i64 {
    Ord::min(2i64.saturating_pow(attempts.clamp(1, 30) as u32), 600)
}

/// Records a failure: retried later, or `dead` after [`MAX_ATTEMPTS`].
pub async fn fail(
    db: &impl ConnectionTrait,
    job: &jobs::Model,
    error: &str,
) -> Result<(), sea_orm::DbErr> {
    let now = now();
    let dead = job.attempts >= MAX_ATTEMPTS;
    jobs::Entity::update_many()
        .col_expr(
            jobs::Column::Status,
            Expr::value(if dead { "dead" } else { "queued" }),
        )
        .col_expr(
            jobs::Column::RunAt,
            Expr::value(now + backoff_secs(job.attempts)),
        )
        .col_expr(jobs::Column::LockedUntil, Expr::value(Option::<i64>::None))
        .col_expr(jobs::Column::LastError, Expr::value(Some(error.to_owned())))
        .col_expr(jobs::Column::UpdatedAt, Expr::value(now))
        .filter(jobs::Column::Id.eq(job.id))
        .exec(db)
        .await?;
    Ok(())
}

/// What a run of a job came to, short of failing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobOutcome {
    Done,
    /// Not yet (waiting on the ledger's clock, say): run again at this unix time. Waiting is
    /// not failing, so the attempts start over.
    Later(i64),
}

/// What runs a job of some kind.
#[async_trait::async_trait]
pub trait JobHandler: Send + Sync {
    async fn run(&self, job: &jobs::Model) -> anyhow::Result<JobOutcome>;
}

/// Puts a leased job back to wait until `run_at`, its attempts reset.
pub async fn postpone(
    db: &impl ConnectionTrait,
    id: i64,
    run_at: i64,
) -> Result<(), sea_orm::DbErr> {
    jobs::Entity::update_many()
        .col_expr(jobs::Column::Status, Expr::value("queued"))
        .col_expr(jobs::Column::RunAt, Expr::value(run_at))
        .col_expr(jobs::Column::Attempts, Expr::value(0))
        .col_expr(jobs::Column::LockedUntil, Expr::value(Option::<i64>::None))
        .col_expr(jobs::Column::UpdatedAt, Expr::value(now()))
        .filter(jobs::Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}

/// Leases and runs jobs until shut down, waking on [`Worker::notify`] or every poll interval.
pub struct Worker {
    store: narrative_store::Store,
    handler: Arc<dyn JobHandler>,
    wake: Arc<Notify>,
    poll: Duration,
    lease_secs: i64,
}

impl Worker {
    pub fn new(
        store: narrative_store::Store,
        handler: Arc<dyn JobHandler>,
        wake: Arc<Notify>,
    ) -> Self {
        Worker {
            store,
            handler,
            wake,
            poll: Duration::from_millis(500),
            lease_secs: LEASE_SECS,
        }
    }

    /// How long this worker owns a job it leased (tests shorten it).
    pub fn with_lease_secs(mut self, lease_secs: i64) -> Self {
        self.lease_secs = lease_secs;
        self
    }

    /// Runs every job due now; returns how many ran (tests call this to drain the queue).
    pub async fn run_due(&self) -> Result<usize, sea_orm::DbErr> {
        let db = self.store.db();
        let mut ran = 0;
        while let Some(job) = lease_next(db, self.lease_secs).await? {
            ran += 1;
            match self.handler.run(&job).await {
                Ok(JobOutcome::Done) => complete(db, job.id).await?,
                Ok(JobOutcome::Later(run_at)) => postpone(db, job.id, run_at).await?,
                Err(error) => {
                    tracing::warn!(job = job.id, kind = %job.kind, attempts = job.attempts, error = %format!("{error:#}"), "job failed");
                    fail(db, &job, &format!("{error:#}")).await?;
                }
            }
        }
        Ok(ran)
    }

    pub async fn run(self, shutdown: impl std::future::Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            if let Err(error) = self.run_due().await {
                tracing::warn!(%error, "job queue unavailable");
            }
            tokio::select! {
                _ = &mut shutdown => return,
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(self.poll) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::backoff_secs;

    #[test]
    fn backoff_doubles_up_to_ten_minutes() {
        assert_eq!(backoff_secs(1), 2);
        assert_eq!(backoff_secs(2), 4);
        assert_eq!(backoff_secs(5), 32);
        assert_eq!(backoff_secs(10), 600);
        assert_eq!(backoff_secs(40), 600);
    }
}
