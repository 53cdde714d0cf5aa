//! Backing a narrative (spec 3.1, 4.1): its market is a binary market, backed through the same
//! prepared `back_market` as a write of the `narratives` component; a pre-market narrative
//! refuses with 403 `market_not_open` and `opens_at`, a resolved one with 403 `market_not_open`
//! and its `oracle_status`.

use poem::http::StatusCode;

use crate::clock::iso;
use crate::domain::binary::backing::{self, BackMarket, BackingSol, Confirmed, PreparedMove};
use crate::domain::narratives::feed;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{
    enum_value, Base58Signature, Component, MarketRef, NarrativeId, NarrativeSide, OracleStatus,
    PreparedId, Wallet,
};

enum_value!(
    /// What a narrative is backed in.
    TokenType,
    "token_type",
    "What the backing is paid in: `SOL` (the only one so far).",
    [Sol => "SOL"]
);

pub struct BackNarrative {
    pub wallet: Wallet,
    pub amount: BackingSol,
    pub side: NarrativeSide,
}

pub async fn prepare(
    state: &AppState,
    id: NarrativeId,
    back: BackNarrative,
) -> Result<PreparedMove, ApiError> {
    let narrative = feed::get(state, id).await?;
    if let Some(opens_at) = feed::opens_at(&narrative, state.now()) {
        return Err(ApiError::coded(
            StatusCode::FORBIDDEN,
            "market_not_open",
            "this narrative is pre-market: backing opens at opens_at",
        )
        .with("opens_at", iso(opens_at)));
    }
    // A verdict can come before the market's deadline (spec 3.2: an open narrative may be
    // resolved), and binary_vault takes backings until the deadline; the service prepares none
    // once the outcome is known.
    if !OracleStatus::eligible_names().contains(&narrative.oracle_status.as_str()) {
        return Err(ApiError::coded(
            StatusCode::FORBIDDEN,
            "market_not_open",
            "this narrative is resolved: the service prepares no more backings of it",
        )
        .with("oracle_status", narrative.oracle_status.as_str()));
    }
    let market: MarketRef = narrative.market_id.parse().map_err(ApiError::internal)?;
    backing::prepare_back(
        state,
        BackMarket {
            wallet: back.wallet,
            market,
            side: back.side.into(),
            amount: back.amount,
        },
        Component::Narratives,
    )
    .await
}

pub async fn confirm(
    state: &AppState,
    prepared_id: PreparedId,
    signature: Base58Signature,
) -> Result<Confirmed, ApiError> {
    backing::confirm(state, backing::BACKING, prepared_id, signature).await
}
