//! Who is calling: the TCP peer's address, unless the peer is a trusted proxy
//! (`TRUSTED_PROXIES`, none by default), whose `Forwarded` (or, without it, `X-Forwarded-For`)
//! header is then believed as `limits::client` reads it. Any client can set those headers, so
//! they mean nothing from anyone else. The limiter works the address out once per request and
//! leaves it in the request's extensions for the handlers.

use std::net::IpAddr;
use std::sync::Arc;

use poem::Request;

use crate::limits::client::{forwarded_element, forwarded_for_entry, TrustedProxies};
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

/// The caller of `req` behind `proxies`.
pub fn resolve(req: &Request, proxies: &TrustedProxies) -> Option<IpAddr> {
    let peer = peer(req)?;
    if !proxies.trusts(peer) {
        return Some(peer.to_canonical());
    }
    let headers = req.headers();
    let forwarded: Vec<&str> = headers
        .get_all("forwarded")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .collect();
    let hops: Vec<Option<IpAddr>> = if forwarded.is_empty() {
        headers
            .get_all("x-forwarded-for")
            .iter()
            .flat_map(|value| value.to_str().unwrap_or("?").split(','))
            .map(forwarded_for_entry)
            .collect()
    } else {
        forwarded
            .iter()
            .flat_map(|value| value.split(','))
            .map(forwarded_element)
            .collect()
    };
    Some(proxies.client(peer, hops.into_iter()))
}
