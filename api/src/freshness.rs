//! What the reads of every area share to stay fresh without asking the database each time.
//!
//! The freshness barrier: the generations of every topic (`narrative_store::freshness`) as read
//! by a probe that began after the caller asked. Whatever committed before the call (in this
//! process, in another api process, in a standalone indexer) is reflected in what it returns,
//! because every write bumps its topics' generations in its own transaction.
//!
//! Probes are shared: one runs at a time, and every caller that arrived while it ran waits for
//! the next one, which then answers all of them. Under load a probe serves many requests, so the
//! barrier costs a request at most two round trips of a one-row-per-topic query, and the database
//! sees far fewer queries than requests.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex, Weak};

use narrative_store::freshness::{generations, Change, Generations, Topic};
use narrative_store::Store;
use tokio::sync::watch;

/// The latest finished probe: its number and what it read (an error as text).
type Probe = (u64, Result<Generations, String>);

pub struct Freshness {
    store: Store,
    counters: Mutex<Counters>,
    done: watch::Sender<Probe>,
    /// The newest generations seen, by a probe or by a write that read them: a guess for a
    /// caller that verifies its reads at its own write ([`Freshness::latest`]).
    latest: Mutex<Option<Generations>>,
}

#[derive(Default)]
struct Counters {
    /// Probes begun.
    started: u64,
    /// The highest probe number a caller waits for.
    wanted: u64,
    /// Whether a probe loop runs.
    running: bool,
}

impl Freshness {
    pub fn new(store: Store) -> Arc<Freshness> {
        Arc::new(Freshness {
            store,
            counters: Mutex::new(Counters::default()),
            done: watch::channel((0, Err("no probe yet".to_owned()))).0,
            latest: Mutex::new(None),
        })
    }

    /// The newest generations seen so far, with no round trip: possibly older than the
    /// caller, so only for reads that are verified later against generations read after the
    /// caller arrived (a prepare's, at its write). `None` before anything was seen.
    pub fn latest(&self) -> Option<Generations> {
        *self.latest.lock().expect("latest")
    }

    /// Generations read by some other query (a write that read them).
    pub fn observe(&self, seen: &Generations) {
        let mut latest = self.latest.lock().expect("latest");
        *latest = Some(latest.map_or(*seen, |known| known.newest(seen)));
    }

    /// Every topic's generation, read after this call began.
    pub async fn current(self: &Arc<Self>) -> Result<Generations, String> {
        let (target, start) = {
            let mut counters = self.counters.lock().expect("counters");
            // The next probe to begin begins after now.
            let target = counters.started + 1;
            counters.wanted = counters.wanted.max(target);
            let start = !counters.running;
            counters.running = true;
            (target, start)
        };
        let mut finished = self.done.subscribe();
        if start {
            let this = self.clone();
            // A task of its own: a caller that goes away must not stop the others' probe.
            tokio::spawn(async move { this.probe_while_wanted().await });
        }
        loop {
            {
                let (number, result) = &*finished.borrow_and_update();
                if *number >= target {
                    return result.clone();
                }
            }
            if finished.changed().await.is_err() {
                return Err("the freshness probe stopped".to_owned());
            }
        }
    }

    async fn probe_while_wanted(&self) {
        loop {
            let number = {
                let mut counters = self.counters.lock().expect("counters");
                if counters.wanted <= counters.started {
                    counters.running = false;
                    return;
                }
                counters.started += 1;
                counters.started
            };
            let result = generations(self.store.db())
                .await
                .map_err(|e| e.to_string());
            if let Ok(seen) = &result {
                self.observe(seen);
            }
            drop(self.done.send_replace((number, result)));
        }
    }
}

/// A cache of answers that drops what a change made stale.
pub trait Cache: Send + Sync {
    /// Drops what read `change`'s topic (everything for [`Change::Unknown`]).
    fn evict(&self, change: Change);
    /// Its lines of the Prometheus text format.
    fn render(&self) -> String;
}

/// The caches of this process (one per application built), told of the changes other processes
/// commit (`background::follow_changes` listens).
#[derive(Default)]
pub struct Caches {
    caches: Mutex<Vec<Weak<dyn Cache>>>,
}

impl Caches {
    pub fn register(&self, cache: Arc<dyn Cache>) {
        let mut caches = self.caches.lock().expect("caches");
        caches.retain(|c| c.strong_count() > 0);
        caches.push(Arc::downgrade(&cache));
    }

    fn live(&self) -> Vec<Arc<dyn Cache>> {
        let caches = self.caches.lock().expect("caches");
        caches.iter().filter_map(Weak::upgrade).collect()
    }

    /// A commit changed a topic (or anything): drop what it made stale.
    pub fn changed(&self, change: Change) {
        for cache in self.live() {
            cache.evict(change);
        }
    }

    /// The metrics of the process's cache (of the first, should several apps be built).
    pub fn render(&self) -> String {
        self.live()
            .first()
            .map(|cache| cache.render())
            .unwrap_or_default()
    }
}

