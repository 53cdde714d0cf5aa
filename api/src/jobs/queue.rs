//! The queue's rows in the `jobs` table: enqueue, lease (a conditional update, so two workers or
//! two processes never run one job at once), renew, complete, fail with backoff (dead after
//! [`MAX_ATTEMPTS`]), postpone, and an operator's retry and cancel. A lease that expires (a
//! worker that died mid-job) makes the job claimable again; handlers are idempotent. Each lease
//! counts itself into the row (`leases`), and what a worker writes about its job afterwards
//! (renewal, outcome) applies only while the row still holds that count: a worker whose lease
//! ran out cannot overwrite the run of the worker that took the job over. Every call takes the
//! time from its caller.

use narrative_store::entities::jobs;
use sea_orm::sea_query::{Expr, ExprTrait, OnConflict};
use sea_orm::{
    ActiveValue::NotSet, ActiveValue::Set, ColumnTrait, Condition, ConnectionTrait, EntityTrait,
    QueryFilter, QueryOrder, QuerySelect,
};
use serde_json::Value;

/// Attempts before a job is marked `dead`.
pub const MAX_ATTEMPTS: i32 = 8;
/// How long a worker owns a job it leased.
pub const LEASE_SECS: i64 = 60;

/// Puts a job of `kind` on the queue, about `subject` when given (so its progress can be looked
/// up by it), due at `run_at`; inside the caller's transaction when given one.
pub async fn insert(
    db: &impl ConnectionTrait,
    kind: &str,
    subject: Option<&str>,
    payload: Value,
    now: i64,
    run_at: i64,
) -> Result<i64, sea_orm::DbErr> {
    let row = NewJob {
        kind,
        subject,
        singleton: None,
    }
    .row(payload, now, run_at);
    Ok(jobs::Entity::insert(row).exec(db).await?.last_insert_id)
}

/// The most rows one [`insert_many`] statement writes (eleven parameters each: well under
/// every database's limit).
const INSERT_CHUNK: usize = 500;

/// Queues a job of `kind` per `(subject, payload)`, due at `run_at`, a statement per 500: what
/// [`insert`] does for each, without a round trip per row.
pub async fn insert_many(
    db: &impl ConnectionTrait,
    kind: &str,
    jobs: &[(Option<String>, Value)],
    now: i64,
    run_at: i64,
) -> Result<(), sea_orm::DbErr> {
    for chunk in jobs.chunks(INSERT_CHUNK) {
        let rows = chunk.iter().map(|(subject, payload)| {
            NewJob {
                kind,
                subject: subject.as_deref(),
                singleton: None,
            }
            .row(payload.clone(), now, run_at)
        });
        jobs::Entity::insert_many(rows)
            .exec_without_returning(db)
            .await?;
    }
    Ok(())
}

/// A job row about to be queued.
struct NewJob<'a> {
    kind: &'a str,
    subject: Option<&'a str>,
    singleton: Option<&'a str>,
}

impl NewJob<'_> {
    fn row(self, payload: Value, now: i64, run_at: i64) -> jobs::ActiveModel {
        jobs::ActiveModel {
            id: NotSet,
            kind: Set(self.kind.to_owned()),
            subject: Set(self.subject.map(str::to_owned)),
            payload: Set(payload),
            status: Set("queued".into()),
            attempts: Set(0),
            run_at: Set(run_at),
            locked_until: Set(None),
            last_error: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
            singleton: Set(self.singleton.map(str::to_owned)),
            leases: Set(0),
        }
    }
}

/// Makes sure the one job of `kind` named `singleton` (a perpetual job, such as the Echo Pool
/// keeper) exists and is alive: inserted due at `run_at`, or, when its row is `done` or `dead`,
/// revived (queued, due at `run_at`, attempts and error cleared). A row that is queued or
/// running is left as it is, so any number of processes starting at once keep one job.
pub async fn ensure_singleton(
    db: &impl ConnectionTrait,
    kind: &str,
    singleton: &str,
    payload: Value,
    now: i64,
    run_at: i64,
) -> Result<(), sea_orm::DbErr> {
    use jobs::Column;
    let row = NewJob {
        kind,
        subject: None,
        singleton: Some(singleton),
    }
    .row(payload, now, run_at);
    jobs::Entity::insert(row)
        .on_conflict(
            OnConflict::column(Column::Singleton)
                .update_columns([
                    Column::Status,
                    Column::Attempts,
                    Column::RunAt,
                    Column::LastError,
                    Column::UpdatedAt,
                    Column::Payload,
                ])
                .action_and_where(Expr::col((jobs::Entity, Column::Status)).is_in(["done", "dead"]))
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(())
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

/// Which kinds of job a lease may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kinds<'a> {
    Any,
    Only(&'a [&'a str]),
    Except(&'a [&'a str]),
}

impl Kinds<'_> {
    fn condition(self) -> Condition {
        match self {
            Kinds::Any => Condition::all(),
            Kinds::Only(kinds) => {
                Condition::all().add(jobs::Column::Kind.is_in(kinds.iter().copied()))
            }
            Kinds::Except(kinds) => {
                Condition::all().add(jobs::Column::Kind.is_not_in(kinds.iter().copied()))
            }
        }
    }
}

