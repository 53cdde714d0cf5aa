//! source → bounded channel → decode → batch (by size and time) → one transaction per batch.
//!
//! The checkpoint written with a batch is the highest slot of the data in it; a (re)started
//! source resumes from the committed checkpoint, replaying that slot, which the store's
//! newer-only upserts and unique event positions make harmless. A failed write is retried
//! with backoff (the bounded channel holds the source back meanwhile); nothing is dropped.

use std::future::Future;
use std::time::{Duration, Instant};

use narrative_store::{Batch, PreparedBatch, Store, WriteStats};
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
            // A backlog commits in large batches (each address's newest state once per
            // batch); live traffic is flushed by the interval long before a batch fills.
            batch_size: 20_000,
            batch_interval: Duration::from_millis(100),
            channel_capacity: 50_000,
        }
    }
}

/// Runs `source` into `store` until `shutdown` resolves or the source stops.
///
/// Two stages overlap: this task gathers and decodes the next batch while a writer task
/// commits the previous one (a channel of one batch between them keeps memory bounded).
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
    let (to_writer, from_reader) = mpsc::channel::<Decoded>(1);
    let mut writer_task = tokio::spawn(write_batches(
        store,
        config.checkpoint_name.clone(),
        metrics.clone(),
        resume,
        from_reader,
    ));
    // If this future is dropped (its task aborted), the stages go with it, like a killed
    // process: no batch is committed after it is gone.
    let _stages = AbortOnDrop([source_task.abort_handle(), writer_task.abort_handle()]);
    tokio::pin!(shutdown);
    let mut decode_error = None;
    let mut source_ended = false;
    loop {
        let received = tokio::select! {
            _ = &mut shutdown => break,
            received = next_batch(&mut rx, &config) => received,
        };
        let Some(envelopes) = received else {
            source_ended = true;
            break;
        };
        let Some(batch) = assemble(&envelopes, &metrics) else {
            continue;
        };
        let prepared = match PreparedBatch::new(&batch) {
            Ok(prepared) => prepared,
            Err(error) => {
                decode_error = Some(anyhow::Error::new(error).context("decoding a batch"));
                break;
            }
        };
        let decoded = Decoded {
            batch: prepared,
            received_at: envelopes.iter().map(|e| e.received_at).collect(),
        };
        tokio::select! {
            _ = &mut shutdown => break,
            sent = to_writer.send(decoded) => if sent.is_err() { break },
        }
    }
    // Stopping on shutdown abandons the batch in flight (its transaction rolls back and the
    // checkpoint stays behind it); when the source ended, the writer drains what it was sent.
    drop(to_writer);
    if !source_ended || decode_error.is_some() {
        writer_task.abort();
    }
    let written = (&mut writer_task).await;
    rx.close();
    if let Some(error) = decode_error {
        return Err(error);
    }
    if let Ok(Err(error)) = written {
        return Err(error);
    }
    // The writer has stopped: the source has nowhere to send; its own error, if it failed,
    // is what ended the pipeline.
    if source_task.is_finished() {
        return (&mut source_task).await?;
    }
    source_task.abort();
    Ok(())
}

struct AbortOnDrop<const N: usize>([tokio::task::AbortHandle; N]);

impl<const N: usize> Drop for AbortOnDrop<N> {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// A decoded batch and when each of its messages arrived.
struct Decoded {
    batch: PreparedBatch,
    received_at: Vec<Instant>,
}

/// The writer stage: commits batches in order, then advances the resume point.
async fn write_batches(
    store: Store,
    checkpoint_name: String,
    metrics: Metrics,
    resume: ResumePoint,
    mut batches: mpsc::Receiver<Decoded>,
) -> anyhow::Result<()> {
    let mut last_commit = Instant::now();
    while let Some(decoded) = batches.recv().await {
        let stats = commit(&store, &checkpoint_name, &metrics, &decoded.batch).await;
        if let Some(slot) = decoded.batch.checkpoint() {
            resume.advance(slot);
            metrics.observe_committed_slot(slot);
        }
        let now = Instant::now();
        for received_at in &decoded.received_at {
            metrics
                .commit_latency_seconds
                .observe(now.duration_since(*received_at).as_secs_f64());
        }
        let elapsed = now.duration_since(last_commit).as_secs_f64().max(1e-6);
        let written = stats.accounts + stats.closures + stats.events;
        metrics
            .updates_per_second
            .set((written as f64 / elapsed) as i64);
        last_commit = now;
    }
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
        if let Some(slot) = message.data_slot().filter(|_| envelope.advances_checkpoint) {
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
async fn commit(
    store: &Store,
    checkpoint_name: &str,
    metrics: &Metrics,
    batch: &PreparedBatch,
) -> WriteStats {
    let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(10));
    loop {
        let started = Instant::now();
        match store.write_prepared(checkpoint_name, batch).await {
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
                return stats;
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
