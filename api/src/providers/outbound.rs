//! Requests to URLs that clients supplied (agent webhooks, Web Push endpoints) go
//! through this one guard, so the service cannot be aimed at itself, its network or a cloud
//! metadata endpoint (server-side request forgery):
//!
//! - `https` only; `http` and loopback addresses only where the development setting allows
//!   them (a receiver on the developer's machine);
//! - the host's addresses are resolved and every one must be public: loopback, private,
//!   link-local, CGNAT, multicast, documentation, benchmarking and reserved ranges are refused,
//!   IPv4 and IPv6 alike (IPv4-mapped, NAT64 and 6to4 addresses are judged by the IPv4 address
//!   they carry);
//! - at registration the URL is checked whole; at delivery a literal address is checked before
//!   sending and a name when the request connects (the HTTP client resolves through the guard,
//!   once), so a name that resolved to a public address at registration and to a private one
//!   later (DNS rebinding) is refused then;
//! - redirects are not followed, no proxy is used, and time and response size are bounded;
//! - a host that keeps failing (no answer in time, a refused connection) is skipped for a
//!   cool-down by a per-host circuit breaker ([`Breaker`], on the injected clock): its requests
//!   answer [`OutboundError::CircuitOpen`] at once instead of holding a worker for the timeout.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::Url;

use crate::clock::SharedClock;

/// Why the guard refused a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Not `https` (or `http` without the development setting).
    Scheme(String),
    NoHost,
    /// The host is, or resolves to, an address the service does not call.
    Address(IpAddr),
    /// The host does not resolve.
    Unresolvable(String),
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Scheme(scheme) => write!(f, "the service calls https URLs only, not {scheme}"),
            Refused::NoHost => f.write_str("the URL has no host"),
            Refused::Address(ip) => write!(f, "{ip} is not a public address"),
            Refused::Unresolvable(host) => write!(f, "{host} does not resolve"),
        }
    }
}

impl std::error::Error for Refused {}

impl Refused {
    /// Why, as told to the client that gave `url`: a name refused for what it resolves to, and
    /// one that does not resolve, get the same words and no address, so the refusal does not
    /// show the service's view of names (internal hosts, their addresses). The whole reason is
    /// logged.
    pub fn for_client(&self, url: &Url) -> String {
        let named = url.host_str().is_some_and(|host| {
            host.trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .is_err()
        });
        match self {
            Refused::Address(_) | Refused::Unresolvable(_) if named => {
                tracing::info!(refused = %self, "outbound URL refused");
                format!(
                    "{} does not resolve to a public address",
                    url.host_str().unwrap_or_default()
                )
            }
            other => other.to_string(),
        }
    }
}

/// Whether `ip` is an address on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0 // "this network"
        || a == 10 // private
        || a == 127 // loopback
        || (a == 100 && (64..=127).contains(&b)) // CGNAT, 100.64.0.0/10
        || (a == 169 && b == 254) // link-local, cloud metadata
        || (a == 172 && (16..=31).contains(&b)) // private
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // TEST-NET-1
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast
        || (a == 192 && b == 168) // private
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // TEST-NET-2
        || (a == 203 && b == 0 && c == 113) // TEST-NET-3
        || a >= 224) // multicast 224/4, reserved 240/4, broadcast
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    // Addresses that carry an IPv4 address are as public as that address.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    if segments[..3] == [0x64, 0xff9b, 1] {
        // Local-use NAT64, 64:ff9b:1::/48 (RFC 8215): translated by a site's own gateway, so
        // what it reaches is that site's choice.
        return false;
    }
    if segments[..6] == [0, 0, 0, 0, 0xffff, 0] {
        // IPv4-translated, ::ffff:0:0:0/96.
        let [_, _, _, _, _, _, hi, lo] = segments;
        return is_public_v4(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)));
    }
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        // NAT64, 64:ff9b::/96.
        let [_, _, _, _, _, _, hi, lo] = segments;
        return is_public_v4(Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)));
    }
    if segments[0] == 0x2002 {
        // 6to4, 2002::/16: the IPv4 address follows the prefix.
        return is_public_v4(Ipv4Addr::from(
            (u32::from(segments[1]) << 16) | u32::from(segments[2]),
        ));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || segments[..6] == [0; 6] // IPv4-compatible (deprecated), ::/96
        || (segments[0] & 0xfe00) == 0xfc00 // unique local, fc00::/7
        || (segments[0] & 0xffc0) == 0xfe80 // link-local, fe80::/10
        || (segments[0] & 0xffc0) == 0xfec0 // site-local (deprecated), fec0::/10
        || (segments[0] & 0xff00) == 0xff00 // multicast, ff00::/8
        || segments[..4] == [0x100, 0, 0, 0] // discard, 100::/64
        || (segments[0] == 0x2001 && segments[1] < 0x200) // IETF protocol assignments (Teredo included), 2001::/23
        || (segments[0] == 0x2001 && segments[1] == 0xdb8) // documentation, 2001:db8::/32
        || (segments[0] == 0x3fff && segments[1] < 0x1000)) // documentation, 3fff::/20
}

