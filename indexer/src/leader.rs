//! One writer among many: every indexer (several `narrative-indexer` processes, or api processes
//! running it in-process behind a load balancer) waits for the lease of its checkpoint name,
//! and only the holder runs the pipeline. A standby retries every `retry` and takes over once the
//! leader's lease is gone: at once on Postgres (the advisory lock dies with the leader's
//! session), after `ttl` on SQLite. A leader that cannot renew its lease stops writing and goes
//! back to waiting.

use std::future::Future;
use std::time::Duration;

use narrative_store::{Lease, Store};
use tracing::{info, warn};

use crate::metrics::Metrics;
use crate::pipeline::{run_pipeline, PipelineConfig};
use crate::source::Source;

#[derive(Debug, Clone, Copy)]
pub struct LeaseConfig {
    /// How often a standby tries to take the lease.
    pub retry: Duration,
    /// SQLite: how long the lease outlives a holder that stopped renewing (renewed every third
    /// of it). Postgres: how often the holder checks its lock is still held.
    pub ttl: Duration,
}

impl Default for LeaseConfig {
    fn default() -> Self {
        LeaseConfig {
            retry: Duration::from_secs(1),
            ttl: Duration::from_secs(5),
        }
    }
}

/// Runs the pipeline whenever this indexer holds the lease of `pipeline.checkpoint_name`, with a
/// fresh source from `new_source` each time it becomes the leader, until `shutdown` resolves.
pub async fn run_as_leader<S, F>(
    store: Store,
    mut new_source: F,
    pipeline: PipelineConfig,
    lease: LeaseConfig,
    metrics: Metrics,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()>
where
    S: Source,
    F: FnMut() -> S,
{
    tokio::pin!(shutdown);
    metrics.leader.set(0);
    loop {
        let mut held = tokio::select! {
            _ = &mut shutdown => return Ok(()),
            held = wait_for_lease(&store, &pipeline.checkpoint_name, lease) => held,
        };
        metrics.leader.set(1);
        info!(checkpoint = %pipeline.checkpoint_name, "leading: this indexer writes");
        let mut lost = false;
        let result = {
            let until_lost_or_stopped = async {
                tokio::select! {
                    _ = &mut shutdown => {}
                    _ = keep(&mut held, lease) => lost = true,
                }
            };
            run_pipeline(
                store.clone(),
                new_source(),
                pipeline.clone(),
                metrics.clone(),
                until_lost_or_stopped,
            )
            .await
        };
        metrics.leader.set(0);
        held.release().await;
        // Stopped, failed, or the source ended: done. Only a lost lease means standing by.
        if !lost || result.is_err() {
            return result;
        }
        warn!(checkpoint = %pipeline.checkpoint_name, "lost the lease; standing by");
    }
}

/// Tries to take the lease every `lease.retry` until it is ours (a database that cannot be
/// asked is asked again).
async fn wait_for_lease(store: &Store, name: &str, lease: LeaseConfig) -> Lease {
    let mut announced = false;
    loop {
        match store.try_lease(name, lease.ttl).await {
            Ok(Some(held)) => return held,
            Ok(None) if !announced => {
                info!(checkpoint = name, "another indexer leads; standing by");
                announced = true;
            }
            Ok(None) => {}
            Err(error) => warn!(%error, "could not ask for the lease"),
        }
        tokio::time::sleep(lease.retry).await;
    }
}

/// Renews the lease every third of its ttl; returns when it is lost. A renewal that cannot be
/// asked (SQLite busy behind a long batch) is retried while the last one still stands.
async fn keep(held: &mut Lease, lease: LeaseConfig) {
    let mut renewed_at = std::time::Instant::now();
    loop {
        tokio::time::sleep(lease.ttl / 3).await;
        match held.renew().await {
            Ok(true) => renewed_at = std::time::Instant::now(),
            Ok(false) => return,
            Err(error) if renewed_at.elapsed() < lease.ttl => {
                warn!(%error, "could not renew the lease; it stands until it expires");
            }
            Err(_) => return,
        }
    }
}
