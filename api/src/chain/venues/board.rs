//! The APY read's board: each key's value and where it came from, as last polled
//! (`domain::defi::apys` polls it), and the sources besides the ledger.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::Mutex;

use crate::providers::venue_rates::RateApi;
use crate::values::VenueId;

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

/// The APYs as last polled.
#[derive(Debug, Clone, Default)]
pub struct Board {
    pub values: BTreeMap<&'static str, Apy>,
    pub polled_at: i64,
}

impl Board {
    /// A venue's APY for routing (its SOL market's for `lend_a`).
    pub fn apy(&self, venue: VenueId) -> Option<f64> {
        let key = match venue {
            VenueId::LendA => "lend_a_sol",
            other => other.as_str(),
        };
        self.values
            .get(key)
            .filter(|a| a.source != "none")
            .map(|a| a.pct)
    }

    /// One word for all: the sources' common name, or `mixed`.
    pub fn source(&self) -> &'static str {
        let mut sources = self.values.values().map(|a| a.source);
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

/// The board and what polls it.
pub struct Apys {
    pub sources: ApySources,
    pub board: Mutex<Board>,
}

impl Apys {
    pub fn new(sources: ApySources) -> Apys {
        Apys {
            sources,
            board: Mutex::new(Board::default()),
        }
    }
}

/// The borrow rates' keys (spec 4.7: per devnet-live lending venue, per token).
pub const BORROW_KEYS: [&str; 4] = ["lend_a_sol", "lend_a_usdc", "lend_b_sol", "lend_b_usdc"];

/// The borrow APRs (`domain::borrow::rates` polls them), keyed as [`BORROW_KEYS`].
pub struct BorrowRates {
    /// `BORROW_CONFIGURED_RATES`: percent per key, for a token whose reserve gives none.
    pub configured: BTreeMap<String, f64>,
    pub board: Mutex<Board>,
}

impl BorrowRates {
    pub fn new(configured: BTreeMap<String, f64>) -> BorrowRates {
        BorrowRates {
            configured,
            board: Mutex::new(Board::default()),
        }
    }
}