/// Resolves host names (the system's resolver, or a fixed table in tests).
#[async_trait::async_trait]
pub trait Resolve: Send + Sync {
    async fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>>;
}

/// The operating system's resolver.
pub struct SystemResolver;

#[async_trait::async_trait]
impl Resolve for SystemResolver {
    async fn resolve(&self, host: &str) -> std::io::Result<Vec<IpAddr>> {
        let found =
            tokio::time::timeout(Duration::from_secs(5), tokio::net::lookup_host((host, 0)))
                .await
                .map_err(|_| {
                    std::io::Error::new(std::io::ErrorKind::TimedOut, "resolving timed out")
                })??;
        Ok(found.map(|addr| addr.ip()).collect())
    }
}

/// What the guard lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutboundPolicy {
    /// Development only: `http` URLs and loopback addresses are allowed too.
    pub allow_local: bool,
    /// For the whole request, connection included.
    pub timeout: Duration,
    /// Of a response body the service reads.
    pub max_response_bytes: usize,
    /// When a host's requests are skipped.
    pub breaker: BreakerPolicy,
}

impl OutboundPolicy {
    pub fn production() -> OutboundPolicy {
        OutboundPolicy {
            allow_local: false,
            timeout: Duration::from_secs(5),
            max_response_bytes: 64 * 1024,
            breaker: BreakerPolicy::default(),
        }
    }

    fn permits(&self, ip: IpAddr) -> bool {
        is_public(ip) || (self.allow_local && ip.is_loopback())
    }
}

/// The checks shared by the guard and the client's resolver.
struct Checker {
    policy: OutboundPolicy,
    resolver: Arc<dyn Resolve>,
}

impl Checker {
    /// The addresses of `host`, when every one of them is permitted.
    async fn addresses(&self, host: &str) -> Result<Vec<IpAddr>, Refused> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let addresses = match literal_address(host) {
            Some(ip) => vec![ip],
            None => self
                .resolver
                .resolve(bare)
                .await
                .map_err(|_| Refused::Unresolvable(bare.to_owned()))?,
        };
        if addresses.is_empty() {
            return Err(Refused::Unresolvable(bare.to_owned()));
        }
        match addresses.iter().find(|ip| !self.policy.permits(**ip)) {
            Some(ip) => Err(Refused::Address(*ip)),
            None => Ok(addresses),
        }
    }
}

/// The address a URL host names literally (`1.2.3.4`, `[::1]`), if it is one.
fn literal_address(host: &str) -> Option<IpAddr> {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

/// The HTTP client's resolver: names resolve only to permitted addresses, at connection time.
struct GuardedResolver(Arc<Checker>);

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let checker = self.0.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addresses = checker.addresses(&host).await?;
            let addrs: reqwest::dns::Addrs = Box::new(
                addresses
                    .into_iter()
                    .map(|ip| SocketAddr::new(ip, 0))
                    .collect::<Vec<_>>()
                    .into_iter(),
            );
            Ok(addrs)
        })
    }
}

/// When the per-host circuit breaker opens, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerPolicy {
    /// Consecutive failed requests to one host that open its breaker.
    pub failures: u32,
    /// Seconds the host is then skipped.
    pub cooldown_secs: i64,
}

impl Default for BreakerPolicy {
    fn default() -> BreakerPolicy {
        BreakerPolicy {
            failures: 5,
            cooldown_secs: 120,
        }
    }
}

/// Hosts the breaker tracks at most (only failing hosts are kept: a success forgets the host).
const MAX_TRACKED_HOSTS: usize = 10_000;

#[derive(Debug, Clone, Copy, Default)]
struct HostHealth {
    /// Failed requests in a row.
    failures: u32,
    /// While the clock is before this, the host is skipped.
    open_until: Option<i64>,
}

/// A per-host circuit breaker: after [`BreakerPolicy::failures`] consecutive failures a host is
/// skipped for [`BreakerPolicy::cooldown_secs`]; then requests pass again (one more failure
/// reopens it at once, a success closes it). Time comes from the injected clock.
pub struct Breaker {
    policy: BreakerPolicy,
    clock: SharedClock,
    hosts: Mutex<HashMap<String, HostHealth>>,
}

