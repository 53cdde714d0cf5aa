//! Prometheus metrics of the indexer, served at `/metrics`: throughput, batch latency,
//! update-to-commit latency, slot lag, reconnections, reconciliations (bootstrap and gap fill)
//! and leadership.

use std::net::SocketAddr;

use poem::listener::TcpListener;
use poem::{get, handler, web::Data, EndpointExt, Route, Server};
use prometheus::{
    Encoder, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, Opts, Registry,
    TextEncoder,
};

#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    /// Messages committed, by kind (`account`, `closure`, `event`).
    pub updates: IntCounterVec,
    /// Committed updates per second over the last batch interval.
    pub updates_per_second: IntGauge,
    pub batches: IntCounter,
    /// Time to write and commit one batch.
    pub batch_seconds: Histogram,
    /// From a message's arrival to the commit that stored it.
    pub commit_latency_seconds: Histogram,
    pub source_slot: IntGauge,
    pub committed_slot: IntGauge,
    /// `source_slot - committed_slot`.
    pub slot_lag: IntGauge,
    pub reconnects: IntCounter,
    pub write_errors: IntCounter,
    /// First starts reconciled from a snapshot and the programs' history.
    pub bootstraps: IntCounter,
    /// Outages longer than the stream's replay window, reconciled by snapshot and backfill.
    pub gap_fills: IntCounter,
    /// Slots between the checkpoint and the oldest replayable slot, at the last gap found
    /// (0 when the server did not say which slot it still has).
    pub gap_slots: IntGauge,
    /// 1 while this indexer holds its checkpoint's lease and writes; 0 as a standby.
    pub leader: IntGauge,
}

/// Fine around 100-300 ms, where the latency target (p99 < 250 ms) sits.
fn buckets() -> Vec<f64> {
    vec![
        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.225, 0.25,
        0.3, 0.5, 1.0, 2.5, 5.0, 10.0,
    ]
}

