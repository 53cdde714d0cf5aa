//! Leases due jobs and runs them with their kind's handler until shut down, waking when a request
//! enqueues work and otherwise every poll interval.
//!
//! Jobs run in two lanes, each with workers of its own, so neither waits on the other:
//! [`Lane::Outbound`] sends push deliveries and agent webhooks (requests to hosts clients chose,
//! which may never answer), [`Lane::Core`] runs everything else (settlement, the Echo Pool
//! keeper, account refreshes, scoring, drafts, the event follower, announcements).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use super::deliver_push::DeliverPush;
use super::deliver_webhook::DeliverWebhook;
use super::queue::{complete, defer, fail, lease_next_of, postpone, Kinds, LEASE_SECS};
use super::{JobKind, JobOutcome, Registry};
use crate::clock::SharedClock;

/// The kinds that call client-supplied URLs: [`Lane::Outbound`]'s.
pub const OUTBOUND_KINDS: [&str; 2] = [DeliverPush::NAME, DeliverWebhook::NAME];

/// Which jobs a worker takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// Every kind (tests and tools that drain the whole queue).
    Any,
    /// [`OUTBOUND_KINDS`].
    Outbound,
    /// Every other kind.
    Core,
}

impl Lane {
    fn kinds(self) -> Kinds<'static> {
        match self {
            Lane::Any => Kinds::Any,
            Lane::Outbound => Kinds::Only(&OUTBOUND_KINDS),
            Lane::Core => Kinds::Except(&OUTBOUND_KINDS),
        }
    }
}

pub struct Worker {
    store: narrative_store::Store,
    registry: Arc<Registry>,
    clock: SharedClock,
    wake: Arc<Notify>,
    poll: Duration,
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
            lane: Lane::Any,
        }
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
            // On a task of its own, so a handler that panics fails its attempt like one that
            // errs, instead of ending this worker (the core lane has one) for the process's life.
            let registry = self.registry.clone();
            let leased = job.clone();
            let outcome = tokio::spawn(async move { registry.run(&leased).await })
                .await
                .unwrap_or_else(|joined| Err(anyhow::anyhow!("the handler {}", ended(joined))));
            let now = self.clock.now();
            match outcome {
                Ok(JobOutcome::Done) => complete(db, job.id, now).await?,
                Ok(JobOutcome::Later(run_at)) => postpone(db, job.id, run_at, now).await?,
                Ok(JobOutcome::Deferred(run_at)) => defer(db, job.id, run_at, now).await?,
                Err(error) => {
                    tracing::warn!(job = job.id, kind = %job.kind, attempts = job.attempts, error = %format!("{error:#}"), "job failed");
                    fail(db, &job, &format!("{error:#}"), now).await?;
                }
            }
        }
        Ok(ran)
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
