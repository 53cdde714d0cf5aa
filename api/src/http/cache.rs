//! The response cache of the hot reads (the feed and its companions, narrative and group reads,
//! shield listings, profiles and leaderboards (conviction, creators, points, agents, missions),
//! the Echo Pool's history, the system status, the DeFi APYs, allocations, yields and staking,
//! the borrow rates, capacities and simulations):
//! their `200` answers are kept in memory and served again while nothing they read has changed,
//! with an `ETag`, and `304 Not Modified` for a client that sends it back.
//!
//! What "changed" means is decided by the data, not by a timer: each route reads some topics
//! (`narrative_store::freshness::Topic`), every write bumps the generations of the topics it
//! changes in its own transaction, and an entry is served only while the generations it was
//! filled under are still current, as the freshness barrier reads them after the request arrived.
//! So no answer is served after a commit that changed it, whichever process or indexer wrote.
//! Answers that turn stale with time (a period that opens, a narrative no longer new) carry the
//! moment in an internal header, `x-fresh-until`, which the handler sets and the cache strips.
//!
//! Memory is bounded: entries are evicted least recently used first once their bodies, keys
//! and a per-entry overhead pass `RESPONSE_CACHE_MB`, and an answer over [`MAX_ENTRY_BYTES`]
//! or a key over [`MAX_KEY_BYTES`] is never kept. A key is the path and the query parameters
//! the route declares ([`key`]): made-up parameters neither miss the cache nor fill it. On Postgres,
//! entries a commit made stale are also dropped as soon as its notification arrives
//! ([`crate::freshness::Caches::changed`]), so they do not hold memory until their next read; the generations stay
//! the fence that decides what is served, because a notification may arrive after a read that
//! must already see its commit.

use std::collections::HashMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use hashlink::LruCache;
use narrative_store::freshness::{Change, Generations, Topic};
use poem::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use poem::http::{HeaderValue, Method, StatusCode};
use poem::{Endpoint, IntoResponse, Request, Response};
use sha2::{Digest, Sha256};
use tokio::sync::watch;

use super::contract::Contract;
use crate::clock::SharedClock;
use crate::freshness::{Cache, Freshness};

/// Set by a handler whose answer turns stale at a time: unix seconds.
pub const FRESH_UNTIL: &str = "x-fresh-until";
/// The largest answer kept (the broad listing of 5,000 narratives is 2.35 MiB).
pub const MAX_ENTRY_BYTES: usize = 8 * 1024 * 1024;
/// The longest key kept: a path and declared parameters past this are made up (the longest
/// real ones, a wallet's and a filtered feed's, are under 200 bytes), and are answered without
/// the cache.
pub const MAX_KEY_BYTES: usize = 1024;
/// What an entry holds beside its body and key (its headers, generations, the LRU's links),
/// counted toward `RESPONSE_CACHE_MB` so that many small entries are bounded too.
const ENTRY_OVERHEAD_BYTES: usize = 256;

/// The memory an entry under a key of `key_bytes` is counted as holding.
fn held(key_bytes: usize, entry: &Entry) -> usize {
    key_bytes + entry.body.len() + ENTRY_OVERHEAD_BYTES
}

/// The routes cached (by template) and the topics each reads.
fn topics_of(template: &str) -> Option<&'static [Topic]> {
    const MARKETS: &[Topic] = &[Topic::Markets];
    Some(match template {
        "/v1/narratives"
        | "/v1/narratives/hero"
        | "/v1/narratives/filter-counts"
        | "/v1/narratives/{id}"
        | "/v1/narrative-groups"
        | "/v1/narrative-groups/{id}"
        | "/v1/conviction/creator/{wallet}"
        | "/v1/conviction/leaderboard/conviction"
        | "/v1/conviction/leaderboard/creators" => MARKETS,
        "/v1/conviction/epoch/history" => &[Topic::Echo],
        "/v1/conviction/{wallet}" => &[Topic::Markets, Topic::Terms],
        "/v1/shield/protocols" | "/v1/shield/protocols/{id}" => &[Topic::Shield],
        "/v1/points/leaderboard" => &[Topic::Engagement],
        "/v1/agent/leaderboard" => &[Topic::Markets, Topic::Engagement],
        "/v1/missions/leaderboard" => &[Topic::Markets, Topic::Echo, Topic::Engagement],
        "/v1/system/status" => &[Topic::System],
        // The APYs turn stale with time only (the board's minute, `x-fresh-until`).
        "/v1/defi/apys" => &[],
        // Valued at the venues' rates: stale when positions change or the rates' time is up.
        "/v1/defi/allocation/{wallet}" | "/v1/defi/yield/{wallet}" => &[Topic::Defi],
        "/v1/staking/{wallet}" => &[Topic::Defi, Topic::Markets],
        // Borrow rates turn stale with time only; capacity and simulation read the positions
        // and borrows (`defi`) and the tier (`markets`: backings and tier NFTs), and the venues'
        // rates and the price, whose time is up with `x-fresh-until`.
        "/v1/borrow/rates" => &[],
        "/v1/borrow/capacity/{wallet}" | "/v1/borrow/simulate" => &[Topic::Defi, Topic::Markets],
        _ => return None,
    })
}

