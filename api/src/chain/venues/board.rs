//! The APY read's board: each key's value and where it came from, as last polled
//! (`domain::defi::apys` polls it), and the sources besides the ledger.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use crate::clock::is_fresh;
use crate::providers::venue_rates::RateApi;
use crate::values::{TokenSymbol, VenueId};

/// The keys of the APY map (spec 4.5), in its order.
pub const KEYS: [&str; 9] = [
    "lend_a",
    "lend_a_sol",
    "lend_a_usdc",
    "lend_b",
    "stake_a",
    "stake_b",
    "pool_a",
    "lend_c",
    "p0",
];

/// One APY and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Apy {
    pub pct: f64,
    /// `ledger`, `rate_api`, `configured`, or `none` (nothing configured).
    pub source: &'static str,
    pub polled_at: i64,
    /// The source failed at the last poll; this is its last good value.
    pub stale: bool,
}

impl Apy {
    /// A key's value at a poll at `now`: `fresh` when its source answered; else the last good
    /// value from a source that can fail (`previous`), marked stale; else the configured value;
    /// else `none` (0).
    pub fn settle(
        key: &str,
        fresh: Option<(f64, &'static str)>,
        previous: &Board,
        configured: &BTreeMap<String, f64>,
        now: i64,
    ) -> Apy {
        match fresh {
            Some((pct, source)) => Apy {
                pct,
                source,
                polled_at: now,
                stale: false,
            },
            None => match previous.values.get(key) {
                Some(last) if last.source != "configured" && last.source != "none" => Apy {
                    stale: true,
                    ..last.clone()
                },
                _ => Apy::configured(configured, key, now),
            },
        }
    }

    /// The configured value for `key`, or `none` (0).
    pub fn configured(configured: &BTreeMap<String, f64>, key: &str, now: i64) -> Apy {
        match configured.get(key) {
            Some(pct) => Apy {
                pct: *pct,
                source: "configured",
                polled_at: now,
                stale: false,
            },
            None => Apy {
                pct: 0.0,
                source: "none",
                polled_at: now,
                stale: false,
            },
        }
    }
}

/// Kept beside [`KEYS`] for routing, not shown: `lend_b` (the key) is its SOL market's.
pub const LEND_B_USDC: &str = "lend_b_usdc";

/// The APYs as last polled: [`KEYS`], and [`LEND_B_USDC`].
#[derive(Debug, Clone, Default)]
pub struct Board {
    pub values: BTreeMap<&'static str, Apy>,
    pub polled_at: i64,
}

impl Board {
    /// A venue's supply APY for `symbol`, for routing: its market of that token where the board
    /// keeps one per token (`lend_a`, `lend_b`), else the venue's one key. Until 2026-12-01 a
    /// USDC deposit was routed by the venues' SOL APYs.
    pub fn apy(&self, venue: VenueId, symbol: TokenSymbol) -> Option<f64> {
        let key = match (venue, symbol) {
            (VenueId::LendA, TokenSymbol::Sol) => "lend_a_sol",
            (VenueId::LendA, TokenSymbol::Usdc) => "lend_a_usdc",
            (VenueId::LendB, TokenSymbol::Usdc) => LEND_B_USDC,
            (other, _) => other.as_str(),
        };
        self.values
            .get(key)
            .filter(|a| a.source != "none")
            .map(|a| a.pct)
    }

    /// One word for the keys shown: their sources' common name, or `mixed`.
    pub fn source(&self) -> &'static str {
        let mut sources = KEYS
            .iter()
            .filter_map(|key| self.values.get(key))
            .map(|a| a.source);
        match sources.next() {
            Some(first) if sources.all(|s| s == first) => first,
            Some(_) => "mixed",
            None => "none",
        }
    }
}

/// Where the non-ledger values come from.
pub struct ApySources {
    pub stake_a_api: Option<Arc<dyn RateApi>>,
    pub stake_b_api: Option<Arc<dyn RateApi>>,
    /// `DEFI_CONFIGURED_APYS`: percent per key.
    pub configured: BTreeMap<String, f64>,
}

