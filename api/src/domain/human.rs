//! The human-verification gate every human-gated write passes (spec 4.13 `TURNSTILE_FAILED`).

use std::net::IpAddr;

use poem::http::StatusCode;

use crate::error::ApiError;
use crate::providers::human::{HumanVerifier, Verdict};

fn turnstile_failed() -> ApiError {
    ApiError::coded(
        StatusCode::BAD_REQUEST,
        "TURNSTILE_FAILED",
        "missing or invalid human-verification token",
    )
}

/// 400 `TURNSTILE_FAILED` when `token` is missing or refused, 503
/// `human_verification_unavailable` when the provider cannot be asked.
pub async fn require_human(
    verifier: &dyn HumanVerifier,
    token: Option<&str>,
    remote_ip: Option<IpAddr>,
) -> Result<(), ApiError> {
    let token = token.map(str::trim).unwrap_or_default();
    if token.is_empty() {
        return Err(turnstile_failed());
    }
    match verifier.verify(token, remote_ip).await {
        Ok(Verdict::Human) => Ok(()),
        Ok(Verdict::Refused(codes)) => Err(turnstile_failed().with("provider_codes", codes)),
        Err(error) => {
            tracing::warn!(error = %format!("{error:#}"), "human verification unavailable");
            Err(ApiError::unavailable(
                "human_verification_unavailable",
                "the human-verification provider could not be reached; retry shortly",
            ))
        }
    }
}
