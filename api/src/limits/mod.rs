//! Rate limits of spec 8: fixed one-window counters per subject (an IP, an API key), in memory
//! for one process or in Redis when several processes must share them.
//!
//! When Redis cannot be reached a hit is let through but marked [`Decision::limiter_down`]:
//! plain rate limits stay open (a limiter outage must not take the API down), while the daily
//! caps of routes that spend money on outside providers or the ledger refuse (fail closed,
//! `domain::quota::charge_cost`), so an outage cannot be turned into an unbounded bill.

pub mod client;
mod keys;
mod memory;
mod redis_store;

pub use keys::KeyMemory;
pub use memory::MemoryLimiter;
pub use redis_store::RedisLimiter;

/// A named limit: at most `limit` hits per `window_secs` per subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub name: &'static str,
    pub limit: u32,
    pub window_secs: u64,
}

/// Agent registration: about 5 per hour per IP.
pub const AGENT_REGISTRATION: Policy = Policy {
    name: "agent_register",
    limit: 5,
    window_secs: 3600,
};

/// Spec 8: polish-text and polish-voice share 3 per wallet per (UTC) day.
pub const AI_POLISH: Policy = Policy {
    name: "ai_polish",
    limit: 3,
    window_secs: 86_400,
};

/// AI drafts (`generate`): 5 per wallet per UTC day (the spec leaves it open, 33).
pub const AI_GENERATE: Policy = Policy {
    name: "ai_generate",
    limit: 5,
    window_secs: 86_400,
};

/// And 20 per IP per UTC day, so fresh wallet addresses do not buy more drafts.
pub const AI_GENERATE_PER_IP: Policy = Policy {
    name: "ai_generate_ip",
    limit: 20,
    window_secs: 86_400,
};

/// Per-IP daily caps of the routes that cost money per call (AI polish, wallet screening, the
/// passport score, the holder check's ledger walk), beside their per-wallet ones: fresh wallet
/// addresses do not buy more calls. Their limits are configuration (`*_PER_IP_DAILY`).
pub fn per_ip_daily(name: &'static str, limit: u32) -> Policy {
    Policy {
        name,
        limit,
        window_secs: 86_400,
    }
}

/// Agent feed: about 60 per minute per API key.
pub const AGENT_FEED: Policy = Policy {
    name: "agent_feed",
    limit: 60,
    window_secs: 60,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    /// Hits in the current window, this one included.
    pub count: u64,
    /// Seconds until the window resets.
    pub retry_after_secs: u64,
    /// The shared counters could not be reached: the hit was not counted. `allowed` is then
    /// true; a cost quota refuses it anyway (see the module's notes).
    pub limiter_down: bool,
}

/// The window a moment falls in, and the seconds left in it.
pub(crate) fn window(now: u64, window_secs: u64) -> (u64, u64) {
    let window_secs = window_secs.max(1);
    let index = now / window_secs;
    (index, (index + 1) * window_secs - now)
}

pub enum Limiter {
    Memory(MemoryLimiter),
    Redis(RedisLimiter),
}

impl Limiter {
    /// Counts one hit of `subject` under `policy` at `now` (unix seconds).
    pub async fn hit(&self, policy: &Policy, subject: &str, now: i64) -> Decision {
        let now = now.max(0) as u64;
        match self {
            Limiter::Memory(m) => m.hit(policy, subject, now),
            Limiter::Redis(r) => r.hit(policy, subject, now).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_aligned_to_their_length() {
        assert_eq!(window(120, 60), (2, 60));
        assert_eq!(window(179, 60), (2, 1));
        assert_eq!(window(3599, 3600), (0, 1));
    }
}
