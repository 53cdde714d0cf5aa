//! `GET /health`'s store round trip. The route is exempt from every rate limit (load balancers
//! and orchestrators poll it), so each call taking a connection of the shared pool would let
//! anyone drain the pool with it and stall every other route behind the acquire timeout. Calls
//! that arrive while a ping is under way share the next one instead: at most one connection
//! answers health checks however many arrive, and every answer is a ping that started after
//! its request arrived (never a remembered one).

use std::sync::atomic::{AtomicU64, Ordering};

use narrative_store::Store;
use tokio::sync::Mutex;

#[derive(Default)]
pub struct HealthProbe {
    /// The last ping's number (it started after every caller still waiting on this lock that
    /// arrived before it) and whether the store answered.
    last: Mutex<(u64, bool)>,
    /// Pings started so far.
    started: AtomicU64,
}

impl HealthProbe {
    /// Whether the store answers a round trip begun after this call.
    pub async fn store_answers(&self, store: &Store) -> bool {
        // A ping numbered above this one starts after this call arrived.
        let arrived = self.started.load(Ordering::SeqCst);
        let mut last = self.last.lock().await;
        if last.0 > arrived {
            return last.1;
        }
        let number = self.started.fetch_add(1, Ordering::SeqCst) + 1;
        let answered = match store.ping().await {
            Ok(()) => true,
            Err(error) => {
                tracing::warn!(%error, "health: database unreachable");
                false
            }
        };
        *last = (number, answered);
        answered
    }

    /// Pings made so far (for the tests).
    pub fn pings(&self) -> u64 {
        self.started.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A hundred calls at once make far fewer pings, at most one at a time, and each call's
    /// answer comes from a ping that started after it arrived.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_at_once_share_pings() {
        let db = narrative_store::testing::TestDb::new().await;
        let probe = Arc::new(HealthProbe::default());
        let calls: Vec<_> = (0..100)
            .map(|_| {
                let (probe, store) = (probe.clone(), db.store.clone());
                tokio::spawn(async move { probe.store_answers(&store).await })
            })
            .collect();
        for call in calls {
            assert!(call.await.unwrap());
        }
        let pings = probe.pings();
        assert!((1..50).contains(&pings), "{pings} pings for 100 calls");
        // A call after them all pings again: nothing is remembered past the calls it served.
        assert!(probe.store_answers(&db.store).await);
        assert_eq!(probe.pings(), pings + 1);
    }
}
