//! The shield gate. Every attempt at `POST /v1/shield/terms-ack`, accepted or not, malformed
//! ones included, is recorded with the caller's address (an IPv6 caller's /64), the wallet it named (as given) and its
//! outcome (`acknowledged`, or the `error` it got); an address whose attempts keep being refused
//! is blocked (`crate::domain::shield::gate`), and a blocked address gets 403 `ip_blocked` from
//! every wallet-facing shield write until an operator lifts the block. It sits inside the rate
//! limiter and the body limit, so a flood it does not let through writes no rows and a body it
//! reads is at most 1 MiB; a request those refused never reached the gate.

use std::sync::Arc;

use poem::http::Method;
use poem::{Body, Endpoint, IntoResponse, Request, Response};
use serde_json::Value;

use crate::domain::shield::gate;
use crate::domain::shield::probe_log::{self, Knock};
use crate::http::client_ip::client_ip;
use crate::http::contract::Contract;
use crate::http::errors::render_error;
use crate::http::MAX_BODY_BYTES;
use crate::state::AppState;

pub const TERMS_ACK: &str = "/v1/shield/terms-ack";

/// The shield's wallet-facing writes, which a blocked address cannot reach. A backing's confirm
/// stays open (its money moved already, and the record must follow), as do the operators'
/// routes.
const GATED: [&str; 3] = [TERMS_ACK, "/v1/shield/back", "/v1/shield/partner-apply"];

/// Wallets are at most 44 characters; a little more is kept of whatever was sent.
const WALLET_CHARS: usize = 64;

pub async fn shield_gate<E: Endpoint>(
    state: Arc<AppState>,
    contract: Arc<Contract>,
    ep: E,
    mut req: Request,
) -> poem::Result<Response> {
    if req.method() != Method::POST || !GATED.contains(&req.uri().path()) {
        return ep.call(req).await.map(IntoResponse::into_response);
    }
    let address = client_ip(&req);
    let blocked = match address {
        Some(address) => gate::is_blocked(&state, address).await?,
        None => false,
    };
    if req.uri().path() != TERMS_ACK {
        return if blocked {
            Ok(gate::ip_blocked().into_response())
        } else {
            ep.call(req).await.map(IntoResponse::into_response)
        };
    }
    let ip = address.map(gate::caller);
    let body = req.take_body().into_bytes_limit(MAX_BODY_BYTES).await?;
    let wallet = serde_json::from_slice::<Value>(&body).ok().and_then(|v| {
        v.get("wallet")?
            .as_str()
            .map(|w| w.chars().take(WALLET_CHARS).collect())
    });
    req.set_body(body.clone());
    if blocked {
        let knock = Knock {
            ip,
            route: TERMS_ACK.to_owned(),
            wallet,
            outcome: gate::BLOCKED.to_owned(),
            // Turned away before it was read: not a refusal of what it sent.
            refused: false,
        };
        probe_log::record(&state, knock).await;
        return Ok(gate::ip_blocked().into_response());
    }
    // Errors are rendered here, as the client will see them, to log their code.
    let response = match ep.call(req).await {
        Ok(response) => response.into_response(),
        Err(err) => render_error(err, &Method::POST, TERMS_ACK, &contract, Some(&body)),
    };
    let (parts, answer) = response.into_parts();
    let answer = answer.into_bytes().await?;
    let outcome = if parts.status.is_success() {
        gate::ACCEPTED.to_owned()
    } else {
        serde_json::from_slice::<Value>(&answer)
            .ok()
            .and_then(|v| v.get("error")?.as_str().map(str::to_owned))
            .unwrap_or_else(|| parts.status.to_string())
    };
    // Only what the caller sent counts against it: the service's own failures (503 while
    // shield is halted, a 500) would otherwise block honest callers retrying them.
    let refused = parts.status.is_client_error();
    probe_log::record(
        &state,
        Knock {
            ip: ip.clone(),
            route: TERMS_ACK.to_owned(),
            wallet,
            outcome,
            refused,
        },
    )
    .await;
    if let (true, Some(ip)) = (refused, ip) {
        // Like the log line, the count must not fail the request it follows.
        if let Err(error) = gate::count_refusal(&state, &ip).await {
            tracing::warn!(ip, error = ?error.code(), "shield gate: refusal not counted");
        }
    }
    Ok(Response::from_parts(parts, Body::from(answer)))
}
