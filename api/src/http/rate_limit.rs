//! The limiter in front of every route (spec 8): a request with a live `x-api-key` counts against
//! its key's tier (60 / 300 / 1000 per minute) and a bad key is refused; a request without one
//! counts against its IP (its /64 for IPv6; `limits::client`). Each refusal has the spec's exact
//! 429 body and a `retry-after`.
//!
//! The IP is charged before a key is looked up: a key not seen live in the last minute is
//! anonymous traffic until the store says otherwise, so a flood of made-up keys from one address
//! costs at most its anonymous limit in lookups, and a key the store did not know is refused
//! again without asking it (`limits::KeyMemory`). Keys found live skip that charge, so a paid
//! tier is not held to the anonymous rate. A key its caller registered (an agent's) also counts
//! against its IP's budget for such keys (`AGENT_KEYS_PER_IP_PER_MIN`), so registering keys
//! does not multiply an address's rate; an operator's keys count only against their tier.
//! The path is allocation-light: the subject is written
//! on the stack, and a counter already seen is found by reference.

use std::sync::Arc;

use poem::{Endpoint, IntoResponse, Request, Response};

use crate::domain::keys;
use crate::error::ApiError;
use crate::http::client_ip::{self, ClientIp};
use crate::limits::client::Subject;
use crate::limits::Policy;
use crate::state::AppState;

/// Probes are never limited: orchestrators poll them.
fn exempt(path: &str) -> bool {
    path == "/health" || path == "/metrics"
}

pub async fn limit_requests<E: Endpoint>(
    state: Arc<AppState>,
    ep: E,
    mut req: Request,
) -> poem::Result<Response> {
    if exempt(req.uri().path()) {
        return ep.call(req).await.map(IntoResponse::into_response);
    }
    let now = state.clock.now();
    let ip = client_ip::resolve(&req, &state.trusted_proxies);
    let subject = ip.map(Subject::of);
    let subject = subject.as_ref().map_or("unknown", Subject::as_str);
    if let Some(ip) = ip {
        req.extensions_mut().insert(ClientIp(ip));
    }
    // The key's digest when it has the spec's shape; `Some(None)` for one that has not.
    let presented = req
        .header("x-api-key")
        .map(|key| keys::well_formed(key.trim()).then(|| keys::digest(key)));
    let Some(digest) = presented else {
        let decision = state.limiter.hit(&state.anon_policy, subject, now).await;
        if !decision.allowed {
            return Ok(ApiError::too_many_requests(decision.retry_after_secs).into_response());
        }
        return ep.call(req).await.map(IntoResponse::into_response);
    };
    let known = digest.is_some_and(|d| state.key_memory.is_known(&d, now));
    if !known {
        let decision = state.limiter.hit(&state.anon_policy, subject, now).await;
        if !decision.allowed {
            return Ok(ApiError::too_many_requests(decision.retry_after_secs).into_response());
        }
    }
    let Some(digest) = digest.filter(|d| !state.key_memory.is_unknown(d, now)) else {
        return Ok(ApiError::invalid_api_key().into_response());
    };
    state.key_memory.looked_up();
    let Some(caller) = keys::verify_digest(state.store.db(), &digest).await? else {
        state.key_memory.remember_unknown(digest, now);
        return Ok(ApiError::invalid_api_key().into_response());
    };
    // Every live lookup renews the memory: a key in use is never charged to its IP's
    // anonymous limit (renewing only unknown ones let an active key lapse every minute, and
    // its next request was refused if its address had spent that limit).
    state.key_memory.remember_known(digest, now);
    let limit = caller.tier.limit_per_minute();
    let policy = Policy {
        name: "key",
        limit,
        window_secs: 60,
    };
    let decision = state.limiter.hit(&policy, &caller.key_id, now).await;
    if !decision.allowed {
        return Ok(
            ApiError::tier_limited(caller.tier.as_str(), limit, decision.retry_after_secs)
                .into_response(),
        );
    }
    // Anyone may register agents, five an hour from one address, each with a key of its own
    // rate: together those keys get the address's budget for them, not one rate per key.
    if caller.self_registered {
        let decision = state
            .limiter
            .hit(&state.agent_keys_policy, subject, now)
            .await;
        if !decision.allowed {
            return Ok(ApiError::too_many_requests(decision.retry_after_secs).into_response());
        }
    }
    req.extensions_mut().insert(caller);
    ep.call(req).await.map(IntoResponse::into_response)
}
