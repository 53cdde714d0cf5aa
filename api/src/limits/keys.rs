//! What the limiter remembers of the API keys it looked up, by their SHA-256 digest, for
//! [`REMEMBER_SECS`] and at most [`CAPACITY`] of each kind:
//!
//! - unknown keys: a key the store did not know is answered 401 again without asking the store,
//!   so replaying one bad key costs nothing;
//! - keys found live: a request carrying one is not charged to its IP's anonymous limit before
//!   the lookup (the lookup itself still runs, so a revoked key is refused at once, and then
//!   forgotten). Random keys are never found, so every request with one is charged to its IP
//!   first, and a flood of them costs at most the IP's limit in lookups.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// How long a key's lookup is remembered.
pub const REMEMBER_SECS: i64 = 60;
/// Keys remembered of each kind; past it the expired ones are dropped, then the rest.
pub const CAPACITY: usize = 10_000;

/// A key's SHA-256 digest.
pub type Digest = [u8; 32];

#[derive(Default)]
struct Remembered {
    /// Digest → when it is forgotten.
    unknown: HashMap<Digest, i64>,
    known: HashMap<Digest, i64>,
}

#[derive(Default)]
pub struct KeyMemory {
    remembered: Mutex<Remembered>,
    lookups: AtomicU64,
}

fn live(map: &HashMap<Digest, i64>, digest: &Digest, now: i64) -> bool {
    map.get(digest).is_some_and(|until| now < *until)
}

/// Inserts `digest` until `until`, making room first: expired entries go, and if none had
/// expired the map starts over (it is a memo: forgetting costs a lookup, never a wrong answer).
fn remember(map: &mut HashMap<Digest, i64>, digest: Digest, now: i64) {
    if map.len() >= CAPACITY && !map.contains_key(&digest) {
        map.retain(|_, until| now < *until);
        if map.len() >= CAPACITY {
            map.clear();
        }
    }
    map.insert(digest, now + REMEMBER_SECS);
}

impl KeyMemory {
    fn lock(&self) -> std::sync::MutexGuard<'_, Remembered> {
        self.remembered.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `digest` was looked up and not found in the last [`REMEMBER_SECS`].
    pub fn is_unknown(&self, digest: &Digest, now: i64) -> bool {
        live(&self.lock().unknown, digest, now)
    }

    /// Whether `digest` was found live in the last [`REMEMBER_SECS`].
    pub fn is_known(&self, digest: &Digest, now: i64) -> bool {
        live(&self.lock().known, digest, now)
    }

    /// Counts one lookup in the store (shown on `/metrics`).
    pub fn looked_up(&self) {
        self.lookups.fetch_add(1, Ordering::Relaxed);
    }

    /// Lookups in the store so far.
    pub fn lookups(&self) -> u64 {
        self.lookups.load(Ordering::Relaxed)
    }

    /// The store does not know `digest` (or it is revoked).
    pub fn remember_unknown(&self, digest: Digest, now: i64) {
        let mut remembered = self.lock();
        remembered.known.remove(&digest);
        remember(&mut remembered.unknown, digest, now);
    }

    /// The store found `digest` live.
    pub fn remember_known(&self, digest: Digest, now: i64) {
        let mut remembered = self.lock();
        remembered.unknown.remove(&digest);
        remember(&mut remembered.known, digest, now);
    }

    /// `/metrics` lines.
    pub fn render(&self) -> String {
        format!(
            "# HELP api_key_lookups_total API keys looked up in the store by the limiter\n\
             # TYPE api_key_lookups_total counter\n\
             api_key_lookups_total {}\n",
            self.lookups()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_remembered_for_a_minute_and_the_memory_is_bounded() {
        let memory = KeyMemory::default();
        memory.remember_unknown([1; 32], 100);
        assert!(memory.is_unknown(&[1; 32], 159));
        assert!(!memory.is_unknown(&[1; 32], 160));
        memory.remember_known([1; 32], 100);
        assert!(!memory.is_unknown(&[1; 32], 101), "found since");
        assert!(memory.is_known(&[1; 32], 101));
        memory.remember_unknown([1; 32], 102);
        assert!(!memory.is_known(&[1; 32], 103), "revoked since");

        for n in 0..(CAPACITY as u32 + 5) {
            let mut digest = [0; 32];
            digest[..4].copy_from_slice(&n.to_le_bytes());
            memory.remember_unknown(digest, 1_000);
        }
        assert!(memory.lock().unknown.len() <= CAPACITY);
    }
}