/// `payload`, marked stale from `until` (unix seconds) when its answer changes with time.
pub fn fresh_until<T>(payload: T, until: Option<i64>) -> poem_openapi::payload::Response<T> {
    let response = poem_openapi::payload::Response::new(payload);
    match until {
        Some(at) => response.header(FRESH_UNTIL, at.to_string()),
        None => response,
    }
}

struct Entry {
    /// The topics its route reads.
    topics: &'static [Topic],
    body: Bytes,
    content_type: Option<HeaderValue>,
    etag: HeaderValue,
    /// The generations of its topics when it was filled.
    generations: Vec<i64>,
    fresh_until: Option<i64>,
}

impl Entry {
    fn current(&self, now: &Generations, at: i64) -> bool {
        self.fresh_until.is_none_or(|until| at < until)
            && self
                .topics
                .iter()
                .zip(&self.generations)
                .all(|(topic, generation)| now.of(*topic) == *generation)
    }
}

struct Entries {
    lru: LruCache<String, Arc<Entry>>,
    bytes: usize,
}

/// An answer being built for a key under some generations: requests for the same key that
/// read the same generations wait for it instead of each asking the database (a burst of
/// misses after a write, or the first requests after a start, build one answer, not one each).
struct Flight {
    generations: Vec<i64>,
    /// Requests that joined it.
    followers: usize,
    /// `Some` once built; `None` if its leader's answer is not kept (an error, or too large).
    done: watch::Receiver<Option<Option<Arc<Entry>>>>,
}

/// What a miss does: build the answer, or wait for the one being built.
enum Miss {
    Lead(FlightGuard),
    Follow(watch::Receiver<Option<Option<Arc<Entry>>>>),
}

/// Held by the request building an answer; ends its flight however the request ends (a
/// leader whose client went away is dropped, and its followers then build their own).
struct FlightGuard {
    cache: Arc<ResponseCache>,
    key: String,
    done: watch::Sender<Option<Option<Arc<Entry>>>>,
}

impl Drop for FlightGuard {
    fn drop(&mut self) {
        let mut flights = self.cache.flights.lock().expect("flights");
        if flights
            .get(&self.key)
            .is_some_and(|flight| flight.done.same_channel(&self.done.subscribe()))
        {
            flights.remove(&self.key);
        }
    }
}

pub struct ResponseCache {
    contract: Arc<Contract>,
    freshness: Arc<Freshness>,
    clock: SharedClock,
    entries: Mutex<Entries>,
    flights: Mutex<HashMap<String, Flight>>,
    max_bytes: usize,
    counters: Counters,
}

/// What `/metrics` shows of a cache.
#[derive(Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    /// Misses answered by another request's build.
    shared: AtomicU64,
    /// Entries dropped for room.
    evicted_for_room: AtomicU64,
    /// Entries dropped because a notified commit changed their topic.
    evicted_by_change: AtomicU64,
}

impl ResponseCache {
    /// A cache of at most `max_bytes` of bodies, keys and entries (0 disables it).
    pub fn new(
        contract: Arc<Contract>,
        freshness: Arc<Freshness>,
        clock: SharedClock,
        max_bytes: usize,
    ) -> Arc<ResponseCache> {
        Arc::new(ResponseCache {
            contract,
            freshness,
            clock,
            entries: Mutex::new(Entries {
                lru: LruCache::new_unbounded(),
                bytes: 0,
            }),
            flights: Mutex::new(HashMap::new()),
            max_bytes,
            counters: Counters::default(),
        })
    }

