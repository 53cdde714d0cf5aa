//! Polishing a thesis or a voice transcript (spec 4.1): one pool of 3 per wallet per UTC day
//! for both (the wallet as named from the caller's address: [`quota::named_wallet`]), and a
//! per-IP daily cap beside it (`POLISH_PER_IP_DAILY`), counted before the
//! provider is asked (failing closed when they cannot be counted), then the provider's answer in
//! the input's language.

use std::net::IpAddr;

use crate::domain::quota;
use crate::error::ApiError;
use crate::limits::AI_POLISH;
use crate::state::AppState;
use crate::values::Wallet;

pub async fn polish(
    state: &AppState,
    ip: Option<IpAddr>,
    wallet: &Wallet,
    text: &str,
) -> Result<String, ApiError> {
    quota::charge_cost_per_ip(state, &state.cost_caps.polish, ip, "polishes").await?;
    quota::charge_cost(
        state,
        &AI_POLISH,
        &quota::named_wallet(wallet, ip),
        "daily_limit_reached",
        "3 polishes per wallet per day (text and voice together)",
    )
    .await?;
    state.polisher.polish(text).await.map_err(|error| {
        tracing::warn!(error = %format!("{error:#}"), "polisher unavailable");
        ApiError::unavailable(
            "polish_unavailable",
            "the polishing provider could not be reached; retry shortly",
        )
    })
}
