//! Leases due jobs and runs them with their kind's handler until shut down, waking when a request
//! enqueues work and otherwise every poll interval.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use super::queue::{complete, fail, lease_next, postpone, LEASE_SECS};
use super::{JobOutcome, Registry};
use crate::clock::SharedClock;

pub struct Worker {
    store: narrative_store::Store,
    registry: Arc<Registry>,
    clock: SharedClock,
    wake: Arc<Notify>,
    poll: Duration,
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
        }
    }

    /// Runs every job due now; returns how many ran (tests call this to drain the queue).
    pub async fn run_due(&self) -> Result<usize, sea_orm::DbErr> {
        let db = self.store.db();
        let mut ran = 0;
        while let Some(job) = lease_next(db, LEASE_SECS, self.clock.now()).await? {
            ran += 1;
            let outcome = self.registry.run(&job).await;
            let now = self.clock.now();
            match outcome {
                Ok(JobOutcome::Done) => complete(db, job.id, now).await?,
                Ok(JobOutcome::Later(run_at)) => postpone(db, job.id, run_at, now).await?,
                Err(error) => {
                    tracing::warn!(job = job.id, kind = %job.kind, attempts = job.attempts, error = %format!("{error:#}"), "job failed");
                    fail(db, &job, &format!("{error:#}"), now).await?;
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