/// The upper bound of the bucket holding quantile `q` of `histogram` (a conservative estimate).
pub fn quantile_upper_bound(histogram: &Histogram, q: f64) -> Option<f64> {
    use prometheus::core::Metric;
    let metric = histogram.metric();
    let h = metric.get_histogram();
    let total = h.get_sample_count();
    if total == 0 {
        return None;
    }
    let rank = (q * total as f64).ceil() as u64;
    h.get_bucket()
        .iter()
        .find(|b| b.cumulative_count() >= rank)
        .map(|b| b.upper_bound())
        .or(Some(f64::INFINITY))
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let registry = Registry::new_custom(Some("indexer".into()), None).expect("registry");
        let updates = IntCounterVec::new(
            Opts::new("updates_total", "Messages committed, by kind"),
            &["kind"],
        )
        .expect("metric");
        let updates_per_second = IntGauge::new(
            "updates_per_second",
            "Committed updates per second over the last batch",
        )
        .expect("metric");
        let batches = IntCounter::new("batches_total", "Batches committed").expect("metric");
        let batch_seconds = Histogram::with_opts(
            HistogramOpts::new("batch_seconds", "Time to write and commit a batch")
                .buckets(buckets()),
        )
        .expect("metric");
        let commit_latency_seconds = Histogram::with_opts(
            HistogramOpts::new(
                "commit_latency_seconds",
                "From a message's arrival to its commit",
            )
            .buckets(buckets()),
        )
        .expect("metric");
        let source_slot =
            IntGauge::new("source_slot", "Newest slot seen from the source").expect("metric");
        let committed_slot =
            IntGauge::new("committed_slot", "Checkpoint slot committed").expect("metric");
        let slot_lag =
            IntGauge::new("slot_lag", "Source slot minus committed slot").expect("metric");
        let reconnects =
            IntCounter::new("reconnects_total", "Source reconnections").expect("metric");
        let write_errors =
            IntCounter::new("write_errors_total", "Failed batch writes (retried)").expect("metric");
        let bootstraps = IntCounter::new(
            "bootstraps_total",
            "First starts reconciled from a snapshot and the programs' history",
        )
        .expect("metric");
        let gap_fills = IntCounter::new(
            "gap_fills_total",
            "Outages beyond the replay window filled by snapshot and backfill",
        )
        .expect("metric");
        let gap_slots = IntGauge::new(
            "gap_slots",
            "Slots between the checkpoint and the oldest replayable slot at the last gap",
        )
        .expect("metric");
        let leader = IntGauge::new(
            "leader",
            "1 while this indexer holds its checkpoint's lease",
        )
        .expect("metric");
        for collector in [
            Box::new(updates.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(updates_per_second.clone()),
            Box::new(batches.clone()),
            Box::new(batch_seconds.clone()),
            Box::new(commit_latency_seconds.clone()),
            Box::new(source_slot.clone()),
            Box::new(committed_slot.clone()),
            Box::new(slot_lag.clone()),
            Box::new(reconnects.clone()),
            Box::new(write_errors.clone()),
            Box::new(bootstraps.clone()),
            Box::new(gap_fills.clone()),
            Box::new(gap_slots.clone()),
            Box::new(leader.clone()),
        ] {
            registry.register(collector).expect("unique metric");
        }
        Metrics {
            registry,
            updates,
            updates_per_second,
            batches,
            batch_seconds,
            commit_latency_seconds,
            source_slot,
            committed_slot,
            slot_lag,
            reconnects,
            write_errors,
            bootstraps,
            gap_fills,
            gap_slots,
            leader,
        }
    }

    pub fn observe_source_slot(&self, slot: u64) {
        if slot as i64 > self.source_slot.get() {
            self.source_slot.set(slot as i64);
        }
        self.update_lag();
    }

    pub fn observe_committed_slot(&self, slot: u64) {
        self.committed_slot.set(slot as i64);
        self.observe_source_slot(slot);
    }

    fn update_lag(&self) {
        self.slot_lag
            .set((self.source_slot.get() - self.committed_slot.get()).max(0));
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut out)
            .expect("metrics encode");
        String::from_utf8(out).expect("utf-8 metrics")
    }

    /// Serves `/metrics` on `addr` until the process ends.
    pub async fn serve(self, addr: SocketAddr) -> std::io::Result<()> {
        let app = Route::new().at("/metrics", get(render_metrics)).data(self);
        Server::new(TcpListener::bind(addr)).run(app).await
    }
}

#[handler]
fn render_metrics(metrics: Data<&Metrics>) -> String {
    metrics.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_from_the_buckets() {
        let m = Metrics::new();
        assert_eq!(quantile_upper_bound(&m.commit_latency_seconds, 0.99), None);
        for _ in 0..98 {
            m.commit_latency_seconds.observe(0.004);
        }
        m.commit_latency_seconds.observe(0.12);
        m.commit_latency_seconds.observe(0.21);
        assert_eq!(
            quantile_upper_bound(&m.commit_latency_seconds, 0.5),
            Some(0.005)
        );
        assert_eq!(
            quantile_upper_bound(&m.commit_latency_seconds, 0.99),
            Some(0.125)
        );
        assert_eq!(
            quantile_upper_bound(&m.commit_latency_seconds, 1.0),
            Some(0.225)
        );
    }

    #[test]
    fn lag_is_source_minus_committed_and_never_negative() {
        let m = Metrics::new();
        m.observe_source_slot(120);
        m.observe_committed_slot(100);
        assert_eq!(m.slot_lag.get(), 20);
        m.observe_committed_slot(125);
        assert_eq!((m.source_slot.get(), m.slot_lag.get()), (125, 0));
        m.updates.with_label_values(&["account"]).inc_by(3);
        let text = m.render();
        assert!(
            text.contains("indexer_updates_total{kind=\"account\"} 3"),
            "{text}"
        );
        assert!(text.contains("indexer_slot_lag 0"));
    }
}
