//! Backing and claiming on a binary market: prepared `back_market` and `claim` transactions for
//! the wallet, confirmed by signature. The positions themselves are on chain; confirm records
//! the signature and refreshes the market and the backing from the ledger, so the listing and
//! positions show the move at once.

use narrative_sdk::binary_vault::constants::MIN_BACKING_LAMPORTS;
use narrative_sdk::binary_vault::state::Side;
use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::backings;
use poem::http::StatusCode;
use sea_orm::{DatabaseConnection, EntityTrait};
use serde::{Deserialize, Serialize};

use crate::chain::{MoneyFlow, Prepared, Unsigned};
use crate::domain::binary::listing;
use crate::domain::system::ensure_running;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{
    sol, Base58Signature, BinarySide, Component, MarketRef, PreparedId, Sol, Wallet,
};

/// Spec 8: at least 0.01 SOL (binary_vault's minimum for SOL markets).
pub type BackingSol = Sol<MIN_BACKING_LAMPORTS>;

pub struct BackMarket {
    pub wallet: Wallet,
    pub market: MarketRef,
    pub side: BinarySide,
    pub amount: BackingSol,
}

/// What prepare stores for confirm: the market and side (and the amount of a backing), and the
/// component it is a write of, whose halt flag its confirm obeys whichever route confirms it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub market_id: MarketRef,
    pub side: BinarySide,
    #[serde(default)]
    pub amount_lamports: Option<u64>,
    #[serde(default = "binary_component")]
    pub component: Component,
}

/// Moves prepared before the component was stored were all binary's or, for narratives, are
/// confirmed under binary's flag.
fn binary_component() -> Component {
    Component::Binary
}

pub struct PreparedMove {
    pub unsigned: Unsigned,
    pub params: Params,
}

pub type Confirmed = crate::chain::Confirmed<Params>;

/// A move whose confirmation writes no rows of its own (the position is on chain, and the
/// refresh brings it into the store): a backing (`CLAIM = false`) or a claim.
pub struct OnChainMove<const CLAIM: bool>;

pub type Backing = OnChainMove<false>;
/// A claim: winnings, the loser return or a refund, once the market is finalized.
pub type Claim = OnChainMove<true>;
pub const BACKING: Backing = OnChainMove;
pub const CLAIM: Claim = OnChainMove;

fn not_open(code: &str, message: &str) -> ApiError {
    ApiError::coded(StatusCode::FORBIDDEN, code, message.to_owned())
}

/// A backing as a write of `component`: `binary`, or `narratives` for a narrative's market.
pub async fn prepare_back(
    state: &AppState,
    back: BackMarket,
    component: Component,
) -> Result<PreparedMove, ApiError> {
    ensure_running(state.store.db(), component).await?;
    let market = listing::market(state, back.market).await?;
    if market.mint.is_some() {
        return Err(ApiError::coded(
            StatusCode::BAD_REQUEST,
            "unsupported_market",
            "token markets are backed with back_market_spl",
        ));
    }
    let amount = back.amount.lamports();
    if amount < market.min_backing.max(0) as u64 {
        return Err(ApiError::validation(format!(
            "amount_sol must be at least {} on this market",
            sol(market.min_backing)
        )));
    }
    if !market.approved
        || market.finalized
        || market.oracle_status != 0
        || state.now() >= market.deadline
    {
        return Err(not_open(
            "market_not_open",
            "this market does not take backings now",
        ));
    }
    let market_id = back.market.market_id();
    let ix = narrative_sdk::binary::back_market(
        back.wallet.pubkey(),
        &market_id,
        back.side.into(),
        amount,
    );
    let params = Params {
        market_id: back.market,
        side: back.side,
        amount_lamports: Some(amount),
        component,
    };
    let unsigned = state
        .chain
        .prepare(&BACKING, &back.wallet, &[ix], &params)
        .await?;
    Ok(PreparedMove { unsigned, params })
}

pub async fn prepare_claim(
    state: &AppState,
    wallet: Wallet,
    market: MarketRef,
    side: BinarySide,
) -> Result<PreparedMove, ApiError> {
    ensure_running(state.store.db(), Component::Binary).await?;
    let indexed = listing::market(state, market).await?;
    if !indexed.finalized {
        return Err(not_open(
            "market_not_settled",
            "claims open once the market is finalized",
        ));
    }
    let market_id = market.market_id();
    let backing = backings::Entity::find_by_id(
        pda::binary::backing(&market_id, &wallet.pubkey(), side.into()).to_string(),
    )
    .one(state.store.db())
    .await?
    .filter(|b| !b.closed)
    .ok_or_else(|| ApiError::not_found("backing"))?;
    if backing.claimed {
        return Err(ApiError::coded(
            StatusCode::CONFLICT,
            "already_claimed",
            "this backing was claimed",
        ));
    }
    let ix = narrative_sdk::binary::claim(wallet.pubkey(), &market_id, side.into());
    let params = Params {
        market_id: market,
        side,
        amount_lamports: None,
        component: Component::Binary,
    };
    let unsigned = state.chain.prepare(&CLAIM, &wallet, &[ix], &params).await?;
    Ok(PreparedMove { unsigned, params })
}

#[async_trait::async_trait]
impl<const CLAIM: bool> MoneyFlow for OnChainMove<CLAIM> {
    const KIND: &'static str = if CLAIM { "binary_claim" } else { "binary_back" };
    type Params = Params;
    type Confirmed = Confirmed;

    fn component(&self, params: &Params) -> Component {
        params.component
    }

    /// The market and the wallet's backing on the prepared side.
    fn changed(&self, prepared: &Prepared<Params>) -> Vec<Pubkey> {
        let market_id = prepared.params.market_id.market_id();
        let side: Side = prepared.params.side.into();
        vec![
            pda::binary::market(&market_id),
            pda::binary::backing(&market_id, &prepared.wallet.pubkey(), side),
        ]
    }

    async fn answer(
        &self,
        _: &DatabaseConnection,
        prepared: &Prepared<Params>,
        _fresh: bool,
    ) -> Result<Confirmed, ApiError> {
        prepared.confirmed()
    }
}

/// Confirms a prepared move of `flow`.
pub async fn confirm<const CLAIM: bool>(
    state: &AppState,
    flow: OnChainMove<CLAIM>,
    prepared_id: PreparedId,
    signature: Base58Signature,
) -> Result<Confirmed, ApiError> {
    state.chain.confirm(&flow, prepared_id, signature).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backings_prepared_before_the_component_was_stored_obey_binary() {
        let market = MarketRef::from([7u8; 32]);
        let old: Params = serde_json::from_value(serde_json::json!({
            "market_id": market.to_string(), "side": "yes", "amount_lamports": 5
        }))
        .unwrap();
        assert_eq!(BACKING.component(&old), Component::Binary);
        let narrative = Params {
            component: Component::Narratives,
            ..old
        };
        let stored = serde_json::to_value(&narrative).unwrap();
        let read: Params = serde_json::from_value(stored).unwrap();
        assert_eq!(BACKING.component(&read), Component::Narratives);
    }
}
