//! Who is calling: the TCP peer's address, unless the peer is a trusted proxy
//! (`TRUSTED_PROXIES`, none by default), whose one forwarding header (`TRUSTED_PROXY_HEADER`:
//! `X-Forwarded-For` or `Forwarded`) is then believed as `limits::client` reads it. Any client
//! can set those headers, so they mean nothing from anyone else, and the header the proxies do
//! not write means nothing at all. The limiter works the address out once per request and
//! leaves it in the request's extensions for the handlers.

use std::net::IpAddr;
use std::sync::Arc;

use poem::Request;

use crate::limits::client::TrustedProxies;
use crate::state::AppState;

/// The caller's address as worked out for this request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub IpAddr);

pub fn client_ip(req: &Request) -> Option<IpAddr> {
    if let Some(ClientIp(ip)) = req.extensions().get::<ClientIp>() {
        return Some(*ip);
    }
    match req.data::<Arc<AppState>>() {
        Some(state) => resolve(req, &state.trusted_proxies),
        None => peer(req),
    }
}

fn peer(req: &Request) -> Option<IpAddr> {
    req.remote_addr().as_socket_addr().map(|addr| addr.ip())
}

/// The caller of `req` behind `proxies`: the hops of the one header they write, each entry
/// parsed on its own (an entry that is not an address, or not text, stops the walk there,
/// rather than making the whole header one unknown caller).
pub fn resolve(req: &Request, proxies: &TrustedProxies) -> Option<IpAddr> {
    let peer = peer(req)?;
    if !proxies.trusts(peer) {
        return Some(peer.to_canonical());
    }
    let header = proxies.header;
    let hops: Vec<Option<IpAddr>> = req
        .headers()
        .get_all(header.name())
        .iter()
        .flat_map(|value| value.as_bytes().split(|byte| *byte == b','))
        .map(|entry| {
            std::str::from_utf8(entry)
                .ok()
                .and_then(|entry| header.entry(entry))
        })
        .collect();
    Some(proxies.client(peer, hops.into_iter()))
}
