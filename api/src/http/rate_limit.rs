//! The limiter in front of every route (spec 8): a request with `x-api-key` counts against its
//! key's tier (60 / 300 / 1000 per minute) and a bad key is refused outright; a request without
//! one counts against its IP. Each refusal has the spec's exact 429 body and a `retry-after`.

use std::sync::Arc;

use poem::{Endpoint, IntoResponse, Request, Response};

use crate::domain::keys;
use crate::error::ApiError;
use crate::http::client_ip::client_ip;
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
    if let Some(key) = req.header("x-api-key").map(str::to_owned) {
        let Some(caller) = keys::verify(state.store.db(), &key).await? else {
            return Ok(ApiError::invalid_api_key().into_response());
        };
        let limit = caller.tier.limit_per_minute();
        let policy = Policy {
            name: "key",
            limit,
            window_secs: 60,
        };
        let decision = state.limiter.hit(&policy, &caller.key_id, now).await;
        if !decision.allowed {
            return Ok(ApiError::tier_limited(
                caller.tier.as_str(),
                limit,
                decision.retry_after_secs,
            )
            .into_response());
        }
        req.extensions_mut().insert(caller);
    } else {
        let ip = client_ip(&req).map_or_else(|| "unknown".to_owned(), |ip| ip.to_string());
        let decision = state.limiter.hit(&state.anon_policy, &ip, now).await;
        if !decision.allowed {
            return Ok(ApiError::too_many_requests(decision.retry_after_secs).into_response());
        }
    }
    ep.call(req).await.map(IntoResponse::into_response)
}
