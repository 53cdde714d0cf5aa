//! p0, the unified-margin integration (spec 4.5; marginfi v2, `chain::venues::p0`): deposits
//! into the wallet's margin account and withdrawals from it through the one prepare → confirm
//! runner, and reads of its balances and health from the ledger.
//!
//! Gates (docs/decisions.md, "p0"): every route answers 503 `p0_disabled` unless `P0_ENABLED`;
//! a deposit, the account summary and the strategies read for a wallet need the `core` tier
//! (403 `conviction_score_required`). Withdrawing the wallet's own balance needs no tier: a tier
//! that fell must not lock principal in.

use std::sync::Arc;

use poem::http::StatusCode;

use crate::chain::venues::p0::P0;
use crate::domain::profiles::conviction::Tier;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::Wallet;

pub mod deposit;
pub mod reads;
pub mod withdraw;

/// The tier p0 needs (spec 4.5: `core`, 600+).
pub const P0_TIER: Tier = Tier::Core;

/// The integration, or 503 `p0_disabled`.
pub fn integration(state: &AppState) -> Result<Arc<P0>, ApiError> {
    state.p0.clone().ok_or_else(|| {
        ApiError::coded(
            StatusCode::SERVICE_UNAVAILABLE,
            "p0_disabled",
            "the p0 unified-margin integration is not enabled on this deployment",
        )
    })
}

/// The wallet's tier when it is `core` or above; 403 `conviction_score_required` otherwise,
/// saying the tier needed and the wallet's.
pub async fn ensure_core(state: &AppState, wallet: &Wallet) -> Result<Tier, ApiError> {
    let tier = crate::domain::borrow::capacity::tier(state, wallet).await?;
    if tier >= P0_TIER {
        return Ok(tier);
    }
    Err(ApiError::coded(
        StatusCode::FORBIDDEN,
        "conviction_score_required",
        format!(
            "p0 needs the {} tier (conviction score {}+); the wallet is {}",
            P0_TIER.name(),
            P0_TIER.min_score(),
            tier.name()
        ),
    )
    .with("required_tier", P0_TIER.name())
    .with("required_score", P0_TIER.min_score())
    .with("tier", tier.name()))
}