    fn lookup(&self, key: &str) -> Option<Arc<Entry>> {
        self.entries.lock().expect("cache").lru.get(key).cloned()
    }

    fn keep(&self, key: String, entry: Arc<Entry>) {
        let mut entries = self.entries.lock().expect("cache");
        let key_bytes = key.len();
        entries.bytes += held(key_bytes, &entry);
        if let Some(old) = entries.lru.insert(key, entry) {
            entries.bytes -= held(key_bytes, &old);
        }
        while entries.bytes > self.max_bytes {
            match entries.lru.remove_lru() {
                Some((key, evicted)) => {
                    entries.bytes -= held(key.len(), &evicted);
                    self.counters
                        .evicted_for_room
                        .fetch_add(1, Ordering::Relaxed);
                }
                None => break,
            }
        }
    }
}

impl Cache for ResponseCache {
    /// Drops the entries that read `change`'s topic (every entry for [`Change::Unknown`]).
    fn evict(&self, change: Change) {
        let mut entries = self.entries.lock().expect("cache");
        let stale: Vec<String> = entries
            .lru
            .iter()
            .filter(|(_, entry)| match change {
                Change::Topic(topic) => entry.topics.contains(&topic),
                Change::Unknown => true,
            })
            .map(|(key, _)| key.clone())
            .collect();
        for key in stale {
            if let Some(entry) = entries.lru.remove(&key) {
                entries.bytes -= held(key.len(), &entry);
                self.counters
                    .evicted_by_change
                    .fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The cache's lines of the Prometheus text format.
    fn render(&self) -> String {
        let (entries, bytes) = {
            let held = self.entries.lock().expect("cache");
            (held.lru.len(), held.bytes)
        };
        let c = &self.counters;
        let load = |n: &AtomicU64| n.load(Ordering::Relaxed);
        format!(
            "# HELP http_cache_entries Answers the response cache holds.\n\
             # TYPE http_cache_entries gauge\n\
             http_cache_entries {entries}\n\
             # HELP http_cache_bytes Bytes the response cache holds: bodies, keys, entries.\n\
             # TYPE http_cache_bytes gauge\n\
             http_cache_bytes {bytes}\n\
             # HELP http_cache_max_bytes The response cache's bound (RESPONSE_CACHE_MB).\n\
             # TYPE http_cache_max_bytes gauge\n\
             http_cache_max_bytes {}\n\
             # HELP http_cache_requests_total Cached routes' requests, by outcome.\n\
             # TYPE http_cache_requests_total counter\n\
             http_cache_requests_total{{outcome=\"hit\"}} {}\n\
             http_cache_requests_total{{outcome=\"miss\"}} {}\n\
             http_cache_requests_total{{outcome=\"shared\"}} {}\n\
             # HELP http_cache_evictions_total Entries dropped, by reason.\n\
             # TYPE http_cache_evictions_total counter\n\
             http_cache_evictions_total{{reason=\"room\"}} {}\n\
             http_cache_evictions_total{{reason=\"change\"}} {}\n",
            self.max_bytes,
            load(&c.hits),
            load(&c.misses),
            load(&c.shared),
            load(&c.evicted_for_room),
            load(&c.evicted_by_change),
        )
    }
}

impl ResponseCache {
    /// Bytes held now: bodies, keys and each entry's overhead.
    pub fn bytes(&self) -> usize {
        self.entries.lock().expect("cache").bytes
    }

    /// Serves `req` from the cache when its route is cached and its entry current, else from
    /// `ep`, keeping a `200` answer; a miss for an answer being built already waits for it.
    ///
    /// The routes' future is boxed ([`pass`]): held inline it would make this future, and every
    /// middleware's around it, as large as the largest handler's, and a hit would pay for moving
    /// that state through every layer.
    pub async fn serve<E: Endpoint>(
        self: &Arc<Self>,
        ep: E,
        req: Request,
    ) -> poem::Result<Response> {
        let cached = (req.method() == Method::GET && self.max_bytes > 0)
            .then(|| self.contract.get_route(req.uri().path()))
            .flatten()
            .and_then(|route| Some((topics_of(route.template)?, key(&req, route.query)?)));
        let (topics, key) = match cached {
            // A key this long is a made-up path or query value: answered, not kept.
            Some((topics, key)) if key.len() <= MAX_KEY_BYTES => (topics, key),
            _ => return pass(&ep, req).await,
        };
        let if_none_match = req.headers().get(IF_NONE_MATCH).cloned();
        // Read after the request arrived: every commit before it is reflected.
        let generations = match self.freshness.current().await {
            Ok(generations) => generations,
            Err(error) => {
                tracing::warn!(%error, "freshness unknown: answering without the cache");
                return pass(&ep, req).await;
            }
        };
        let now = self.clock.now();
        if let Some(entry) = self.lookup(&key) {
            if entry.current(&generations, now) {
                self.counters.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(answer(&entry, if_none_match.as_ref()));
            }
        }
        let filled_under: Vec<i64> = topics.iter().map(|t| generations.of(*t)).collect();
        let guard = match self.join(&key, &filled_under) {
            Miss::Lead(guard) => Some(guard),
            Miss::Follow(mut done) => {
                // The leader's answer was read under these very generations, after this
                // request's barrier could have seen any commit that changes it.
                let built = done
                    .wait_for(Option::is_some)
                    .await
                    .ok()
                    .and_then(|b| b.clone());
                if let Some(Some(entry)) = built {
                    if entry.fresh_until.is_none_or(|until| now < until) {
                        self.counters.shared.fetch_add(1, Ordering::Relaxed);
                        return Ok(answer(&entry, if_none_match.as_ref()));
                    }
                }
                // Its leader went away or answered an error: build this one alone.
                None
            }
        };
        self.counters.misses.fetch_add(1, Ordering::Relaxed);
        let response = pass(&ep, req).await?;
        if response.status() != StatusCode::OK {
            if let Some(guard) = guard {
                guard.done.send_replace(Some(None));
            }
            return Ok(response);
        }
        let (parts, body) = response.into_parts();
        let body = body.into_bytes().await?;
        let fresh_until = parts
            .headers
            .get(FRESH_UNTIL)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok());
        let entry = Arc::new(Entry {
            topics,
            etag: etag(&body),
            content_type: parts.headers.get(CONTENT_TYPE).cloned(),
            generations: filled_under,
            fresh_until,
            body,
        });
        if entry.body.len() <= MAX_ENTRY_BYTES {
            self.keep(key, entry.clone());
        }
        if let Some(guard) = guard {
            guard.done.send_replace(Some(Some(entry.clone())));
        }
        Ok(answer(&entry, if_none_match.as_ref()))
    }

    /// Leads the build of `key` under `generations`, or follows the one under way.
    fn join(self: &Arc<Self>, key: &str, generations: &[i64]) -> Miss {
        let mut flights = self.flights.lock().expect("flights");
        if let Some(flight) = flights.get_mut(key) {
            if flight.generations == generations {
                flight.followers += 1;
                return Miss::Follow(flight.done.clone());
            }
        }
        let (done, follow) = watch::channel(None);
        // A flight under older generations is replaced; its leader still answers its own.
        flights.insert(
            key.to_owned(),
            Flight {
                generations: generations.to_vec(),
                followers: 0,
                done: follow,
            },
        );
        Miss::Lead(FlightGuard {
            cache: self.clone(),
            key: key.to_owned(),
            done,
        })
    }

    /// Builds under way, and how many requests wait for the one of `key` (for the tests).
    #[cfg(test)]
    fn flights(&self, key: &str) -> (usize, usize) {
        let flights = self.flights.lock().expect("flights");
        (flights.len(), flights.get(key).map_or(0, |f| f.followers))
    }
}

/// `req` served by the routes, their future on the heap.
async fn pass<E: Endpoint>(ep: &E, req: Request) -> poem::Result<Response> {
    Ok(Box::pin(ep.call(req)).await?.into_response())
}

/// The request's path and the query parameters its route declares (`declared`, sorted), by
/// name, each name's values in the order sent; `None` when the query does not parse. The
/// parameters are read decoded, as the route reads them (`%6Cimit=1` is `limit=1`), and written
/// with each value's length, so no value can pass for another pair. Parameters the route does
/// not declare cannot change its answer (poem-openapi ignores them), so they are left out:
/// otherwise any made-up parameter would be an entry of its own, a way around the cache and
/// into its memory. Of a name sent twice the order is kept, since the route reads the first.
fn key(req: &Request, declared: &[String]) -> Option<String> {
    let path = req.uri().path();
    let mut pairs: Vec<(String, String)> = req.params().ok()?;
    pairs.retain(|(name, _)| declared.binary_search(name).is_ok());
    // Stable: values of one name keep the order they were sent in.
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    let mut key = String::with_capacity(path.len() + pairs.len() * 16);
    key.push_str(path);
    for (i, (name, value)) in pairs.iter().enumerate() {
        let separator = if i == 0 { '?' } else { '&' };
        // Writing to a String cannot fail.
        let _ = write!(key, "{separator}{name}={}:{value}", value.len());
    }
    Some(key)
}

/// A strong validator of the body: the first 16 bytes of its SHA-256, quoted.
fn etag(body: &[u8]) -> HeaderValue {
    let digest = Sha256::digest(body);
    HeaderValue::from_str(&format!("\"{}\"", hex::encode(&digest[..16])))
        .expect("hex is a valid header value")
}

/// Whether an `If-None-Match` value names `etag` (or is `*`).
fn matches(if_none_match: &HeaderValue, etag: &HeaderValue) -> bool {
    let Ok(listed) = if_none_match.to_str() else {
        return false;
    };
    let wanted = etag.to_str().unwrap_or_default();
    listed
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag == wanted || tag.strip_prefix("W/") == Some(wanted))
}

fn answer(entry: &Entry, if_none_match: Option<&HeaderValue>) -> Response {
    let mut response = if if_none_match.is_some_and(|v| matches(v, &entry.etag)) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut response = Response::builder().body(entry.body.clone());
        if let Some(content_type) = &entry.content_type {
            response
                .headers_mut()
                .insert(CONTENT_TYPE, content_type.clone());
        }
        response
    };
    let headers = response.headers_mut();
    headers.insert(ETAG, entry.etag.clone());
    // Clients may keep the answer but must ask again (with the ETag) before using it.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared() -> Vec<String> {
        vec!["filter".to_owned(), "limit".to_owned()]
    }

    fn key_of(uri: &str) -> String {
        key(&Request::builder().uri_str(uri).finish(), &declared()).unwrap()
    }

    #[test]
    fn keys_do_not_depend_on_the_order_of_parameters() {
        let a = key_of("/v1/narratives?limit=5&filter=new");
        assert_eq!(a, key_of("/v1/narratives?filter=new&limit=5"));
        assert_eq!(a, "/v1/narratives?filter=3:new&limit=1:5");
        assert_eq!(key_of("/v1/narratives"), "/v1/narratives");
    }

    #[test]
    fn keys_hold_only_the_parameters_the_route_declares() {
        assert_eq!(
            key_of("/v1/narratives?pad=1&limit=5&x&&filter=new&zzz=9"),
            "/v1/narratives?filter=3:new&limit=1:5"
        );
        assert_eq!(key_of("/v1/narratives?pad=123"), "/v1/narratives");
        // A name sent twice: the route reads the first, so the order is part of the key.
        assert_eq!(
            key_of("/v1/narratives?limit=1&limit=100"),
            "/v1/narratives?limit=1:1&limit=3:100"
        );
        assert_ne!(
            key_of("/v1/narratives?limit=1&limit=100"),
            key_of("/v1/narratives?limit=100&limit=1")
        );
        // A declared name without a value is still what was sent.
        assert_eq!(key_of("/v1/narratives?filter"), "/v1/narratives?filter=0:");
    }

    /// Names and values are read as the route reads them, decoded: an encoded name is the
    /// parameter it spells, not a made-up one, so its answer cannot be kept under the key of
    /// a request without it; and a value holding `&` or `=` cannot pass for other pairs.
    #[test]
    fn keys_read_the_parameters_decoded() {
        assert_eq!(
            key_of("/v1/narratives?%6Cimit=1"),
            key_of("/v1/narratives?limit=1")
        );
        assert_ne!(key_of("/v1/narratives?%6Cimit=1"), key_of("/v1/narratives"));
        assert_eq!(
            key_of("/v1/narratives?filter=a%26limit%3D5"),
            "/v1/narratives?filter=9:a&limit=5"
        );
        assert_ne!(
            key_of("/v1/narratives?filter=a%26limit%3D5"),
            key_of("/v1/narratives?filter=a&limit=5")
        );
    }

    #[test]
    fn if_none_match_names_the_etag_among_others_or_anything() {
        let tag = etag(b"body");
        assert!(matches(&tag, &tag));
        let listed = HeaderValue::from_str(&format!("\"x\", {}", tag.to_str().unwrap())).unwrap();
        assert!(matches(&listed, &tag));
        assert!(matches(&HeaderValue::from_static("*"), &tag));
        assert!(!matches(&HeaderValue::from_static("\"other\""), &tag));
        assert_ne!(etag(b"body"), etag(b"bodies"));
    }

    /// A cache over a one-route contract (`/v1/shield/protocols`) on a fresh store, and an
    /// endpoint that counts its builds and answers once `release` has a permit for it.
    async fn slow_route() -> (
        narrative_store::testing::TestDb,
        Arc<ResponseCache>,
        Arc<AtomicU64>,
        Arc<tokio::sync::Semaphore>,
        impl Endpoint + Clone,
    ) {
        let db = narrative_store::testing::TestDb::new().await;
        let cache = cache_over(&db, 1 << 20);
        let builds = Arc::new(AtomicU64::new(0));
        let release = Arc::new(tokio::sync::Semaphore::new(0));
        let endpoint = {
            let (builds, release) = (builds.clone(), release.clone());
            Arc::new(poem::endpoint::make(move |_| {
                let (builds, release) = (builds.clone(), release.clone());
                async move {
                    let n = builds.fetch_add(1, Ordering::SeqCst) + 1;
                    release.acquire().await.expect("open").forget();
                    format!("answer {n}")
                }
            }))
        };
        (db, cache, builds, release, endpoint)
    }

    /// A cache of `max_bytes` over a one-route contract: `/v1/shield/protocols`, which declares
    /// the query parameter `category`.
    fn cache_over(db: &narrative_store::testing::TestDb, max_bytes: usize) -> Arc<ResponseCache> {
        let spec = serde_json::json!({
            "openapi": "3.0.0",
            "paths": {"/shield/protocols": {"get": {
                "parameters": [{"name": "category", "in": "query", "schema": {"type": "string"}}],
            }}},
            "components": {"schemas": {}},
        });
        let contract = Arc::new(Contract::new(&spec.to_string(), &[], &[]));
        let clock: SharedClock = crate::clock::ManualClock::at(1_800_000_000);
        let freshness = Freshness::new(db.store.clone());
        ResponseCache::new(contract, freshness, clock, max_bytes)
    }

    /// An endpoint answering `small` and counting its calls.
    fn counted() -> (Arc<AtomicU64>, impl Endpoint + Clone) {
        let calls = Arc::new(AtomicU64::new(0));
        let endpoint = {
            let calls = calls.clone();
            Arc::new(poem::endpoint::make(move |_| {
                calls.fetch_add(1, Ordering::SeqCst);
                async move { "small" }
            }))
        };
        (calls, endpoint)
    }

    fn get(uri: &str) -> Request {
        Request::builder().uri_str(uri).finish()
    }

    /// A made-up parameter is served the entry of the request without it, and adds none.
    #[tokio::test]
    async fn made_up_parameters_neither_miss_nor_fill_the_cache() {
        let db = narrative_store::testing::TestDb::new().await;
        let cache = cache_over(&db, 1 << 20);
        let (calls, endpoint) = counted();
        for i in 0..20 {
            let uri = format!("/v1/shield/protocols?pad={i}-{}", "x".repeat(500));
            let response = cache.serve(endpoint.clone(), get(&uri)).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(cache.entries.lock().unwrap().lru.len(), 1);
        assert_eq!(cache.counters.hits.load(Ordering::Relaxed), 19);
        // A declared parameter is part of the key.
        cache
            .serve(endpoint.clone(), get("/v1/shield/protocols?category=dex"))
            .await
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(cache.entries.lock().unwrap().lru.len(), 2);
    }

    /// Keys count toward the bound: many small answers under long keys stay within it, and a
    /// key past [`MAX_KEY_BYTES`] is answered but not kept.
    #[tokio::test]
    async fn keys_count_toward_the_bound() {
        let db = narrative_store::testing::TestDb::new().await;
        let max_bytes = 16 * 1024;
        let cache = cache_over(&db, max_bytes);
        let (calls, endpoint) = counted();
        for i in 0..100 {
            let uri = format!("/v1/shield/protocols?category={i}-{}", "c".repeat(900));
            let response = cache.serve(endpoint.clone(), get(&uri)).await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 100);
        let (entries, bytes) = {
            let held = cache.entries.lock().unwrap();
            (held.lru.len(), held.bytes)
        };
        assert!(bytes <= max_bytes, "{bytes} bytes held over {max_bytes}");
        // Each entry is counted with its key: at most 16 KiB / (900 + 5 + 256) of them.
        assert!((10..=14).contains(&entries), "{entries} entries");
        assert_eq!(bytes, cache.bytes());
        assert!(
            bytes >= entries * 900,
            "{bytes} bytes for {entries} long keys"
        );

        let long = format!(
            "/v1/shield/protocols?category={}",
            "c".repeat(MAX_KEY_BYTES)
        );
        cache.serve(endpoint.clone(), get(&long)).await.unwrap();
        cache.serve(endpoint.clone(), get(&long)).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 102);
        assert!(cache
            .lookup(&key(&get(&long), &["category".into()]).unwrap())
            .is_none());
    }

    fn protocols() -> Request {
        Request::builder().uri_str("/v1/shield/protocols").finish()
    }

    /// Waits, at most 10 s, until `done` holds.
    async fn until(what: &str, done: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !done() {
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting: {what}"
            );
            tokio::task::yield_now().await;
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    }

    /// Ten misses for one answer: one build, nine requests served by it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn misses_for_an_answer_being_built_wait_for_it() {
        let (_db, cache, builds, release, endpoint) = slow_route().await;
        let requests: Vec<_> = (0..10)
            .map(|_| {
                let (cache, endpoint) = (cache.clone(), endpoint.clone());
                tokio::spawn(async move { cache.serve(endpoint, protocols()).await })
            })
            .collect();
        until("nine followers", || {
            cache.flights("/v1/shield/protocols") == (1, 9)
        })
        .await;
        assert_eq!(builds.load(Ordering::SeqCst), 1);
        release.add_permits(1);
        let mut etags = Vec::new();
        for request in requests {
            let response = request.await.unwrap().unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            etags.push(response.headers()[ETAG].clone());
            assert_eq!(
                response.into_body().into_string().await.unwrap(),
                "answer 1"
            );
        }
        assert!(etags.windows(2).all(|pair| pair[0] == pair[1]));
        assert_eq!(builds.load(Ordering::SeqCst), 1);
        assert_eq!(cache.counters.shared.load(Ordering::Relaxed), 9);
        assert_eq!(cache.counters.misses.load(Ordering::Relaxed), 1);
        assert_eq!(cache.flights("/v1/shield/protocols"), (0, 0));
    }

    /// A leader whose request goes away leaves its followers to build their own answer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn followers_of_an_abandoned_build_build_their_own() {
        let (_db, cache, builds, release, endpoint) = slow_route().await;
        let leader = tokio::spawn({
            let (cache, endpoint) = (cache.clone(), endpoint.clone());
            async move { cache.serve(endpoint, protocols()).await }
        });
        until("the leader building", || builds.load(Ordering::SeqCst) == 1).await;
        let follower = tokio::spawn({
            let (cache, endpoint) = (cache.clone(), endpoint.clone());
            async move { cache.serve(endpoint, protocols()).await }
        });
        until("one follower", || {
            cache.flights("/v1/shield/protocols") == (1, 1)
        })
        .await;
        leader.abort();
        assert!(leader.await.unwrap_err().is_cancelled());
        until("the follower building", || {
            builds.load(Ordering::SeqCst) == 2
        })
        .await;
        release.add_permits(1);
        let response = follower.await.unwrap().unwrap();
        assert_eq!(
            response.into_body().into_string().await.unwrap(),
            "answer 2"
        );
        assert_eq!(cache.flights("/v1/shield/protocols"), (0, 0));
    }

    #[test]
    fn only_the_hot_reads_are_cached() {
        assert_eq!(
            topics_of("/v1/conviction/{wallet}"),
            Some(&[Topic::Markets, Topic::Terms][..])
        );
        assert_eq!(
            topics_of("/v1/shield/protocols"),
            Some(&[Topic::Shield][..])
        );
        assert_eq!(
            topics_of("/v1/conviction/leaderboard/conviction"),
            Some(&[Topic::Markets][..])
        );
        assert_eq!(
            topics_of("/v1/conviction/epoch/history"),
            Some(&[Topic::Echo][..])
        );
        // Answers that change with the clock alone are not kept.
        assert_eq!(topics_of("/v1/conviction/epoch/current"), None);
        assert_eq!(topics_of("/v1/shield/back"), None);
        assert_eq!(topics_of("unmatched"), None);
    }
}
