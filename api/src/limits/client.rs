//! Who is calling, for limits: the socket peer, unless the peer is one of the configured trusted
//! proxies (`TRUSTED_PROXIES`, CIDRs, none by default), whose forwarding headers are then
//! believed: the right-most address of the chain that is not itself a trusted proxy. And the
//! subject a caller's limits are counted under: its IPv4 address, or its IPv6 /64 (one
//! subscriber's allocation, so rotating through it buys nothing).

use std::io::Write;
use std::net::{IpAddr, Ipv6Addr};
use std::str::FromStr;

/// An IP network, `address/prefix` (a bare address is a network of one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    address: IpAddr,
    prefix: u8,
}

impl FromStr for Network {
    type Err = String;

    fn from_str(text: &str) -> Result<Network, String> {
        let text = text.trim();
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let address: IpAddr = address
            .parse()
            .map_err(|_| format!("`{text}` is not an IP network (a.b.c.d/n or x:y::/n)"))?;
        let address = address.to_canonical();
        let max = if address.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("`{text}`: the prefix must be 0 to {max}"))?,
        };
        Ok(Network { address, prefix })
    }
}

impl Network {
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.address, ip.to_canonical()) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

/// The forwarding header trusted proxies write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ForwardingHeader {
    #[default]
    XForwardedFor,
    /// RFC 7239's `Forwarded`.
    Forwarded,
}

impl ForwardingHeader {
    pub fn name(self) -> &'static str {
        match self {
            ForwardingHeader::XForwardedFor => "x-forwarded-for",
            ForwardingHeader::Forwarded => "forwarded",
        }
    }

    /// One comma-separated entry of the header as an address, if it is one.
    pub fn entry(self, entry: &str) -> Option<IpAddr> {
        match self {
            ForwardingHeader::XForwardedFor => forwarded_for_entry(entry),
            ForwardingHeader::Forwarded => forwarded_element(entry),
        }
    }
}

/// The proxies whose forwarding header is believed, and which header that is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    networks: Vec<Network>,
    pub header: ForwardingHeader,
}

impl TrustedProxies {
    /// From `TRUSTED_PROXIES` entries (blank ones ignored) and `TRUSTED_PROXY_HEADER`.
    pub fn parse<S: AsRef<str>>(entries: &[S], header: &str) -> Result<TrustedProxies, String> {
        let header = match header {
            "x-forwarded-for" => ForwardingHeader::XForwardedFor,
            "forwarded" => ForwardingHeader::Forwarded,
            other => {
                return Err(format!(
                    "TRUSTED_PROXY_HEADER: {other} is not x-forwarded-for or forwarded"
                ))
            }
        };
        let networks = entries
            .iter()
            .map(AsRef::as_ref)
            .filter(|entry| !entry.trim().is_empty())
            .map(str::parse)
            .collect::<Result<_, String>>()
            .map_err(|e| format!("TRUSTED_PROXIES: {e}"))?;
        Ok(TrustedProxies { networks, header })
    }

    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.networks.iter().any(|network| network.contains(ip))
    }

    /// The caller behind `peer`: `peer` itself unless it is trusted; then, walking the
    /// forwarding chain `hops` (left to right as the headers list them, `None` for an entry
    /// that is not an address) from the right, the first address that is not a trusted proxy.
    /// A chain of trusted proxies only gives its left-most; an entry that is not an address
    /// stops the walk at the proxy that wrote it.
    pub fn client(
        &self,
        peer: IpAddr,
        hops: impl DoubleEndedIterator<Item = Option<IpAddr>>,
    ) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        let mut client = peer;
        for hop in hops.rev() {
            let Some(hop) = hop.map(|ip| ip.to_canonical()) else {
                return client;
            };
            client = hop;
            if !self.trusts(hop) {
                return hop;
            }
        }
        client
    }
}

/// One `X-Forwarded-For` entry: an address (IPv6 possibly in brackets, IPv4 possibly with a
/// port).
pub fn forwarded_for_entry(entry: &str) -> Option<IpAddr> {
    node(entry.trim())
}

/// The `for=` node of one element of a `Forwarded` header (RFC 7239): `None` when the element
/// has none or it is not an address (`unknown`, an obfuscated `_name`).
pub fn forwarded_element(element: &str) -> Option<IpAddr> {
    let value = element.split(';').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        name.trim().eq_ignore_ascii_case("for").then_some(value)
    })?;
    node(value.trim().trim_matches('"'))
}

/// `1.2.3.4`, `1.2.3.4:80`, `2001:db8::1`, `[2001:db8::1]`, `[2001:db8::1]:80`.
fn node(text: &str) -> Option<IpAddr> {
    if let Some(rest) = text.strip_prefix('[') {
        return rest.split_once(']')?.0.parse().ok();
    }
    if let Ok(ip) = text.parse() {
        return Some(ip);
    }
    let (address, port) = text.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    address.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

/// The address limits count `ip` under: itself for IPv4, its /64 for IPv6.
pub fn limit_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !u128::from(u64::MAX))),
    }
}

/// A limiter subject for an address, written without allocating: `1.2.3.4`, or
/// `2001:db8:1:2::/64`.
pub struct Subject {
    buf: [u8; 56],
    len: usize,
}