/// Leases the next job due at `now` for `lease_secs`, if any.
pub async fn lease_next(
    db: &impl ConnectionTrait,
    lease_secs: i64,
    now: i64,
) -> Result<Option<jobs::Model>, sea_orm::DbErr> {
    lease_next_of(db, Kinds::Any, lease_secs, now).await
}

/// [`lease_next`] among the jobs of `kinds`.
pub async fn lease_next_of(
    db: &impl ConnectionTrait,
    kinds: Kinds<'_>,
    lease_secs: i64,
    now: i64,
) -> Result<Option<jobs::Model>, sea_orm::DbErr> {
    loop {
        let Some(candidate) = jobs::Entity::find()
            .filter(claimable(now))
            .filter(kinds.condition())
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
            .col_expr(jobs::Column::Leases, Expr::col(jobs::Column::Leases).add(1))
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

/// Whether a write about `job` (as leased) still applies: the row is running under the lease
/// that `job` took. `false` from the functions below means the lease was lost (it ran out and
/// another worker took the job) and nothing was written.
fn held(job: &jobs::Model) -> Condition {
    Condition::all()
        .add(jobs::Column::Id.eq(job.id))
        .add(jobs::Column::Status.eq("running"))
        .add(jobs::Column::Leases.eq(job.leases))
}

/// Extends the lease of `job` (as leased) to `now + lease_secs`, while it still holds it: a
/// worker renews while its handler runs, so a run longer than one lease is not taken over.
pub async fn renew(
    db: &impl ConnectionTrait,
    job: &jobs::Model,
    lease_secs: i64,
    now: i64,
) -> Result<bool, sea_orm::DbErr> {
    let renewed = jobs::Entity::update_many()
        .col_expr(jobs::Column::LockedUntil, Expr::value(now + lease_secs))
        .filter(held(job))
        .exec(db)
        .await?;
    Ok(renewed.rows_affected == 1)
}

/// Marks `job` (as leased) done, while its lease holds.
pub async fn complete(
    db: &impl ConnectionTrait,
    job: &jobs::Model,
    now: i64,
) -> Result<bool, sea_orm::DbErr> {
    let updated = jobs::Entity::update_many()
        .col_expr(jobs::Column::Status, Expr::value("done"))
        .col_expr(jobs::Column::LockedUntil, Expr::value(Option::<i64>::None))
        .col_expr(jobs::Column::UpdatedAt, Expr::value(now))
        .filter(held(job))
        .exec(db)
        .await?;
    Ok(updated.rows_affected == 1)
}

/// Marks job `id` done while it is still queued: its work was done outside the queue (a
/// confirm's refresh read through at once). A worker that leased it meanwhile finishes it
/// itself (the work is idempotent); `false` then.
pub async fn complete_queued(
    db: &impl ConnectionTrait,
    id: i64,
    now: i64,
) -> Result<bool, sea_orm::DbErr> {
    let updated = jobs::Entity::update_many()
        .col_expr(jobs::Column::Status, Expr::value("done"))
        .col_expr(jobs::Column::UpdatedAt, Expr::value(now))
        .filter(jobs::Column::Id.eq(id))
        .filter(jobs::Column::Status.eq("queued"))
        .exec(db)
        .await?;
    Ok(updated.rows_affected == 1)
}

/// Seconds before attempt `attempts + 1`: 2, 4, 8 … capped at ten minutes.
pub fn backoff_secs(attempts: i32) -> i64 {
    Ord::min(2i64.saturating_pow(attempts.clamp(1, 30) as u32), 600)
}

/// Records a failure at `now`: retried later, or `dead` after [`MAX_ATTEMPTS`]. A perpetual
/// job (one with a singleton key) is never dead: it is revived only when a process starts, so
/// an outage of the node longer than its backoffs would otherwise stop the keepers until a
/// restart. It goes on retrying at the longest backoff, its error on its row. Only while the
/// lease of `job` (as leased) holds.
pub async fn fail(
    db: &impl ConnectionTrait,
    job: &jobs::Model,
    error: &str,
    now: i64,
) -> Result<bool, sea_orm::DbErr> {
    let dead = job.attempts >= MAX_ATTEMPTS && job.singleton.is_none();
    let updated = jobs::Entity::update_many()
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
        .filter(held(job))
        .exec(db)
        .await?;
    Ok(updated.rows_affected == 1)
}

/// Puts `job` (as leased) back to wait until `run_at`, its attempts reset, while its lease
/// holds.
pub async fn postpone(
    db: &impl ConnectionTrait,
    job: &jobs::Model,
    run_at: i64,
    now: i64,
) -> Result<bool, sea_orm::DbErr> {
    requeue(db, job, run_at, Expr::value(0), now).await
}

/// Puts `job` (as leased), which did not run, back to wait until `run_at`, without the attempt
/// its lease counted, while its lease holds.
pub async fn defer(
    db: &impl ConnectionTrait,
    job: &jobs::Model,
    run_at: i64,
    now: i64,
) -> Result<bool, sea_orm::DbErr> {
    let attempts = Expr::col(jobs::Column::Attempts).sub(1);
    requeue(db, job, run_at, attempts, now).await
}

/// Releases the lease of `job`, queued again for `run_at` with `attempts`.
async fn requeue(
    db: &impl ConnectionTrait,
    job: &jobs::Model,
    run_at: i64,
    attempts: impl Into<sea_orm::sea_query::SimpleExpr>,
    now: i64,
) -> Result<bool, sea_orm::DbErr> {
    let updated = jobs::Entity::update_many()
        .col_expr(jobs::Column::Status, Expr::value("queued"))
        .col_expr(jobs::Column::RunAt, Expr::value(run_at))
        .col_expr(jobs::Column::Attempts, attempts.into())
        .col_expr(jobs::Column::LockedUntil, Expr::value(Option::<i64>::None))
        .col_expr(jobs::Column::UpdatedAt, Expr::value(now))
        .filter(held(job))
        .exec(db)
        .await?;
    Ok(updated.rows_affected == 1)
}

/// The states an operator may retry a job from, and cancel it from unless it is perpetual.
const ACTIONABLE: [&str; 2] = ["dead", "queued"];

/// Whether [`retry`] takes `job` as it stands.
pub fn retryable(job: &jobs::Model) -> bool {
    ACTIONABLE.contains(&job.status.as_str())
}

/// Whether `job` stopped without finishing its work: it ran out of attempts (`dead`) or an
/// operator cancelled it.
pub fn gave_up(job: &jobs::Model) -> bool {
    matches!(job.status.as_str(), "dead" | "cancelled")
}

/// Whether [`cancel`] takes `job` as it stands.
pub fn cancellable(job: &jobs::Model) -> bool {
    retryable(job) && job.singleton.is_none()
}

/// An operator's retry: a `dead` job, or a queued one waiting out its backoff, runs at `now`
/// with a fresh budget of attempts. `false` when the job is in neither state.
pub async fn retry(db: &impl ConnectionTrait, id: i64, now: i64) -> Result<bool, sea_orm::DbErr> {
    let updated = jobs::Entity::update_many()
        .col_expr(jobs::Column::Status, Expr::value("queued"))
        .col_expr(jobs::Column::RunAt, Expr::value(now))
        .col_expr(jobs::Column::Attempts, Expr::value(0))
        .col_expr(jobs::Column::LockedUntil, Expr::value(Option::<i64>::None))
        .col_expr(jobs::Column::UpdatedAt, Expr::value(now))
        .filter(jobs::Column::Id.eq(id))
        .filter(jobs::Column::Status.is_in(ACTIONABLE))
        .exec(db)
        .await?;
    Ok(updated.rows_affected == 1)
}

/// An operator's cancel: a queued or `dead` job that is not perpetual becomes `cancelled` and
/// never runs. A running job is not cancelled (its handler is mid-way; it finishes or fails),
/// nor a perpetual one (the service revives it). `false` when the job is not cancellable.
pub async fn cancel(db: &impl ConnectionTrait, id: i64, now: i64) -> Result<bool, sea_orm::DbErr> {
    let updated = jobs::Entity::update_many()
        .col_expr(jobs::Column::Status, Expr::value("cancelled"))
        .col_expr(jobs::Column::LockedUntil, Expr::value(Option::<i64>::None))
        .col_expr(jobs::Column::UpdatedAt, Expr::value(now))
        .filter(jobs::Column::Id.eq(id))
        .filter(jobs::Column::Status.is_in(ACTIONABLE))
        .filter(jobs::Column::Singleton.is_null())
        .exec(db)
        .await?;
    Ok(updated.rows_affected == 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sea_orm::QueryOrder;

    /// More jobs than one statement writes: every one queued once, with its subject and
    /// payload.
    #[tokio::test]
    async fn many_jobs_are_queued_over_several_statements() {
        let db = narrative_store::testing::TestDb::new().await;
        let conn = db.store.db();
        let wanted: Vec<(Option<String>, Value)> = (0..INSERT_CHUNK * 2 + 1)
            .map(|i| (Some(format!("subject-{i:04}")), serde_json::json!({"n": i})))
            .collect();
        insert_many(conn, "score_narrative", &wanted, 10, 20)
            .await
            .unwrap();
        let rows = jobs::Entity::find()
            .order_by_asc(jobs::Column::Subject)
            .all(conn)
            .await
            .unwrap();
        assert_eq!(rows.len(), wanted.len());
        for (row, (subject, payload)) in rows.iter().zip(&wanted) {
            assert_eq!((&row.subject, &row.payload), (subject, payload));
            assert_eq!(
                (row.kind.as_str(), row.status.as_str(), row.run_at),
                ("score_narrative", "queued", 20)
            );
        }
    }

    #[test]
    fn backoff_doubles_up_to_ten_minutes() {
        assert_eq!(backoff_secs(1), 2);
        assert_eq!(backoff_secs(2), 4);
        assert_eq!(backoff_secs(5), 32);
        assert_eq!(backoff_secs(10), 600);
        assert_eq!(backoff_secs(40), 600);
    }
}
