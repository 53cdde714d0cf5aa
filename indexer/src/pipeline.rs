//! source → bounded channel → decode → batch (by size and time) → one transaction per batch.
//!
//! The checkpoint written with a batch is the highest slot of the data in it; a (re)started
//! source resumes from the committed checkpoint, replaying that slot, which the store's
//! newer-only upserts and unique event positions make harmless. A failed write is retried
//! with backoff (the bounded channel holds the source back meanwhile); nothing is dropped.

use std::future::Future;
use std::time::{Duration, Instant};

use narrative_store::{Batch, Store};
use tokio::sync::mpsc;
use tracing::{info, warn};

use crate::events::{closures_of, events_of};
use crate::metrics::Metrics;
use crate::source::{Backoff, Envelope, ResumePoint, Source, SourceMessage};

#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// Name of the checkpoint row: one per independent indexer.
    pub checkpoint_name: String,
    /// Messages per batch at most.
    pub batch_size: usize,
    /// How long a batch waits for more messages after its first one.
    pub batch_interval: Duration,
    /// Messages buffered between the source and the writer.
    pub channel_capacity: usize,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            checkpoint_name: "default".into(),
            batch_size: 2_000,
            batch_interval: Duration::from_millis(100),
            channel_capacity: 20_000,
        }
    }
}

/// Runs `source` into `store` until `shutdown` resolves or the source stops.
pub async fn run_pipeline<S: Source>(
    store: Store,
    source: S,
    config: PipelineConfig,
    metrics: Metrics,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let resume = ResumePoint::new(store.checkpoint(&config.checkpoint_name).await?);
    if let Some(slot) = resume.get() {
        metrics.observe_committed_slot(slot);
        info!(slot, "resuming from checkpoint");
    }
    let (tx, mut rx) = mpsc::channel(config.channel_capacity);
    let mut source_task = tokio::spawn(source.run(resume.clone(), tx));
    tokio::pin!(shutdown);
    let mut last_commit = Instant::now();
    loop {
        let received = tokio::select! {
            _ = &mut shutdown => break,
            received = next_batch(&mut rx, &config) => received,
        };
        let Some(envelopes) = received else {
            break;
        };
        let Some(batch) = assemble(&envelopes, &metrics) else {
            continue;
        };
        tokio::select! {
            _ = &mut shutdown => break,
            () = commit(&store, &config, &metrics, &batch) => {}
        }
        if let Some(slot) = batch.checkpoint {
            resume.advance(slot);
            metrics.observe_committed_slot(slot);
        }
        let now = Instant::now();
        for envelope in &envelopes {
            metrics
                .commit_latency_seconds
                .observe(now.duration_since(envelope.received_at).as_secs_f64());
        }
        let elapsed = now.duration_since(last_commit).as_secs_f64().max(1e-6);
        metrics
            .updates_per_second
            .set((batch.len() as f64 / elapsed) as i64);
        last_commit = now;
    }
    // The writer has stopped: the source has nowhere to send; its own error, if it failed,
    // is what ended the pipeline.
    rx.close();
    if source_task.is_finished() {
        return (&mut source_task).await?;
    }
    source_task.abort();
    Ok(())
}

/// Waits for a first message, then takes what arrives until the batch is full or the batch
/// interval has passed. `None` once the source has closed the channel and it is empty.
async fn next_batch(
    rx: &mut mpsc::Receiver<Envelope>,
    config: &PipelineConfig,
) -> Option<Vec<Envelope>> {
    let mut envelopes = Vec::with_capacity(config.batch_size.min(4_096));
    if rx.recv_many(&mut envelopes, config.batch_size).await == 0 {
        return None;
    }
    let deadline = tokio::time::Instant::now() + config.batch_interval;
    while envelopes.len() < config.batch_size {
        let room = config.batch_size - envelopes.len();
        match tokio::time::timeout_at(deadline, rx.recv_many(&mut envelopes, room)).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
    Some(envelopes)
}

/// The store batch for these messages, or `None` when they carry nothing to write.
fn assemble(envelopes: &[Envelope], metrics: &Metrics) -> Option<Batch> {
    let mut batch = Batch::default();
    for envelope in envelopes {
        let message = &envelope.message;
        if let Some(slot) = message.data_slot() {
            batch.checkpoint = Some(batch.checkpoint.map_or(slot, |c| c.max(slot)));
        }
        match message {
            SourceMessage::Account(update) => batch.accounts.push(update.clone()),
            SourceMessage::Closure(closure) => batch.closures.push(*closure),
            SourceMessage::Transaction(tx) => {
                let events = events_of(tx);
                batch.closures.extend(closures_of(&events));
                batch.events.extend(events);
            }
            SourceMessage::Complete(_) => {}
            SourceMessage::Tip(slot) => metrics.observe_source_slot(*slot),
        }
    }
    (!batch.is_empty()).then_some(batch)
}

/// Writes `batch`, retrying with backoff until it is committed.
async fn commit(store: &Store, config: &PipelineConfig, metrics: &Metrics, batch: &Batch) {
    let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(10));
    loop {
        let started = Instant::now();
        match store.write_batch(&config.checkpoint_name, batch).await {
            Ok(stats) => {
                metrics
                    .batch_seconds
                    .observe(started.elapsed().as_secs_f64());
                metrics.batches.inc();
                metrics
                    .updates
                    .with_label_values(&["account"])
                    .inc_by(stats.accounts as u64);
                metrics
                    .updates
                    .with_label_values(&["closure"])
                    .inc_by(stats.closures as u64);
                metrics
                    .updates
                    .with_label_values(&["event"])
                    .inc_by(stats.events as u64);
                return;
            }
            Err(error) => {
                metrics.write_errors.inc();
                let delay = backoff.next_delay();
                warn!(%error, retry_in_ms = delay.as_millis() as u64, "batch write failed");
                tokio::time::sleep(delay).await;
            }
        }
    }
}
