//! The response cache of the hot reads (the feed and its companions, narrative and group reads,
//! shield listings, profiles and leaderboards, the Echo Pool's history, the system status):
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
//! Memory is bounded: entries are evicted least recently used first once their bodies pass
//! `RESPONSE_CACHE_MB`, and an answer over [`MAX_ENTRY_BYTES`] is never kept. On Postgres,
//! entries a commit made stale are also dropped as soon as its notification arrives
//! ([`crate::freshness::Caches::changed`]), so they do not hold memory until their next read; the generations stay
//! the fence that decides what is served, because a notification may arrive after a read that
//! must already see its commit.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use hashlink::LruCache;
use narrative_store::freshness::{Change, Generations, Topic};
use poem::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use poem::http::{HeaderValue, Method, StatusCode};
use poem::{Endpoint, IntoResponse, Request, Response};
use sha2::{Digest, Sha256};

use super::contract::Contract;
use crate::clock::SharedClock;
use crate::freshness::{Cache, Freshness};

/// Set by a handler whose answer turns stale at a time: unix seconds.
pub const FRESH_UNTIL: &str = "x-fresh-until";
/// The largest answer kept (the broad listing of 5,000 narratives is 2.35 MiB).
pub const MAX_ENTRY_BYTES: usize = 8 * 1024 * 1024;

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
        "/v1/system/status" => &[Topic::System],
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

pub struct ResponseCache {
    contract: Arc<Contract>,
    freshness: Arc<Freshness>,
    clock: SharedClock,
    entries: Mutex<Entries>,
    max_bytes: usize,
    counters: Counters,
}

/// What `/metrics` shows of a cache.
#[derive(Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    /// Entries dropped for room.
    evicted_for_room: AtomicU64,
    /// Entries dropped because a notified commit changed their topic.
    evicted_by_change: AtomicU64,
}

impl ResponseCache {
    /// A cache of at most `max_bytes` of bodies (0 disables it).
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
            max_bytes,
            counters: Counters::default(),
        })
    }

    fn lookup(&self, key: &str) -> Option<Arc<Entry>> {
        self.entries.lock().expect("cache").lru.get(key).cloned()
    }

    fn keep(&self, key: String, entry: Arc<Entry>) {
        let mut entries = self.entries.lock().expect("cache");
        entries.bytes += entry.body.len();
        if let Some(old) = entries.lru.insert(key, entry) {
            entries.bytes -= old.body.len();
        }
        while entries.bytes > self.max_bytes {
            match entries.lru.remove_lru() {
                Some((_, evicted)) => {
                    entries.bytes -= evicted.body.len();
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
                entries.bytes -= entry.body.len();
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
             # HELP http_cache_bytes Bytes of the bodies the response cache holds.\n\
             # TYPE http_cache_bytes gauge\n\
             http_cache_bytes {bytes}\n\
             # HELP http_cache_max_bytes The response cache's bound (RESPONSE_CACHE_MB).\n\
             # TYPE http_cache_max_bytes gauge\n\
             http_cache_max_bytes {}\n\
             # HELP http_cache_requests_total Cached routes' requests, by outcome.\n\
             # TYPE http_cache_requests_total counter\n\
             http_cache_requests_total{{outcome=\"hit\"}} {}\n\
             http_cache_requests_total{{outcome=\"miss\"}} {}\n\
             # HELP http_cache_evictions_total Entries dropped, by reason.\n\
             # TYPE http_cache_evictions_total counter\n\
             http_cache_evictions_total{{reason=\"room\"}} {}\n\
             http_cache_evictions_total{{reason=\"change\"}} {}\n",
            self.max_bytes,
            load(&c.hits),
            load(&c.misses),
            load(&c.evicted_for_room),
            load(&c.evicted_by_change),
        )
    }
}

impl ResponseCache {
    /// Bytes of bodies held now.
    pub fn bytes(&self) -> usize {
        self.entries.lock().expect("cache").bytes
    }

    /// Serves `req` from the cache when its route is cached and its entry current, else from
    /// `ep`, keeping a `200` answer.
    ///
    /// The routes' future is boxed ([`pass`]): held inline it would make this future, and every
    /// middleware's around it, as large as the largest handler's, and a hit would pay for moving
    /// that state through every layer.
    pub async fn serve<E: Endpoint>(&self, ep: E, req: Request) -> poem::Result<Response> {
        let topics = match (req.method() == Method::GET && self.max_bytes > 0)
            .then(|| topics_of(self.contract.route_label(req.uri().path())))
            .flatten()
        {
            Some(topics) => topics,
            None => return pass(&ep, req).await,
        };
        let key = key(&req);
        let if_none_match = req.headers().get(IF_NONE_MATCH).cloned();
        // Read after the request arrived: every commit before it is reflected.
        let generations = match self.freshness.current().await {
            Ok(generations) => generations,
            Err(error) => {
                tracing::warn!(%error, "freshness unknown: answering without the cache");
                return pass(&ep, req).await;
            }
        };
        if let Some(entry) = self.lookup(&key) {
            if entry.current(&generations, self.clock.now()) {
                self.counters.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(answer(&entry, if_none_match.as_ref()));
            }
        }
        self.counters.misses.fetch_add(1, Ordering::Relaxed);
        let response = pass(&ep, req).await?;
        if response.status() != StatusCode::OK {
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
            generations: topics.iter().map(|t| generations.of(*t)).collect(),
            fresh_until,
            body,
        });
        if entry.body.len() <= MAX_ENTRY_BYTES {
            self.keep(key, entry.clone());
        }
        Ok(answer(&entry, if_none_match.as_ref()))
    }
}

/// `req` served by the routes, their future on the heap.
async fn pass<E: Endpoint>(ep: &E, req: Request) -> poem::Result<Response> {
    Ok(Box::pin(ep.call(req)).await?.into_response())
}

/// The request's path and its query parameters in a canonical order.
fn key(req: &Request) -> String {
    let path = req.uri().path();
    match req.uri().query().filter(|q| !q.is_empty()) {
        None => path.to_owned(),
        Some(query) => {
            let mut pairs: Vec<&str> = query.split('&').filter(|p| !p.is_empty()).collect();
            pairs.sort_unstable();
            format!("{path}?{}", pairs.join("&"))
        }
    }
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

    #[test]
    fn keys_do_not_depend_on_the_order_of_parameters() {
        let a = Request::builder()
            .uri_str("/v1/narratives?limit=5&filter=new")
            .finish();
        let b = Request::builder()
            .uri_str("/v1/narratives?filter=new&limit=5")
            .finish();
        assert_eq!(key(&a), key(&b));
        assert_eq!(key(&a), "/v1/narratives?filter=new&limit=5");
        let bare = Request::builder().uri_str("/v1/narratives").finish();
        assert_eq!(key(&bare), "/v1/narratives");
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
