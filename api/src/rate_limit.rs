//! The limiter in front of every route (spec 8): a request with `x-api-key` counts against its
//! key's tier (60 / 300 / 1000 per minute) and a bad key is refused outright; a request without
//! one counts against its IP. Each refusal has the spec's exact 429 body and a `retry-after`.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::{Endpoint, IntoResponse, Request, Response};
use serde_json::json;

use crate::client::client_ip;
use crate::error::ApiError;
use crate::keys::{self, tier_limit, Caller};
use crate::limits::{Decision, Policy};
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
    if let Some(key) = req.header("x-api-key").map(str::to_owned) {
        let Some(caller) = keys::verify(state.store.db(), &key).await? else {
            return Ok(ApiError::invalid_api_key().into_poem_response());
        };
        let limit = tier_limit(&caller.tier).unwrap_or(0);
        let policy = Policy {
            name: "key",
            limit,
            window_secs: 60,
        };
        let decision = state.limiter.hit(&policy, &caller.key_id).await;
        if !decision.allowed {
            return Ok(tier_refusal(&caller, limit, &decision));
        }
        req.extensions_mut().insert(caller);
    } else {
        let ip = client_ip(&req).unwrap_or_else(|| "unknown".to_owned());
        let decision = state.limiter.hit(&state.anon_policy, &ip).await;
        if !decision.allowed {
            return Ok(global_refusal(&decision));
        }
    }
    ep.call(req).await.map(IntoResponse::into_response)
}

/// Spec 8: `{error:'Rate limit exceeded', tier, limit, retry_after}`.
pub fn tier_refusal(caller: &Caller, limit: u32, decision: &Decision) -> Response {
    too_many(
        json!({
            "error": "Rate limit exceeded",
            "tier": caller.tier,
            "limit": limit,
            "retry_after": decision.retry_after_secs.to_string(),
        }),
        decision,
    )
}

/// Spec 7: the global limiter's `{statusCode:429, error:'Too Many Requests', message, retryAfter}`.
pub fn global_refusal(decision: &Decision) -> Response {
    too_many(
        json!({
            "statusCode": 429,
            "error": "Too Many Requests",
            "message": format!("Rate limit exceeded, retry in {} seconds", decision.retry_after_secs),
            "retryAfter": decision.retry_after_secs,
        }),
        decision,
    )
}

fn too_many(body: serde_json::Value, decision: &Decision) -> Response {
    let mut response = (StatusCode::TOO_MANY_REQUESTS, poem::web::Json(body)).into_response();
    response.headers_mut().insert(
        "retry-after",
        decision
            .retry_after_secs
            .to_string()
            .parse()
            .expect("digits"),
    );
    response
}