impl Subject {
    pub fn of(ip: IpAddr) -> Subject {
        let mut buf = [0u8; 56];
        let mut cursor = &mut buf[..];
        let written = match limit_key(ip) {
            IpAddr::V4(v4) => write!(cursor, "{v4}"),
            IpAddr::V6(v6) => write!(cursor, "{v6}/64"),
        };
        debug_assert!(written.is_ok(), "an address fits in 56 bytes");
        let len = 56 - cursor.len();
        Subject { buf, len }
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("unknown")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn ipv6_callers_share_a_bucket_per_64_and_ipv4_ones_do_not() {
        let a = Subject::of(ip("2001:db8:1:2:aaaa::1"));
        let b = Subject::of(ip("2001:db8:1:2:ffff:ffff:ffff:ffff"));
        let other = Subject::of(ip("2001:db8:1:3::1"));
        assert_eq!(a.as_str(), "2001:db8:1:2::/64");
        assert_eq!(a.as_str(), b.as_str());
        assert_ne!(a.as_str(), other.as_str());
        assert_eq!(Subject::of(ip("10.0.0.1")).as_str(), "10.0.0.1");
        assert_ne!(
            Subject::of(ip("10.0.0.1")).as_str(),
            Subject::of(ip("10.0.0.2")).as_str()
        );
        // An IPv4 caller seen over IPv6 is the IPv4 caller.
        assert_eq!(Subject::of(ip("::ffff:10.0.0.1")).as_str(), "10.0.0.1");
        let widest = Subject::of(ip("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"));
        assert_eq!(widest.as_str(), "ffff:ffff:ffff:ffff::/64");
    }

    #[test]
    fn networks_parse_and_contain() {
        let loopback: Network = "127.0.0.1/8".parse().unwrap();
        assert!(loopback.contains(ip("127.9.9.9")));
        assert!(loopback.contains(ip("::ffff:127.0.0.2")));
        assert!(!loopback.contains(ip("128.0.0.1")));
        let v6: Network = "2001:db8::/32".parse().unwrap();
        assert!(v6.contains(ip("2001:db8:ffff::1")));
        assert!(!v6.contains(ip("2001:db9::1")));
        assert!(!v6.contains(ip("10.0.0.1")));
        let one: Network = "10.1.2.3".parse().unwrap();
        assert!(one.contains(ip("10.1.2.3")) && !one.contains(ip("10.1.2.4")));
        let all: Network = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(ip("8.8.8.8")));
        for bad in ["10.0.0.0/33", "nope", "10.0.0.0/x", "::/129"] {
            assert!(bad.parse::<Network>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_right_most_untrusted_hop_is_the_client() {
        let none = TrustedProxies::default();
        let proxies = TrustedProxies::parse(&["10.0.0.0/8", " "], "x-forwarded-for").unwrap();
        let chain = |entries: &[&str]| -> Vec<Option<IpAddr>> {
            entries.iter().map(|e| forwarded_for_entry(e)).collect()
        };
        let spoofed = chain(&["6.6.6.6", "7.7.7.7"]);
        // Nothing trusted: the headers mean nothing.
        assert_eq!(
            none.client(ip("9.9.9.9"), spoofed.clone().into_iter()),
            ip("9.9.9.9")
        );
        // An untrusted peer's headers mean nothing either.
        assert_eq!(
            proxies.client(ip("9.9.9.9"), spoofed.clone().into_iter()),
            ip("9.9.9.9")
        );
        // Behind a trusted proxy: the right-most address it did not add itself. A client
        // prepending a fake address does not move it.
        assert_eq!(
            proxies.client(ip("10.0.0.1"), spoofed.into_iter()),
            ip("7.7.7.7")
        );
        let through_two = chain(&["6.6.6.6", "5.5.5.5", "10.0.0.7"]);
        assert_eq!(
            proxies.client(ip("10.0.0.1"), through_two.into_iter()),
            ip("5.5.5.5")
        );
        let all_trusted = chain(&["10.0.0.9", "10.0.0.7"]);
        assert_eq!(
            proxies.client(ip("10.0.0.1"), all_trusted.into_iter()),
            ip("10.0.0.9")
        );
        let garbage = chain(&["5.5.5.5", "not-an-ip", "10.0.0.7"]);
        assert_eq!(
            proxies.client(ip("10.0.0.1"), garbage.into_iter()),
            ip("10.0.0.7")
        );
        assert_eq!(
            proxies.client(ip("10.0.0.1"), std::iter::empty()),
            ip("10.0.0.1")
        );
    }

    #[test]
    fn forwarding_entries_parse_with_ports_and_brackets() {
        assert_eq!(forwarded_for_entry(" 1.2.3.4 "), Some(ip("1.2.3.4")));
        assert_eq!(forwarded_for_entry("1.2.3.4:8080"), Some(ip("1.2.3.4")));
        assert_eq!(forwarded_for_entry("2001:db8::1"), Some(ip("2001:db8::1")));
        assert_eq!(
            forwarded_for_entry("[2001:db8::1]:80"),
            Some(ip("2001:db8::1"))
        );
        assert_eq!(forwarded_for_entry("unknown"), None);
        assert_eq!(
            forwarded_element("for=192.0.2.60;proto=http;by=203.0.113.43"),
            Some(ip("192.0.2.60"))
        );
        assert_eq!(
            forwarded_element(" For=\"[2001:db8:cafe::17]:4711\""),
            Some(ip("2001:db8:cafe::17"))
        );
        assert_eq!(forwarded_element("for=unknown"), None);
        assert_eq!(forwarded_element("for=_hidden"), None);
        assert_eq!(forwarded_element("proto=https"), None);
    }
}