/// A board as last polled, polled again by one caller at a time once it is due. While that
/// poll runs, every other caller reads the board it will replace: the boards feed the deposit
/// and borrow prepares' routing and rates, and a source that is slow to answer (a rate API up
/// to its timeout, a node) would otherwise hold every prepare behind the one poll. Only the
/// first board, before any poll has answered, is waited for.
#[derive(Default)]
pub struct KeptBoard {
    current: Mutex<Arc<Board>>,
    /// Held by the caller polling.
    polling: tokio::sync::Mutex<()>,
}

impl KeptBoard {
    /// The board, polled with `poll` (given the board it replaces) when it is empty or at
    /// least `max_age` seconds old at `now` and no other caller is polling it.
    pub async fn read<P, F>(&self, now: i64, max_age: i64, poll: P) -> Arc<Board>
    where
        P: FnOnce(Arc<Board>) -> F,
        F: Future<Output = Board>,
    {
        // `is_fresh`: a board dated after `now` (the clock stepped back) is due too.
        let due =
            |board: &Board| board.values.is_empty() || !is_fresh(board.polled_at, now, max_age);
        let current = self.current();
        if !due(&current) {
            return current;
        }
        // Dropped with this future: a caller that goes away mid-poll leaves it to the next.
        let _polling = if current.values.is_empty() {
            self.polling.lock().await
        } else {
            match self.polling.try_lock() {
                Ok(polling) => polling,
                Err(_) => return current,
            }
        };
        // The caller that held the lock before may have polled it meanwhile.
        let current = self.current();
        if !due(&current) {
            return current;
        }
        let polled = Arc::new(poll(current).await);
        *self.current.lock().expect("board") = polled.clone();
        polled
    }

    fn current(&self) -> Arc<Board> {
        self.current.lock().expect("board").clone()
    }
}

/// The board and what polls it.
pub struct Apys {
    pub sources: ApySources,
    pub board: KeptBoard,
}

impl Apys {
    pub fn new(sources: ApySources) -> Apys {
        Apys {
            sources,
            board: KeptBoard::default(),
        }
    }
}

/// The borrow rates' keys (spec 4.7: per devnet-live lending venue, per token).
pub const BORROW_KEYS: [&str; 4] = ["lend_a_sol", "lend_a_usdc", "lend_b_sol", "lend_b_usdc"];

/// The borrow APRs (`domain::borrow::rates` polls them), keyed as [`BORROW_KEYS`].
pub struct BorrowRates {
    /// `BORROW_CONFIGURED_RATES`: percent per key, for a token whose reserve gives none.
    pub configured: BTreeMap<String, f64>,
    pub board: KeptBoard,
}

impl BorrowRates {
    pub fn new(configured: BTreeMap<String, f64>) -> BorrowRates {
        BorrowRates {
            configured,
            board: KeptBoard::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Context, Poll, Waker};

    use tokio::sync::{oneshot, Notify};

    use super::*;

    fn board(polled_at: i64) -> Board {
        let apy = Apy {
            pct: polled_at as f64,
            source: "ledger",
            polled_at,
            stale: false,
        };
        Board {
            values: BTreeMap::from([("lend_a", apy)]),
            polled_at,
        }
    }

    #[test]
    fn routing_reads_each_venues_market_of_the_token() {
        let apy = |pct: f64| Apy {
            pct,
            source: "ledger",
            polled_at: 0,
            stale: false,
        };
        let board = Board {
            values: BTreeMap::from([
                ("lend_a", apy(9.0)),
                ("lend_a_sol", apy(9.0)),
                ("lend_a_usdc", apy(2.0)),
                ("lend_b", apy(1.0)),
                (LEND_B_USDC, apy(5.0)),
                ("stake_b", apy(7.0)),
            ]),
            polled_at: 0,
        };
        assert_eq!(board.apy(VenueId::LendA, TokenSymbol::Sol), Some(9.0));
        assert_eq!(board.apy(VenueId::LendB, TokenSymbol::Sol), Some(1.0));
        // USDC: lend_b's USDC market pays more than lend_a's, whatever their SOL markets pay.
        assert_eq!(board.apy(VenueId::LendA, TokenSymbol::Usdc), Some(2.0));
        assert_eq!(board.apy(VenueId::LendB, TokenSymbol::Usdc), Some(5.0));
        assert_eq!(board.apy(VenueId::StakeB, TokenSymbol::Sol), Some(7.0));
        assert_eq!(board.apy(VenueId::LendC, TokenSymbol::Usdc), None);
        // The key kept for routing is not among the sources the answer sums up.
        let mut mixed = board.clone();
        mixed.values.insert(
            LEND_B_USDC,
            Apy {
                source: "configured",
                ..apy(5.0)
            },
        );
        assert_eq!(mixed.source(), "ledger");
    }

    /// What a read answers at its first poll, or None when it waits.
    fn at_once<F: Future>(read: F) -> Option<F::Output> {
        match pin!(read).poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(board) => Some(board),
            Poll::Pending => None,
        }
    }

