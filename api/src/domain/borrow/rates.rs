//! The borrow rates (spec 4.7 `GET /v1/borrow/rates`): per devnet-live lending venue and token,
//! the venue's borrow APR read from its reserve on the ledger (utilisation on its rate curve),
//! else a configured value (`BORROW_CONFIGURED_RATES`); the service's spread added on top. Kept
//! [`CACHE_SECS`]; a reserve that cannot be read keeps its last good value, marked stale.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{bps_fraction, SPREAD_BPS};
use crate::chain::venues::board::{Apy, Board};
use crate::domain::defi::apys::readable_market;
use crate::state::AppState;
use crate::values::{TokenSymbol, VenueId};

/// How long a rate is used before it is polled again (spec 4.7: 60 s).
pub const CACHE_SECS: i64 = 60;

/// Each venue's token markets and their keys (`BORROW_KEYS`, `BORROW_CONFIGURED_RATES`).
const MARKETS: [(&str, VenueId, TokenSymbol); 4] = [
    ("lend_a_sol", VenueId::LendA, TokenSymbol::Sol),
    ("lend_a_usdc", VenueId::LendA, TokenSymbol::Usdc),
    ("lend_b_sol", VenueId::LendB, TokenSymbol::Sol),
    ("lend_b_usdc", VenueId::LendB, TokenSymbol::Usdc),
];

/// A venue's borrow rate for one token.
#[derive(Debug, Clone, PartialEq)]
pub struct BorrowRate {
    /// The venue's APR in percent (None: neither the reserve nor configuration gives one).
    pub base: Option<f64>,
    /// `base` plus [`SPREAD_BPS`].
    pub with_spread: Option<f64>,
    pub source: &'static str,
    pub stale: bool,
}

/// The rates as last polled.
#[derive(Debug, Clone)]
pub struct Rates {
    pub board: Arc<Board>,
}

impl Rates {
    pub fn get(&self, venue: VenueId, asset: TokenSymbol) -> BorrowRate {
        let apy = key(venue, asset).and_then(|k| self.board.values.get(k));
        let base = apy.filter(|a| a.source != "none").map(|a| a.pct);
        BorrowRate {
            base,
            with_spread: base.map(with_spread),
            source: apy.map_or("none", |a| a.source),
            stale: apy.is_some_and(|a| a.stale),
        }
    }

    pub fn polled_at(&self) -> i64 {
        self.board.polled_at
    }

    /// The sources' common name, or `mixed`.
    pub fn source(&self) -> &'static str {
        self.board.source()
    }
}

/// A rate with the service's spread.
pub fn with_spread(base_pct: f64) -> f64 {
    base_pct + bps_fraction(SPREAD_BPS) * 100.0
}

fn key(venue: VenueId, asset: TokenSymbol) -> Option<&'static str> {
    MARKETS
        .iter()
        .find(|(_, v, a)| *v == venue && *a == asset)
        .map(|(key, _, _)| *key)
}

/// The rates, polled again when older than [`CACHE_SECS`] by one request while the others read
/// the ones it replaces (`KeptBoard`: a slow node holds only the request polling it).
pub async fn read(state: &AppState) -> Rates {
    let now = state.now();
    let board = state
        .borrow_rates
        .board
        .read(now, CACHE_SECS, |previous| async move {
            poll(state, &previous, now).await
        })
        .await;
    Rates { board }
}

async fn poll(state: &AppState, previous: &Board, now: i64) -> Board {
    let configured = &state.borrow_rates.configured;
    let mut values = BTreeMap::new();
    for (key, venue, asset) in MARKETS {
        let fresh = match state.defi.get(venue) {
            Some(v) if state.defi.is_live(v) => readable_market(state, v, asset)
                .await
                .and_then(|read| read.borrow_apr_pct)
                .map(|pct| (pct, "ledger")),
            _ => None,
        };
        values.insert(key, Apy::settle(key, fresh, previous, configured, now));
    }
    Board {
        values,
        polled_at: now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_is_fifty_basis_points_and_keys_name_venue_and_token() {
        assert!((with_spread(7.5) - 8.0).abs() < 1e-12);
        assert_eq!(key(VenueId::LendB, TokenSymbol::Usdc), Some("lend_b_usdc"));
        assert_eq!(key(VenueId::LendA, TokenSymbol::Sol), Some("lend_a_sol"));
        assert_eq!(key(VenueId::StakeB, TokenSymbol::Sol), None);
        let keys: Vec<_> = MARKETS.iter().map(|(k, _, _)| *k).collect();
        assert_eq!(keys, crate::chain::venues::board::BORROW_KEYS);
    }
}
