//! Time in the api. Every rule that depends on the time (rate-limit windows, daily caps,
//! deadlines, job schedules, caches) asks an injected [`Clock`] for unix seconds, so tests move
//! time instead of waiting for it. On the wire times are ISO 8601 UTC (spec 4.0).

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};

pub const DAY_SECS: i64 = 86_400;

pub trait Clock: Send + Sync + fmt::Debug {
    /// Unix seconds.
    fn now(&self) -> i64;
}

pub type SharedClock = Arc<dyn Clock>;

/// The operating system's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> i64 {
        Utc::now().timestamp()
    }
}

/// A clock that moves only when told to (tests).
#[derive(Debug)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn at(unix: i64) -> Arc<ManualClock> {
        Arc::new(ManualClock(AtomicI64::new(unix)))
    }

    /// Starts at the operating system's time.
    pub fn at_system_time() -> Arc<ManualClock> {
        Self::at(SystemClock.now())
    }

    pub fn set(&self, unix: i64) {
        self.0.store(unix, Ordering::SeqCst);
    }

    pub fn advance(&self, secs: i64) {
        self.0.fetch_add(secs, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// `2026-01-01T00:00:00Z`.
pub fn iso(unix: i64) -> String {
    DateTime::<Utc>::from_timestamp(unix, 0)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Whether a value fetched at `fetched_at` is younger than `ttl_secs` at `now`. A value from
/// the future (the system clock stepped back since) is not: a cache must not serve it until
/// the clock catches up.
pub fn is_fresh(fetched_at: i64, now: i64, ttl_secs: i64) -> bool {
    (0..ttl_secs).contains(&now.saturating_sub(fetched_at))
}

/// The start of the UTC day `now` falls in.
pub fn day_start(now: i64) -> i64 {
    now - now.rem_euclid(DAY_SECS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_is_utc_with_a_z() {
        assert_eq!(iso(1_767_225_600), "2026-01-01T00:00:00Z");
    }

    #[test]
    fn a_manual_clock_moves_when_told() {
        let clock = ManualClock::at(100);
        clock.advance(50);
        assert_eq!(clock.now(), 150);
        clock.set(7);
        assert_eq!(clock.now(), 7);
        assert_eq!(day_start(DAY_SECS * 3 + 5), DAY_SECS * 3);
    }

    #[test]
    fn freshness_ends_at_the_ttl_and_when_the_clock_steps_back() {
        assert!(is_fresh(100, 100, 10));
        assert!(is_fresh(100, 109, 10));
        assert!(!is_fresh(100, 110, 10));
        assert!(!is_fresh(100, 99, 10), "fetched in the future");
    }
}