/// Values read from the store, kept while the generation of their topic stands: what a hot
/// write path (a prepare checks halts, terms and the coverage) would otherwise read from the
/// database on every request. A value is loaded after the barrier read the generation it is
/// kept under, so it is at least as new as that generation; once the topic moves on, it is
/// loaded again.
pub struct Memo<K, V> {
    topic: Topic,
    max_entries: usize,
    entries: Mutex<HashMap<K, (i64, V)>>,
}

impl<K: Eq + Hash, V: Clone> Memo<K, V> {
    /// A memo of values of `topic`, at most `max_entries` of them (past that, the entries of
    /// older generations go, then all).
    pub fn new(topic: Topic, max_entries: usize) -> Memo<K, V> {
        Memo {
            topic,
            max_entries,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// `key`'s value as of `now` (generations the barrier read after the request arrived),
    /// from `load` unless one was kept under the current generation.
    pub async fn get<E, Fut>(
        &self,
        now: &Generations,
        key: K,
        load: impl FnOnce() -> Fut,
    ) -> Result<V, E>
    where
        Fut: Future<Output = Result<V, E>>,
    {
        let generation = now.of(self.topic);
        if let Some((kept_under, value)) = self.entries.lock().expect("memo").get(&key) {
            if *kept_under == generation {
                return Ok(value.clone());
            }
        }
        let value = load().await?;
        let mut entries = self.entries.lock().expect("memo");
        if entries.len() >= self.max_entries {
            entries.retain(|_, (kept_under, _)| *kept_under == generation);
            if entries.len() >= self.max_entries {
                entries.clear();
            }
        }
        entries.insert(key, (generation, value.clone()));
        Ok(value)
    }

    pub fn len(&self) -> usize {
        self.entries.lock().expect("memo").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a value was built from, as counters that only grow (generations, ids, the clock's
/// second): a value built from a key that covers another is at least as new as that key needs.
pub trait Covers {
    /// Whether `self` is at least as new as `other` in every part.
    fn covers(&self, other: &Self) -> bool;
}

impl Covers for i64 {
    fn covers(&self, other: &i64) -> bool {
        self >= other
    }
}

/// The last value built, kept with what it was built from (generations the barrier read after
/// the request arrived, and whatever else the value depends on): a request whose key the kept
/// one covers gets it, and builds run one at a time, so a burst of requests for an expensive
/// read waits for one build instead of each running it, and a request that waited behind a
/// build from newer data takes that. For reads every request needs whole and whose requests
/// differ only in what they show of it (a page, a wallet's part).
///
/// A build runs on a task of its own, holding the lock: the request that started it may go
/// away (its client hung up) and the build still finishes and is kept for those waiting.
pub struct LastBuilt<K, V> {
    /// The metric's name: `<name>_builds_total`.
    name: &'static str,
    last: Arc<tokio::sync::Mutex<Option<(K, V)>>>,
    builds: std::sync::atomic::AtomicU64,
}

impl<K, V> LastBuilt<K, V>
where
    K: Covers + Send + 'static,
    V: Clone + Send + 'static,
{
    pub fn new(name: &'static str) -> LastBuilt<K, V> {
        LastBuilt {
            name,
            last: Arc::new(tokio::sync::Mutex::new(None)),
            builds: Default::default(),
        }
    }

    /// The value for `key`: the kept one when its key covers `key`, else built by `build` and
    /// kept. Without a key (what the value depends on could not be read) it is built for this
    /// request alone, without waiting for the lock, and the kept one stays.
    pub async fn get<E, Fut>(&self, key: Option<K>, build: impl FnOnce() -> Fut) -> Result<V, E>
    where
        E: Send + 'static,
        Fut: Future<Output = Result<V, E>> + Send + 'static,
    {
        let count = || {
            self.builds
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        };
        let Some(key) = key else {
            count();
            return build().await;
        };
        let mut last = self.last.clone().lock_owned().await;
        if let Some((built_from, value)) = last.as_ref() {
            if built_from.covers(&key) {
                return Ok(value.clone());
            }
        }
        count();
        let building = build();
        let task = tokio::spawn(async move {
            let value = building.await?;
            *last = Some((key, value.clone()));
            Ok(value)
        });
        match task.await {
            Ok(built) => built,
            // A build that panicked panics its request, as it would have run in it.
            Err(failed) if failed.is_panic() => std::panic::resume_unwind(failed.into_panic()),
            Err(_) => panic!("the runtime is shutting down"),
        }
    }

    /// Its lines of the Prometheus text format.
    pub fn render(&self) -> String {
        let name = self.name;
        format!(
            "# HELP {name}_builds_total Values built (the other requests shared one).\n\
             # TYPE {name}_builds_total counter\n\
             {name}_builds_total {}\n",
            self.builds.load(std::sync::atomic::Ordering::Relaxed)
        )
    }
}

/// Values kept until a time (unix seconds, on the injected clock), for answers that are allowed
/// to be a little old, such as a holder check's ledger walk; at most `max_entries` (past that,
/// the expired ones go, then all).
pub struct Expiring<K, V> {
    max_entries: usize,
    entries: Mutex<HashMap<K, (i64, V)>>,
}

impl<K: Eq + Hash, V: Clone> Expiring<K, V> {
    pub fn new(max_entries: usize) -> Expiring<K, V> {
        Expiring {
            max_entries,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// `key`'s value, if it was kept until after `now`.
    pub fn get(&self, key: &K, now: i64) -> Option<V> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries
            .get(key)
            .filter(|(until, _)| now < *until)
            .map(|(_, value)| value.clone())
    }

    /// Keeps `value` for `key` until `until`.
    pub fn put(&self, key: K, value: V, now: i64, until: i64) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= self.max_entries {
            entries.retain(|_, (kept_until, _)| now < *kept_until);
            if entries.len() >= self.max_entries {
                entries.clear();
            }
        }
        entries.insert(key, (until, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(markets: i64) -> Generations {
        Generations::with(&[(Topic::Markets, markets)])
    }

    #[tokio::test]
    async fn a_value_is_loaded_again_once_its_topic_moves_on() {
        let memo: Memo<&str, u32> = Memo::new(Topic::Markets, 10);
        let loads = std::cell::Cell::new(0);
        let load = |value: u32| {
            loads.set(loads.get() + 1);
            async move { Ok::<_, ()>(value) }
        };
        assert_eq!(memo.get(&at(1), "a", || load(1)).await, Ok(1));
        assert_eq!(memo.get(&at(1), "a", || load(2)).await, Ok(1));
        assert_eq!(loads.get(), 1);
        assert_eq!(memo.get(&at(2), "a", || load(3)).await, Ok(3));
        assert_eq!(loads.get(), 2);
        // A failed load keeps nothing.
        assert_eq!(memo.get(&at(3), "a", || async { Err(()) }).await, Err(()));
        assert_eq!(memo.get(&at(3), "a", || load(4)).await, Ok(4));
    }

    #[tokio::test]
    async fn it_never_holds_more_than_its_bound() {
        let memo: Memo<u32, u32> = Memo::new(Topic::Markets, 3);
        for key in 0..3 {
            memo.get(&at(1), key, || async { Ok::<_, ()>(key) })
                .await
                .unwrap();
        }
        assert_eq!(memo.len(), 3);
        // Full: the entries of generation 1 go first.
        memo.get(&at(2), 9, || async { Ok::<_, ()>(9) })
            .await
            .unwrap();
        assert_eq!(memo.len(), 1);
        for key in 10..13 {
            memo.get(&at(2), key, || async { Ok::<_, ()>(key) })
                .await
                .unwrap();
        }
        assert!(memo.len() <= 3, "{}", memo.len());
    }

    /// A kept value answers every key it covers; a newer key builds again; a request without
    /// a key builds for itself and leaves the kept value alone; a failed build keeps it too.
    #[tokio::test]
    async fn the_last_value_built_answers_the_keys_it_covers() {
        let built: LastBuilt<i64, String> = LastBuilt::new("test");
        let get = |key: Option<i64>, value: &'static str| {
            built.get(key, move || async move { Ok::<_, ()>(value.to_owned()) })
        };
        assert_eq!(get(Some(5), "five").await.unwrap(), "five");
        assert_eq!(get(Some(5), "again").await.unwrap(), "five");
        assert_eq!(get(Some(4), "older").await.unwrap(), "five", "5 covers 4");
        assert_eq!(get(None, "keyless").await.unwrap(), "keyless");
        assert_eq!(get(Some(5), "after").await.unwrap(), "five");
        let failed = built
            .get(Some(7), || async {
                Err::<String, &str>("the database went away")
            })
            .await;
        assert_eq!(failed, Err("the database went away"));
        assert_eq!(get(Some(6), "six").await.unwrap(), "six");
        assert_eq!(get(Some(6), "again").await.unwrap(), "six");
        // five, keyless, the failed one, six.
        assert!(
            built.render().contains("test_builds_total 4\n"),
            "{}",
            built.render()
        );
    }

    /// The request that started a build goes away mid-build: the build finishes on its own
    /// task and is kept, so the next request is answered without building again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_build_outlives_the_request_that_started_it() {
        let built: Arc<LastBuilt<i64, String>> = Arc::new(LastBuilt::new("test"));
        let release = Arc::new(tokio::sync::Semaphore::new(0));
        let started = Arc::new(tokio::sync::Notify::new());
        let leader = tokio::spawn({
            let (built, release, started) = (built.clone(), release.clone(), started.clone());
            async move {
                built
                    .get(Some(1), move || async move {
                        started.notify_one();
                        release.acquire().await.expect("open").forget();
                        Ok::<_, ()>("built".to_owned())
                    })
                    .await
            }
        });
        started.notified().await;
        leader.abort();
        assert!(leader.await.unwrap_err().is_cancelled());
        release.add_permits(1);
        let again = built
            .get(Some(1), || async { Ok::<_, ()>("built again".to_owned()) })
            .await;
        assert_eq!(again, Ok("built".to_owned()));
        assert!(
            built.render().contains("test_builds_total 1\n"),
            "{}",
            built.render()
        );
    }
}
