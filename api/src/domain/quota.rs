//! Window quotas of single routes (spec 8): agent registrations per IP, the agent feed per key,
//! AI polishes and drafts per wallet per day. A request past its quota is refused with spec 7's
//! 429 and the code the route uses (`rate_limit_exceeded`, `daily_limit_reached`).

use crate::error::ApiError;
use crate::limits::Policy;
use crate::state::AppState;

/// Counts one hit of `subject` against `policy`; past it, 429 `code` with `resets_at` and
/// `retry-after`.
pub async fn charge(
    state: &AppState,
    policy: &Policy,
    subject: &str,
    code: &str,
    message: impl Into<String>,
) -> Result<(), ApiError> {
    let now = state.now();
    let decision = state.limiter.hit(policy, subject, now).await;
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

/// [`charge`] refusing with `rate_limit_exceeded` and the policy's numbers.
pub async fn rate(state: &AppState, policy: &Policy, subject: &str) -> Result<(), ApiError> {
    let message = format!("at most {} per {} s", policy.limit, policy.window_secs);
    charge(state, policy, subject, "rate_limit_exceeded", message).await
}
