//! Leases due jobs and runs them with their kind's handler until shut down, waking when a request
//! enqueues work and otherwise every poll interval. While a handler runs, its worker renews the
//! lease (every third of it), so a run longer than one lease is not taken over by another
//! worker; a worker that finds its lease gone (it could not renew in time, and another took the
//! job) stops the handler and writes nothing about the job.
//!
//! Jobs run in three lanes, each with workers of its own, so none waits on another:
//! [`Lane::Outbound`] sends push deliveries and agent webhooks (requests to hosts clients chose,
//! which may never answer) and fans webhook events out into deliveries, [`Lane::Drafts`] asks the AI provider for the drafts anyone with a
//! key may request (each call may take the chat client's 30 s), and [`Lane::Core`] runs
//! everything else (settlement, the Echo Pool and shield keepers, account refreshes, borrow
//! health, scoring, the event follower, announcements, retention): only the ledger and the
//! store, whose work no client can pile up behind a slow third party.

use std::sync::Arc;
use std::time::Duration;

use narrative_store::entities::jobs;
use tokio::sync::Notify;

use super::deliver_push::DeliverPush;
use super::deliver_webhook::DeliverWebhook;
use super::fan_out_webhook::FanOutWebhook;
use super::generate_narrative::GenerateNarrative;
use super::queue::{complete, defer, fail, lease_next_of, postpone, renew, Kinds, LEASE_SECS};
use super::{JobKind, JobOutcome, Registry};
use crate::clock::SharedClock;

/// The kinds that call client-supplied URLs, and the fan-out that queues webhook deliveries:
/// [`Lane::Outbound`]'s.
pub const OUTBOUND_KINDS: [&str; 3] =
    [DeliverPush::NAME, DeliverWebhook::NAME, FanOutWebhook::NAME];
/// The kinds that wait on the AI provider: [`Lane::Drafts`]'.
pub const DRAFT_KINDS: [&str; 1] = [GenerateNarrative::NAME];
/// Every kind [`Lane::Core`] leaves to another lane.
const SIDE_LANE_KINDS: [&str; 4] = [
    OUTBOUND_KINDS[0],
    OUTBOUND_KINDS[1],
    OUTBOUND_KINDS[2],
    DRAFT_KINDS[0],
];

/// Which jobs a worker takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// Every kind (tests and tools that drain the whole queue).
    Any,
    /// [`OUTBOUND_KINDS`].
    Outbound,
    /// [`DRAFT_KINDS`].
    Drafts,
    /// Every other kind.
    Core,
}

impl Lane {
    fn kinds(self) -> Kinds<'static> {
        match self {
            Lane::Any => Kinds::Any,
            Lane::Outbound => Kinds::Only(&OUTBOUND_KINDS),
            Lane::Drafts => Kinds::Only(&DRAFT_KINDS),
            Lane::Core => Kinds::Except(&SIDE_LANE_KINDS),
        }
    }
}

pub struct Worker {
    store: narrative_store::Store,
    registry: Arc<Registry>,
    clock: SharedClock,
    wake: Arc<Notify>,
    poll: Duration,
    renew_every: Duration,
    lane: Lane,
}

impl Worker {
    pub fn new(
        store: narrative_store::Store,
        registry: Arc<Registry>,
        clock: SharedClock,
        wake: Arc<Notify>,
    ) -> Self {
        Worker {
            store,
            registry,
            clock,
            wake,
            poll: Duration::from_millis(500),
            renew_every: Duration::from_secs(LEASE_SECS as u64 / 3),
            lane: Lane::Any,
        }
    }

    /// This worker, renewing a running job's lease every `every` (a third of the lease by
    /// default; tests renew often, since their clock jumps past a lease at once).
    pub fn renewing_every(mut self, every: Duration) -> Self {
        self.renew_every = every;
        self
    }

    /// This worker, taking only `lane`'s jobs.
    pub fn in_lane(mut self, lane: Lane) -> Self {
        self.lane = lane;
        self
    }

    /// Runs every job due now; returns how many ran (tests call this to drain the queue).
    pub async fn run_due(&self) -> Result<usize, sea_orm::DbErr> {
        let db = self.store.db();
        let mut ran = 0;
        while let Some(job) =
            lease_next_of(db, self.lane.kinds(), LEASE_SECS, self.clock.now()).await?
        {
            ran += 1;
            let Some(outcome) = self.run_holding(&job).await? else {
                tracing::warn!(job = job.id, kind = %job.kind, "job's lease lost to another worker: its run was stopped");
                continue;
            };
            let now = self.clock.now();
            let held = match outcome {
                Ok(JobOutcome::Done) => complete(db, &job, now).await?,
                Ok(JobOutcome::Later(run_at)) => postpone(db, &job, run_at, now).await?,
                Ok(JobOutcome::Deferred(run_at)) => defer(db, &job, run_at, now).await?,
                Err(error) => {
                    tracing::warn!(job = job.id, kind = %job.kind, attempts = job.attempts, error = %format!("{error:#}"), "job failed");
                    fail(db, &job, &format!("{error:#}"), now).await?
                }
            };
            if !held {
                tracing::warn!(job = job.id, kind = %job.kind, "job's lease lost to another worker before its outcome was written: left to that worker");
            }
        }
        Ok(ran)
    }

    /// Runs leased `job` with its handler, renewing the lease meanwhile: the handler's outcome,
    /// or `None` when a renewal found the lease taken over (the handler is then stopped). The
    /// handler runs on a task of its own, so one that panics fails its attempt like one that
    /// errs, instead of ending this worker (the core lane has one) for the process's life.
    async fn run_holding(
        &self,
        job: &jobs::Model,
    ) -> Result<Option<anyhow::Result<JobOutcome>>, sea_orm::DbErr> {
        let registry = self.registry.clone();
        let leased = job.clone();
        let mut handler = tokio::spawn(async move { registry.run(&leased).await });
        let mut renewals = tokio::time::interval(self.renew_every);
        renewals.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The first tick is at once; the lease was just taken.
        renewals.tick().await;
        loop {
            tokio::select! {
                joined = &mut handler => {
                    return Ok(Some(joined.unwrap_or_else(|joined| {
                        Err(anyhow::anyhow!("the handler {}", ended(joined)))
                    })));
                }
                _ = renewals.tick() => {
                    match renew(self.store.db(), job, LEASE_SECS, self.clock.now()).await {
                        Ok(true) => {}
                        Ok(false) => {
                            handler.abort();
                            return Ok(None);
                        }
                        // The database may be back before the lease runs out: the handler goes
                        // on, and the next renewal (or the outcome's fenced write) tells.
                        Err(error) => {
                            tracing::warn!(job = job.id, %error, "job's lease could not be renewed");
                        }
                    }
                }
            }
        }
    }

    /// Runs every due job until `shutdown`, waking when work is enqueued.
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

/// How a handler's task ended without an answer: its panic's message, when it left one.
fn ended(joined: tokio::task::JoinError) -> String {
    if !joined.is_panic() {
        return "was cancelled".into();
    }
    let panic = joined.into_panic();
    let message = panic
        .downcast_ref::<&str>()
        .map(|m| (*m).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned());
    match message {
        Some(message) => format!("panicked: {message}"),
        None => "panicked".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_core_lane_leaves_exactly_the_other_lanes_kinds() {
        let mut others: Vec<&str> = OUTBOUND_KINDS.iter().chain(&DRAFT_KINDS).copied().collect();
        let mut left = SIDE_LANE_KINDS.to_vec();
        others.sort_unstable();
        left.sort_unstable();
        assert_eq!(left, others);
    }
}