impl Breaker {
    pub fn new(policy: BreakerPolicy, clock: SharedClock) -> Breaker {
        Breaker {
            policy,
            clock,
            hosts: Mutex::new(HashMap::new()),
        }
    }

    fn hosts(&self) -> std::sync::MutexGuard<'_, HashMap<String, HostHealth>> {
        self.hosts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `Err(until)` while `host` is skipped: the unix time its cool-down ends.
    pub fn admit(&self, host: &str) -> Result<(), i64> {
        let now = self.clock.now();
        match self.hosts().get(host).and_then(|h| h.open_until) {
            Some(until) if now < until => Err(until),
            _ => Ok(()),
        }
    }

    /// Records how a request to `host` went: a success forgets the host's failures, a failure
    /// counts and, at the threshold (or past it, after a cool-down), opens the breaker.
    pub fn record(&self, host: &str, succeeded: bool) {
        let now = self.clock.now();
        let mut hosts = self.hosts();
        if succeeded {
            hosts.remove(host);
            return;
        }
        if !hosts.contains_key(host) && hosts.len() >= MAX_TRACKED_HOSTS {
            // Full: forget the hosts that are not skipped now; failing to track more only
            // means a host is not skipped.
            hosts.retain(|_, h| h.open_until.is_some_and(|until| now < until));
            if hosts.len() >= MAX_TRACKED_HOSTS {
                return;
            }
        }
        let health = hosts.entry(host.to_owned()).or_default();
        health.failures = health.failures.saturating_add(1);
        if health.failures >= self.policy.failures.max(1) {
            health.open_until = Some(now + self.policy.cooldown_secs);
        }
    }
}

/// The answer of a receiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    pub status: u16,
}

#[derive(Debug, thiserror::Error)]
pub enum OutboundError {
    #[error("refused: {0}")]
    Refused(#[from] Refused),
    #[error("request failed: {0}")]
    Failed(String),
    /// The host failed too often lately: not called until `until` (unix seconds).
    #[error("the host is skipped until {until} after repeated failures")]
    CircuitOpen { until: i64 },
}

/// Sends requests to client-supplied URLs through the guard.
pub struct Outbound {
    checker: Arc<Checker>,
    client: reqwest::Client,
    breaker: Breaker,
}

impl Outbound {
    pub fn new(
        policy: OutboundPolicy,
        resolver: Arc<dyn Resolve>,
        clock: SharedClock,
    ) -> anyhow::Result<Outbound> {
        let checker = Arc::new(Checker { policy, resolver });
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver(checker.clone())))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(policy.timeout)
            .connect_timeout(policy.timeout)
            .build()?;
        Ok(Outbound {
            checker,
            client,
            breaker: Breaker::new(policy.breaker, clock),
        })
    }

    /// Whether the service would call `url` now: its scheme, and its host's addresses.
    pub async fn check(&self, url: &Url) -> Result<(), Refused> {
        let host = self.host_of(url)?;
        self.checker.addresses(host).await.map(|_| ())
    }

    /// The host of `url`, when its scheme is one the service calls.
    fn host_of<'u>(&self, url: &'u Url) -> Result<&'u str, Refused> {
        match url.scheme() {
            "https" => {}
            "http" if self.checker.policy.allow_local => {}
            other => return Err(Refused::Scheme(other.to_owned())),
        }
        url.host_str()
            .filter(|h| !h.is_empty())
            .ok_or(Refused::NoHost)
    }

    /// POSTs the JSON `body` with `headers` to `url`, when the guard allows it; the receiver's
    /// status. The response body is read up to the policy's bound and dropped.
    pub async fn post(
        &self,
        url: &Url,
        headers: &[(&str, String)],
        body: String,
    ) -> Result<Answered, OutboundError> {
        self.post_body(url, "application/json", headers, body.into_bytes())
            .await
    }

    /// [`Outbound::post`] of `body` as `content_type`.
    pub async fn post_body(
        &self,
        url: &Url,
        content_type: &str,
        headers: &[(&str, String)],
        body: Vec<u8>,
    ) -> Result<Answered, OutboundError> {
        // Literal addresses never reach the resolver, so they are checked here; a name is
        // resolved and checked once, by the guarded resolver, when the request connects.
        let host = self.host_of(url)?;
        // The breaker's key: the host and port (two receivers on one machine are two hosts).
        let origin = format!("{host}:{}", url.port_or_known_default().unwrap_or_default());
        self.breaker
            .admit(&origin)
            .map_err(|until| OutboundError::CircuitOpen { until })?;
        if literal_address(host).is_some() {
            self.checker.addresses(host).await?;
        }
        let answered = self.send(url, content_type, headers, body).await;
        match &answered {
            // Any answer, a 5xx included, is a host that answers: what the breaker guards is a
            // worker held for the timeout. Counting a fast 500 would let one tenant of a shared
            // receiver host (its URL is the agent's choice) stall every other tenant there.
            Ok(_) => self.breaker.record(&origin, true),
            Err(OutboundError::Failed(_)) => self.breaker.record(&origin, false),
            // The guard's refusals say nothing of the host's health.
            Err(_) => {}
        }
        answered
    }

    async fn send(
        &self,
        url: &Url,
        content_type: &str,
        headers: &[(&str, String)],
        body: Vec<u8>,
    ) -> Result<Answered, OutboundError> {
        let mut request = self
            .client
            .post(url.clone())
            .header("content-type", content_type)
            .body(body);
        for (name, value) in headers {
            request = request.header(*name, value);
        }
        let mut response = request.send().await.map_err(|e| {
            match std::error::Error::source(&e).and_then(find_refusal) {
                Some(refused) => OutboundError::Refused(refused),
                // Without the URL: a push endpoint is a capability, and errors reach the logs.
                None => OutboundError::Failed(e.without_url().to_string()),
            }
        })?;
        let status = response.status().as_u16();
        let mut read = 0usize;
        while let Ok(Some(chunk)) = response.chunk().await {
            read += chunk.len();
            if read > self.checker.policy.max_response_bytes {
                break;
            }
        }
        Ok(Answered { status })
    }
}

