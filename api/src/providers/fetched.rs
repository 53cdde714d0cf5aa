//! A value read from an outside service and kept for a while (the SOL/USD price, the node's
//! latest blockhash), fetched by one caller at a time.
//!
//! Callers that find it stale while a fetch runs wait for that fetch and take its outcome,
//! failure included. Before, the lock was held across the fetch but a failure kept nothing, so
//! each waiter fetched again in its turn: against a source that hung, the n-th caller waited n
//! timeouts (the JSON-RPC client's is 30 s, and every prepare asks for a blockhash). A failure is
//! also answered again for `retry_after` seconds without asking, so that a source that is down
//! is not asked by every request that arrives.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::sync::Mutex;

use crate::clock::is_fresh;

/// The value kept, and the last failure when the last fetch failed.
struct Kept<T, E> {
    value: Option<(T, i64)>,
    failed: Option<(E, i64)>,
}

pub struct Fetched<T, E> {
    /// How long a value is used (seconds).
    ttl: i64,
    /// How long a failure is answered without asking again (seconds).
    retry_after: i64,
    /// Held across a fetch: one at a time.
    kept: Mutex<Kept<T, E>>,
    /// Fetches ended so far, failed or not: a waiter that sees it move knows a fetch ended
    /// while it waited.
    fetches: AtomicU64,
}

impl<T: Clone, E: Clone> Fetched<T, E> {
    pub fn new(ttl: i64, retry_after: i64) -> Self {
        Fetched {
            ttl,
            retry_after,
            kept: Mutex::new(Kept {
                value: None,
                failed: None,
            }),
            fetches: AtomicU64::new(0),
        }
    }

    /// The kept value and when it was fetched, fetched with `fetch` at `now` when there is none
    /// younger than the ttl; a failure of the fetch this caller waited for, or of one less than
    /// `retry_after` ago, is answered without fetching.
    pub async fn get<F, Fut>(&self, now: i64, fetch: F) -> Result<(T, i64), E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let seen = self.fetches.load(Ordering::Acquire);
        let mut kept = self.kept.lock().await;
        if let Some((value, at)) = &kept.value {
            if is_fresh(*at, now, self.ttl) {
                return Ok((value.clone(), *at));
            }
        }
        if let Some((error, at)) = &kept.failed {
            let ended_while_waiting = self.fetches.load(Ordering::Acquire) != seen;
            if ended_while_waiting || is_fresh(*at, now, self.retry_after) {
                return Err(error.clone());
            }
        }
        // A caller that goes away mid-fetch releases the lock and counts no fetch: the next
        // caller fetches.
        let outcome = fetch().await;
        self.fetches.fetch_add(1, Ordering::Release);
        match outcome {
            Ok(value) => {
                kept.value = Some((value.clone(), now));
                kept.failed = None;
                Ok((value, now))
            }
            Err(error) => {
                kept.failed = Some((error.clone(), now));
                Err(error)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    use std::task::{Context, Poll, Waker};

    use tokio::sync::Notify;

    use super::*;

    type Price = Fetched<u32, String>;

    /// A fetch that counts itself and answers `outcome`, the first once `release` is notified
    /// (a second fetch, which the callers should not make, answers at once rather than hang).
    async fn held(
        count: Arc<AtomicUsize>,
        release: Arc<Notify>,
        outcome: Result<u32, String>,
    ) -> Result<u32, String> {
        if count.fetch_add(1, Ordering::SeqCst) == 0 {
            release.notified().await;
        }
        outcome
    }

    /// `callers` gets at `now` started together, all waiting on one held fetch; their answers once
    /// released, and how many fetches ran.
    async fn together(
        kept: &Arc<Price>,
        callers: usize,
        now: i64,
        outcome: Result<u32, String>,
    ) -> (Vec<Result<(u32, i64), String>>, usize) {
        let (count, release) = (Arc::new(AtomicUsize::new(0)), Arc::new(Notify::new()));
        let tasks: Vec<_> = (0..callers)
            .map(|_| {
                let (kept, count, release) = (kept.clone(), count.clone(), release.clone());
                let outcome = outcome.clone();
                tokio::spawn(async move { kept.get(now, || held(count, release, outcome)).await })
            })
            .collect();
        // Every task has run up to its wait: one is in the fetch, the rest queue behind it.
        while count.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        for _ in 0..callers {
            tokio::task::yield_now().await;
        }
        release.notify_one();
        let mut answers = Vec::new();
        for task in tasks {
            answers.push(task.await.unwrap());
        }
        (answers, count.load(Ordering::SeqCst))
    }

    #[tokio::test]
    async fn callers_waiting_on_a_fetch_share_its_value() {
        let kept = Arc::new(Price::new(60, 5));
        let (answers, fetches) = together(&kept, 6, 100, Ok(7)).await;
        assert_eq!(fetches, 1);
        assert!(answers.iter().all(|a| *a == Ok((7, 100))), "{answers:?}");
        // Kept for the ttl, fetched again after it.
        assert_eq!(kept.get(159, || async { Ok(8) }).await, Ok((7, 100)));
        assert_eq!(kept.get(160, || async { Ok(8) }).await, Ok((8, 160)));
    }

    #[tokio::test]
    async fn a_failure_is_shared_with_the_callers_that_waited_for_it() {
        // No retry_after: only having waited for the failed fetch spares a caller its own.
        let kept = Arc::new(Price::new(60, 0));
        let (answers, fetches) = together(&kept, 6, 100, Err("down".into())).await;
        assert_eq!(fetches, 1, "the waiters did not fetch again in turn");
        assert!(
            answers.iter().all(|a| *a == Err("down".into())),
            "{answers:?}"
        );
        assert_eq!(kept.get(100, || async { Ok(9) }).await, Ok((9, 100)));
    }

    #[tokio::test]
    async fn a_failure_is_answered_without_asking_until_retry_after() {
        let kept = Price::new(60, 5);
        assert_eq!(
            kept.get(100, || async { Err("down".into()) }).await,
            Err("down".into())
        );
        let not_asked = || async { unreachable!("asked within retry_after") };
        assert_eq!(kept.get(104, not_asked).await, Err("down".into()));
        assert_eq!(kept.get(105, || async { Ok(9) }).await, Ok((9, 105)));
    }

    #[tokio::test]
    async fn a_caller_gone_mid_fetch_leaves_the_fetch_to_the_next() {
        let kept = Price::new(60, 5);
        {
            let gone = pin!(kept.get(100, std::future::pending));
            let mut context = Context::from_waker(Waker::noop());
            assert!(matches!(gone.poll(&mut context), Poll::Pending));
        }
        assert_eq!(kept.get(100, || async { Ok(3) }).await, Ok((3, 100)));
    }
}
