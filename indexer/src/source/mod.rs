//! Sources of updates, behind one trait: each (re)connects, resumes from the committed
//! checkpoint, and pushes what it receives into the pipeline's bounded channel (which is how a
//! slow database slows the source down instead of overflowing memory).

pub mod grpc;
pub mod reconcile;
pub mod rpc;

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use narrative_sdk::Pubkey;
use narrative_store::{AccountUpdate, Closure};
use tokio::sync::mpsc;

/// An inner instruction of a transaction: where the programs' `emit_cpi!` events are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InnerInstruction {
    /// Index of the top-level instruction it ran under.
    pub instruction_index: u32,
    /// Position among that instruction's inner instructions.
    pub inner_index: u32,
    pub program: Pubkey,
    pub data: Vec<u8>,
}

/// A successful transaction that touched one of the programs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionUpdate {
    pub signature: String,
    pub slot: u64,
    /// Position in its block (0 when the source does not know it).
    pub tx_index: u64,
    pub inner: Vec<InnerInstruction>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceMessage {
    Account(AccountUpdate),
    Closure(Closure),
    Transaction(TransactionUpdate),
    /// Everything up to and including this slot has been delivered (a complete snapshot).
    Complete(u64),
    /// The newest slot the source knows of, for the lag metric only.
    Tip(u64),
}

impl SourceMessage {
    /// The slot of the data this message carries (not of `Tip`).
    pub fn data_slot(&self) -> Option<u64> {
        match self {
            SourceMessage::Account(a) => Some(a.slot),
            SourceMessage::Closure(c) => Some(c.slot),
            SourceMessage::Transaction(t) => Some(t.slot),
            SourceMessage::Complete(s) => Some(*s),
            SourceMessage::Tip(_) => None,
        }
    }
}

/// A message and when it arrived, for the update-to-commit latency.
#[derive(Debug, Clone)]
pub struct Envelope {
    pub message: SourceMessage,
    pub received_at: Instant,
    /// Whether committing this message may move the checkpoint to its slot. A source that is
    /// still reconciling (a bootstrap snapshot, a gap being filled) holds the checkpoint back, so
    /// a crash before the reconciliation is committed resumes it instead of skipping it.
    pub advances_checkpoint: bool,
}

impl Envelope {
    pub fn now(message: SourceMessage) -> Envelope {
        Envelope {
            message,
            received_at: Instant::now(),
            advances_checkpoint: true,
        }
    }

    /// A message written like any other that leaves the checkpoint where it is.
    pub fn held(message: SourceMessage) -> Envelope {
        Envelope {
            advances_checkpoint: false,
            ..Envelope::now(message)
        }
    }
}

/// The committed checkpoint, shared between the writer (which advances it after each commit)
/// and the source (which resumes from it on every reconnection). "No checkpoint yet" (a first
/// start, which bootstraps) and "a checkpoint at slot 0" are different: the cell holds slot + 1,
/// and 0 for none.
#[derive(Clone, Default, Debug)]
pub struct ResumePoint(Arc<AtomicU64>);

impl ResumePoint {
    pub fn new(slot: Option<u64>) -> Self {
        ResumePoint(Arc::new(AtomicU64::new(
            slot.map_or(0, |s| s.saturating_add(1)),
        )))
    }

    pub fn get(&self) -> Option<u64> {
        match self.0.load(Ordering::Acquire) {
            0 => None,
            stored => Some(stored - 1),
        }
    }

    pub fn advance(&self, slot: u64) {
        self.0.fetch_max(slot.saturating_add(1), Ordering::AcqRel);
    }
}

pub trait Source: Send + 'static {
    /// Streams messages into `out` until `out` is closed (the pipeline stopped), reconnecting
    /// on its own and resuming from `resume` each time.
    fn run(
        self,
        resume: ResumePoint,
        out: mpsc::Sender<Envelope>,
    ) -> impl Future<Output = anyhow::Result<()>> + Send;
}

/// Exponential backoff between reconnection attempts, reset after a healthy session.
#[derive(Debug, Clone)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    current: Duration,
}

impl Backoff {
    pub fn new(initial: Duration, max: Duration) -> Self {
        Backoff {
            initial,
            max,
            current: initial,
        }
    }

    /// The delay before the next attempt; doubles up to the maximum.
    pub fn next_delay(&mut self) -> Duration {
        let delay = self.current;
        self.current = (self.current * 2).min(self.max);
        delay
    }

    pub fn reset(&mut self) {
        self.current = self.initial;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_its_cap_and_resets() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_millis(350));
        let delays: Vec<_> = (0..4).map(|_| b.next_delay().as_millis()).collect();
        assert_eq!(delays, [100, 200, 350, 350]);
        b.reset();
        assert_eq!(b.next_delay().as_millis(), 100);
    }

    #[test]
    fn resume_point_only_moves_forward() {
        let r = ResumePoint::new(None);
        assert_eq!(r.get(), None);
        r.advance(0);
        assert_eq!(r.get(), Some(0), "slot 0 is a checkpoint, not none");
        assert_eq!(ResumePoint::new(Some(0)).get(), Some(0));
        r.advance(10);
        r.advance(7);
        assert_eq!(r.get(), Some(10));
    }
}
