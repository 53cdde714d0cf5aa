//! Window quotas of single routes (spec 8): agent registrations per IP, the agent feed per key,
//! AI polishes and drafts per wallet per day, and the per-IP daily caps of the routes that spend
//! money. A request past its quota is refused with spec 7's 429 and the code the route uses
//! (`rate_limit_exceeded`, `daily_limit_reached`).
//!
//! Plain rate limits ([`charge`], [`rate`]) fail open: when the shared counters (Redis) cannot
//! be reached the request goes through. Cost quotas ([`charge_cost`], [`charge_cost_per_ip`])
//! fail closed: the request is refused with 503 `rate_limiter_unavailable`, since a call past an
//! uncounted cap is money spent on an outside provider or the ledger.

use std::net::IpAddr;

use crate::error::ApiError;
use crate::limits::client::Subject;
use crate::limits::Policy;
use crate::state::AppState;
use crate::values::Wallet;

/// Counts one hit of `subject` against `policy`; past it, 429 `code` with `resets_at` and
/// `retry-after`. Fails open.
pub async fn charge(
    state: &AppState,
    policy: &Policy,
    subject: &str,
    code: &str,
    message: impl Into<String>,
) -> Result<(), ApiError> {
    counted(state, policy, subject, code, message, Uncounted::Allow).await
}

/// [`charge`] for a quota that caps spending: refused with 503 `rate_limiter_unavailable`
/// when the hit could not be counted.
pub async fn charge_cost(
    state: &AppState,
    policy: &Policy,
    subject: &str,
    code: &str,
    message: impl Into<String>,
) -> Result<(), ApiError> {
    counted(state, policy, subject, code, message, Uncounted::Refuse).await
}

/// What a hit the limiter could not count gets.
enum Uncounted {
    Allow,
    Refuse,
}

async fn counted(
    state: &AppState,
    policy: &Policy,
    subject: &str,
    code: &str,
    message: impl Into<String>,
    uncounted: Uncounted,
) -> Result<(), ApiError> {
    let now = state.now();
    let decision = state.limiter.hit(policy, subject, now).await;
    if decision.limiter_down && matches!(uncounted, Uncounted::Refuse) {
        return Err(ApiError::unavailable(
            "rate_limiter_unavailable",
            "the limits of this route cannot be counted right now; retry shortly",
        ));
    }
    if decision.allowed {
        return Ok(());
    }
    Err(ApiError::window_exhausted(
        code,
        message,
        now,
        decision.retry_after_secs,
    ))
}

/// One call of a cost route from `ip` (its /64 for IPv6) against the route's per-IP daily
/// `policy`: 429 `daily_limit_reached` past it. A request without a known address is not
/// counted per IP (it still counts per wallet).
pub async fn charge_cost_per_ip(
    state: &AppState,
    policy: &Policy,
    ip: Option<IpAddr>,
    what: &str,
) -> Result<(), ApiError> {
    let Some(ip) = ip else {
        return Ok(());
    };
    let message = format!("{} {what} per IP per day", policy.limit);
    charge_cost(
        state,
        policy,
        Subject::of(ip).as_str(),
        "daily_limit_reached",
        message,
    )
    .await
}

/// What a per-wallet pool is counted under when the wallet is named in the body, not proven:
/// the wallet as named from the caller's address. Keyed on the name alone, the pool was anyone's
/// to spend (three requests naming a wallet used up its polishes for the day); per address,
/// each caller spends its own, and the per-IP cap bounds what one address spends over all the
/// wallets it names.
pub fn named_wallet(wallet: &Wallet, ip: Option<IpAddr>) -> String {
    match ip {
        Some(ip) => format!("{wallet}@{}", Subject::of(ip).as_str()),
        None => wallet.to_string(),
    }
}

/// [`charge`] refusing with `rate_limit_exceeded` and the policy's numbers.
pub async fn rate(state: &AppState, policy: &Policy, subject: &str) -> Result<(), ApiError> {
    let message = format!("at most {} per {} s", policy.limit, policy.window_secs);
    charge(state, policy, subject, "rate_limit_exceeded", message).await
}