    /// A poll that says it started, then answers `board(at)` once released.
    async fn held_poll(started: oneshot::Sender<()>, release: Arc<Notify>, at: i64) -> Board {
        let _ = started.send(());
        release.notified().await;
        board(at)
    }

    #[tokio::test]
    async fn a_due_board_is_polled_by_one_caller_while_the_others_read_the_last() {
        let kept = Arc::new(KeptBoard::default());
        kept.read(0, 60, |_| async { board(0) }).await;
        let release = Arc::new(Notify::new());
        let (started, poll_started) = oneshot::channel();
        let polling = tokio::spawn({
            let (kept, release) = (kept.clone(), release.clone());
            async move {
                kept.read(60, 60, |previous| {
                    assert_eq!(
                        previous.polled_at, 0,
                        "the poll is given the board it replaces"
                    );
                    held_poll(started, release, 60)
                })
                .await
            }
        });
        poll_started.await.unwrap();
        // Due as well, but polled already: answered at once with the board being replaced.
        let meanwhile = at_once(kept.read(61, 60, |_| async { unreachable!("polled twice") }));
        assert_eq!(meanwhile.map(|b| b.polled_at), Some(0));
        release.notify_one();
        assert_eq!(polling.await.unwrap().polled_at, 60);
        // The new board is read until it is due in turn.
        let after = at_once(kept.read(119, 60, |_| async { unreachable!("not due") }));
        assert_eq!(after.map(|b| b.polled_at), Some(60));
        assert_eq!(
            kept.read(120, 60, |_| async { board(120) }).await.polled_at,
            120
        );
        // The clock steps back: a board dated after now is polled again, not kept until then.
        assert_eq!(
            kept.read(90, 60, |_| async { board(90) }).await.polled_at,
            90
        );
    }

    #[tokio::test]
    async fn the_first_board_is_waited_for_and_polled_once() {
        let kept = Arc::new(KeptBoard::default());
        let release = Arc::new(Notify::new());
        let (started, poll_started) = oneshot::channel();
        let polls = AtomicUsize::new(0);
        let polling = tokio::spawn({
            let (kept, release) = (kept.clone(), release.clone());
            async move { kept.read(5, 60, |_| held_poll(started, release, 5)).await }
        });
        poll_started.await.unwrap();
        let mut waiting = pin!(kept.read(6, 60, |_| {
            polls.fetch_add(1, Ordering::SeqCst);
            async { board(6) }
        }));
        let mut context = Context::from_waker(Waker::noop());
        assert!(
            waiting.as_mut().poll(&mut context).is_pending(),
            "no board yet: the read waits for the first poll"
        );
        release.notify_one();
        assert_eq!(polling.await.unwrap().polled_at, 5);
        assert_eq!(waiting.await.polled_at, 5, "the first poll's board");
        assert_eq!(polls.load(Ordering::SeqCst), 0, "not polled again");
    }

    #[tokio::test]
    async fn a_caller_gone_mid_poll_leaves_the_poll_to_the_next() {
        let kept = KeptBoard::default();
        kept.read(0, 60, |_| async { board(0) }).await;
        let gone = at_once(kept.read(60, 60, |_| std::future::pending::<Board>()));
        assert!(
            gone.is_none(),
            "its poll never answered, and its future is dropped"
        );
        assert_eq!(
            kept.read(61, 60, |_| async { board(61) }).await.polled_at,
            61
        );
    }
}
