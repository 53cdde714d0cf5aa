//! One process's counters. A hit of a subject already counted allocates nothing (the subject
//! is looked up by `&str`); only a new subject is copied.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{window, Decision, Policy};

/// Past this many live counters, finished windows are swept on the next hit.
const SWEEP_AT: usize = 100_000;

/// Per policy name: subject → (window index, hits in it).
#[derive(Default)]
struct Counters {
    by_policy: HashMap<&'static str, HashMap<Box<str>, (u64, u64)>>,
    len: usize,
}

#[derive(Default)]
pub struct MemoryLimiter {
    counters: Mutex<Counters>,
}

impl MemoryLimiter {
    pub fn hit(&self, policy: &Policy, subject: &str, now: u64) -> Decision {
        let (index, retry_after_secs) = window(now, policy.window_secs);
        let mut guard = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        let counters = &mut *guard;
        if counters.len >= SWEEP_AT {
            if let Some(subjects) = counters.by_policy.get_mut(policy.name) {
                let before = subjects.len();
                subjects.retain(|_, (w, _)| *w == index);
                counters.len -= before - subjects.len();
            }
        }
        let subjects = counters.by_policy.entry(policy.name).or_default();
        let entry = match subjects.get_mut(subject) {
            Some(entry) => entry,
            None => {
                counters.len += 1;
                subjects.entry(subject.into()).or_insert((index, 0))
            }
        };
        if entry.0 != index {
            *entry = (index, 0);
        }
        entry.1 += 1;
        Decision {
            allowed: entry.1 <= u64::from(policy.limit),
            count: entry.1,
            retry_after_secs,
            limiter_down: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const THREE_PER_MINUTE: Policy = Policy {
        name: "t",
        limit: 3,
        window_secs: 60,
    };

    #[test]
    fn the_limit_holds_per_subject_and_resets_with_the_window() {
        let limiter = MemoryLimiter::default();
        for n in 1..=3 {
            let d = limiter.hit(&THREE_PER_MINUTE, "a", 600);
            assert!(d.allowed);
            assert_eq!(d.count, n);
        }
        let refused = limiter.hit(&THREE_PER_MINUTE, "a", 610);
        assert_eq!(
            refused,
            Decision {
                allowed: false,
                count: 4,
                retry_after_secs: 50,
                limiter_down: false,
            }
        );
        assert!(
            limiter.hit(&THREE_PER_MINUTE, "b", 610).allowed,
            "other subjects unaffected"
        );
        assert!(
            limiter.hit(&THREE_PER_MINUTE, "a", 660).allowed,
            "next window"
        );
    }

    #[test]
    fn agent_policies_have_the_spec_values() {
        use crate::limits::{AGENT_FEED, AGENT_REGISTRATION};
        let limiter = MemoryLimiter::default();
        let hour_start = 7_200;
        for _ in 0..5 {
            assert!(
                limiter
                    .hit(&AGENT_REGISTRATION, "10.0.0.1", hour_start + 10)
                    .allowed
            );
        }
        let refused = limiter.hit(&AGENT_REGISTRATION, "10.0.0.1", hour_start + 10);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after_secs, 3590);
        for _ in 0..60 {
            assert!(limiter.hit(&AGENT_FEED, "key-1", 60).allowed);
        }
        assert!(!limiter.hit(&AGENT_FEED, "key-1", 119).allowed);
        assert!(limiter.hit(&AGENT_FEED, "key-1", 120).allowed);
    }
}