/// A refusal of the guard's resolver, somewhere in an error's sources.
fn find_refusal(error: &(dyn std::error::Error + 'static)) -> Option<Refused> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(refused) = e.downcast_ref::<Refused>() {
            return Some(refused.clone());
        }
        current = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{Clock, ManualClock};

    /// Five failures in a row open a host for the cool-down (by the injected clock), other
    /// hosts unaffected; after it one more failure reopens it, and a success closes it.
    #[test]
    fn the_breaker_skips_a_failing_host_for_its_cool_down() {
        let clock = ManualClock::at(1_000);
        let breaker = Breaker::new(
            BreakerPolicy {
                failures: 5,
                cooldown_secs: 120,
            },
            clock.clone(),
        );
        for _ in 0..4 {
            breaker.record("silent.example", false);
            assert_eq!(breaker.admit("silent.example"), Ok(()));
        }
        // A success in between starts the count over.
        breaker.record("silent.example", true);
        for _ in 0..4 {
            breaker.record("silent.example", false);
        }
        assert_eq!(breaker.admit("silent.example"), Ok(()));
        breaker.record("silent.example", false);
        assert_eq!(breaker.admit("silent.example"), Err(1_120));
        assert_eq!(breaker.admit("fcm.googleapis.com"), Ok(()));
        clock.advance(119);
        assert_eq!(breaker.admit("silent.example"), Err(1_120));
        clock.advance(1);
        assert_eq!(breaker.admit("silent.example"), Ok(()), "half open");
        breaker.record("silent.example", false);
        assert_eq!(
            breaker.admit("silent.example"),
            Err(clock.now() + 120),
            "one more failure reopens it"
        );
        clock.advance(120);
        breaker.record("silent.example", true);
        breaker.record("silent.example", false);
        assert_eq!(breaker.admit("silent.example"), Ok(()), "closed again");
    }

    #[test]
    fn non_public_ranges_are_refused_in_both_families() {
        for refused in [
            "0.0.0.0",
            "10.1.2.3",
            "100.64.0.1",
            "100.127.255.254",
            "127.0.0.1",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.8",
            "192.0.2.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::a00:1",
            "2002:c0a8:101::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "100::1",
            "2001::1",
            "2001:db8::1",
            "64:ff9b:1::a00:1",
            "64:ff9b:1::808:808",
            "::ffff:0:a00:1",
            "::ffff:0:7f00:1",
        ] {
            let ip: IpAddr = refused.parse().unwrap();
            assert!(!is_public(ip), "{refused} passed");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for public in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "100.128.0.1",
            "172.32.0.1",
            "192.0.1.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "::ffff:0:808:808",
        ] {
            let ip: IpAddr = public.parse().unwrap();
            assert!(is_public(ip), "{public} refused");
        }
    }
}
