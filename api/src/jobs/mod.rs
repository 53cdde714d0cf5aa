//! The durable job queue: follow-up work kept in the `jobs` table so it survives restarts.
//! `queue` holds the rows, `worker` leases and runs them; each job kind is a typed payload in a
//! file of its own, and whoever does the work registers a [`Handler`] for it (the composition is
//! in `background.rs`), so the queue does not depend on the work it carries.

use std::collections::HashMap;

use narrative_store::entities::jobs;
use sea_orm::ConnectionTrait;
use serde::de::DeserializeOwned;
use serde::Serialize;

pub mod announce;
pub mod borrow_health;
pub mod deliver_push;
pub mod deliver_webhook;
pub mod echo_keeper;
pub mod fan_out_webhook;
pub mod follow_events;
pub mod generate_narrative;
pub mod queue;
pub mod refresh_accounts;
pub mod retention;
pub mod score_narrative;
pub mod settle_narrative;
pub mod shield_keeper;
pub mod worker;

pub use worker::Worker;

/// A kind of job: its name in the queue and its payload.
pub trait JobKind: Serialize + DeserializeOwned + Send + Sync + 'static {
    const NAME: &'static str;

    /// What the job is about, when its progress is looked up by it.
    fn subject(&self) -> Option<String> {
        None
    }
}

/// Puts `job` on the queue, due at `run_at`, inside the caller's transaction when given one.
pub async fn enqueue<K: JobKind>(
    db: &impl ConnectionTrait,
    job: &K,
    now: i64,
    run_at: i64,
) -> Result<i64, sea_orm::DbErr> {
    let payload = payload_of(job)?;
    queue::insert(db, K::NAME, job.subject().as_deref(), payload, now, run_at).await
}

fn payload_of<K: JobKind>(job: &K) -> Result<serde_json::Value, sea_orm::DbErr> {
    serde_json::to_value(job).map_err(|e| sea_orm::DbErr::Custom(format!("job payload: {e}")))
}

/// [`enqueue`] for many jobs of one kind, in a few statements.
pub async fn enqueue_many<K: JobKind>(
    db: &impl ConnectionTrait,
    jobs: &[K],
    now: i64,
    run_at: i64,
) -> Result<(), sea_orm::DbErr> {
    let rows = jobs
        .iter()
        .map(|job| Ok((job.subject(), payload_of(job)?)))
        .collect::<Result<Vec<_>, sea_orm::DbErr>>()?;
    queue::insert_many(db, K::NAME, &rows, now, run_at).await
}

/// A kind of job meant to exist once and run for ever (it answers [`JobOutcome::Later`] with
/// its next due time, never `Done`).
pub trait PerpetualJob: JobKind + Default {
    /// The singleton key of its one row.
    const SINGLETON: &'static str;
}

/// Makes sure the one job of kind `K` exists and is alive, due at `run_at` if it is created or
/// revived (see [`queue::ensure_singleton`]).
pub async fn ensure_perpetual<K: PerpetualJob>(
    db: &impl ConnectionTrait,
    now: i64,
    run_at: i64,
) -> Result<(), sea_orm::DbErr> {
    let payload = payload_of(&K::default())?;
    queue::ensure_singleton(db, K::NAME, K::SINGLETON, payload, now, run_at).await
}

/// What a run of a job came to, short of failing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobOutcome {
    Done,
    /// Not yet (waiting on the ledger's clock, say): run again at this unix time. Waiting is
    /// not failing, so the attempts start over.
    Later(i64),
    /// Not run at all (its receiver's host is skipped by the breaker): run again at this unix
    /// time with the attempts it had, so a host that never recovers still kills its jobs
    /// after their attempts instead of deferring them for ever.
    Deferred(i64),
}

/// A leased job as its handler sees it.
#[derive(Debug, Clone)]
pub struct Leased<K> {
    pub id: i64,
    /// This run's attempt, from 1.
    pub attempt: i32,
    pub job: K,
}

/// Does the work of jobs of kind `K`. An error is a failed attempt, retried with backoff.
#[async_trait::async_trait]
pub trait Handler<K: JobKind>: Send + Sync {
    async fn run(&self, job: Leased<K>) -> anyhow::Result<JobOutcome>;
}

/// A handler with its payload type erased, so the worker can hold handlers of every kind.
#[async_trait::async_trait]
trait Run: Send + Sync {
    async fn run(&self, row: &jobs::Model) -> anyhow::Result<JobOutcome>;
}

struct Typed<K, H> {
    handler: H,
    kind: std::marker::PhantomData<fn() -> K>,
}

#[async_trait::async_trait]
impl<K: JobKind, H: Handler<K>> Run for Typed<K, H> {
    async fn run(&self, row: &jobs::Model) -> anyhow::Result<JobOutcome> {
        let job: K = serde_json::from_value(row.payload.clone())
            .map_err(|e| anyhow::anyhow!("{} payload does not parse: {e}", K::NAME))?;
        self.handler
            .run(Leased {
                id: row.id,
                attempt: row.attempts,
                job,
            })
            .await
    }
}

/// The handler of each kind, by name.
#[derive(Default)]
pub struct Registry {
    handlers: HashMap<&'static str, Box<dyn Run>>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Adds the handler of kind `K`.
    pub fn with<K: JobKind>(mut self, handler: impl Handler<K> + 'static) -> Registry {
        self.handlers.insert(
            K::NAME,
            Box::new(Typed {
                handler,
                kind: std::marker::PhantomData,
            }),
        );
        self
    }

    /// Runs a leased row with its kind's handler; an unknown kind is a failure.
    pub async fn run(&self, row: &jobs::Model) -> anyhow::Result<JobOutcome> {
        match self.handlers.get(row.kind.as_str()) {
            Some(handler) => handler.run(row).await,
            None => anyhow::bail!("no handler for job kind {}", row.kind),
        }
    }
}
