//! The APY read (spec 4.5 `GET /v1/defi/apys`): per venue, from its own state on the ledger
//! where that state gives one (a lending reserve's utilisation and rate curve), else from its
//! public rate API, else a configured value; `source` says which. Values are kept for
//! [`CACHE_SECS`] and refreshed by one request at a time, while the others read the values it
//! replaces; a source that fails keeps its last good value, marked `stale`.

use std::collections::BTreeMap;
use std::sync::Arc;

pub use super::venues::board::{Apy, ApySources, Apys, Board, KEYS};
use super::venues::p0::P0;
use super::venues::{MarketRead, SharedVenue, VenueToken};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{TokenSymbol, VenueId};

/// How long an APY is used before it is polled again (spec 8: at least 60 s).
pub const CACHE_SECS: i64 = 60;
/// How long a venue's exchange rate is used by allocation and yield reads.
pub const RATE_CACHE_SECS: i64 = 10;

/// The board, polled again when older than [`CACHE_SECS`] by one request while the others read
/// the one it replaces (`KeptBoard`).
pub async fn read(state: &AppState) -> Arc<Board> {
    let now = state.now();
    state
        .defi_apys
        .board
        .read(now, CACHE_SECS, |previous| async move {
            poll(state, &previous, now).await
        })
        .await
}

async fn poll(state: &AppState, previous: &Board, now: i64) -> Board {
    let mut values = BTreeMap::new();
    let configured = &state.defi_apys.sources.configured;
    let keep = |key: &'static str, fresh| Apy::settle(key, fresh, previous, configured, now);
    let venues = &state.defi;
    for (key, venue, symbol) in [
        ("lend_a_sol", VenueId::LendA, TokenSymbol::Sol),
        ("lend_a_usdc", VenueId::LendA, TokenSymbol::Usdc),
        ("lend_b", VenueId::LendB, TokenSymbol::Sol),
        (
            super::venues::board::LEND_B_USDC,
            VenueId::LendB,
            TokenSymbol::Usdc,
        ),
    ] {
        let fresh = match venues.get(venue) {
            Some(v) => readable_market(state, v, symbol)
                .await
                .and_then(|read| read.supply_apy_pct),
            None => None,
        };
        values.insert(key, keep(key, fresh.map(|pct| (pct, "ledger"))));
    }
    // lend_a's headline is its SOL market's, else its USDC market's, else what is configured
    // for `lend_a` itself.
    let lend_a = match (values.get("lend_a_sol"), values.get("lend_a_usdc")) {
        (Some(sol), _) if sol.source != "none" => sol.clone(),
        (_, Some(usdc)) if usdc.source != "none" => usdc.clone(),
        _ => Apy::configured(configured, "lend_a", now),
    };
    values.insert("lend_a", lend_a);
    for (key, api) in [
        ("stake_a", &state.defi_apys.sources.stake_a_api),
        ("stake_b", &state.defi_apys.sources.stake_b_api),
    ] {
        let fresh = match api {
            Some(api) => match api.apy_pct().await {
                Ok(pct) => Some((pct, "rate_api")),
                Err(error) => {
                    tracing::warn!(key, error = %format!("{error:#}"), "rate API failed");
                    None
                }
            },
            None => None,
        };
        values.insert(key, keep(key, fresh));
    }
    let p0 = match &state.p0 {
        Some(p0) => p0_supply_apr(state, p0).await,
        None => None,
    };
    values.insert("p0", keep("p0", p0.map(|pct| (pct, "ledger"))));
    for key in ["pool_a", "lend_c"] {
        values.insert(key, Apy::configured(configured, key, now));
    }
    Board {
        values,
        polled_at: now,
    }
}

/// p0's supply rate: its SOL bank's (else its first bank's) supply APR from the bank's rate
/// cache, when the ledger reads (a failure is logged: the poller falls back).
async fn p0_supply_apr(state: &AppState, p0: &P0) -> Option<f64> {
    let (_, bank) = p0
        .banks
        .iter()
        .find(|(t, _)| t.symbol == TokenSymbol::Sol)
        .or_else(|| p0.banks.first())?;
    match p0.banks(state.chain.ledger.as_ref(), &[*bank]).await {
        Ok(read) => read.first().map(|b| b.lending_apr_pct),
        Err(error) => {
            tracing::warn!(code = error.code(), "p0 bank unreadable");
            None
        }
    }
}

/// A venue's market for `symbol` from its state, when it has one and the ledger reads (a read
/// that fails is logged: the pollers fall back).
pub async fn readable_market(
    state: &AppState,
    venue: &SharedVenue,
    symbol: TokenSymbol,
) -> Option<MarketRead> {
    let token = venue.tokens().into_iter().find(|t| t.symbol == symbol)?;
    match market(state, venue, &token).await {
        Ok(read) => Some(read),
        Err(error) => {
            tracing::warn!(venue = %venue.id(), code = error.code(), "venue market unreadable");
            None
        }
    }
}

/// A venue's market for `token`, kept for [`RATE_CACHE_SECS`].
pub async fn market(
    state: &AppState,
    venue: &SharedVenue,
    token: &VenueToken,
) -> Result<MarketRead, ApiError> {
    let key = (venue.id(), token.symbol);
    let now = state.now();
    if let Some(read) = state.defi_rates.get(&key, now) {
        return Ok(read);
    }
    let read = venue.market(state.chain.ledger.as_ref(), token).await?;
    state.defi_rates.put(key, read, now, now + RATE_CACHE_SECS);
    Ok(read)
}
