//! DeFi earn (spec 2.8, 3.3, 4.5, 4.6): routing principal into the venues, deposits and
//! withdrawals through the one prepare → confirm runner, the APY read, allocation, yield and
//! staking. The venues themselves (their interfaces and ledger reads) are in [`venues`].

use std::sync::Arc;

use narrative_sdk::Pubkey;
use poem::http::StatusCode;

use crate::error::ApiError;
use crate::values::{TokenSymbol, VenueId};

pub mod apys;
pub mod deposit;
pub mod reads;
pub mod settings;
pub mod venues;
pub mod withdrawal;

use venues::{Cluster, ExchangeRate, SharedVenue, VenueToken, NATIVE_MINT};

/// Spec 8: a generic deposit is at least 0.01 SOL (or its USD value in USDC).
pub const MIN_DEPOSIT_LAMPORTS: u64 = 10_000_000;

/// When a mainnet-targeted venue is expected (the APY read's `coming_at`).
pub const MAINNET_COMING_AT: &str = "mainnet launch";

/// The venues as configured for the cluster the service targets.
pub struct Venues {
    pub cluster: Cluster,
    pub usdc_mint: Pubkey,
    venues: Vec<SharedVenue>,
}

impl Venues {
    pub fn new(cluster: Cluster, usdc_mint: Pubkey, venues: Vec<SharedVenue>) -> Venues {
        Venues {
            cluster,
            usdc_mint,
            venues,
        }
    }

    pub fn all(&self) -> &[SharedVenue] {
        &self.venues
    }

    /// The venue, whatever its availability.
    pub fn get(&self, id: VenueId) -> Option<&SharedVenue> {
        self.venues.iter().find(|v| v.id() == id)
    }

    pub fn is_live(&self, venue: &SharedVenue) -> bool {
        venue.live_on().contains(&self.cluster)
    }

    /// The venue for a money flow: 503 `coming_soon` for one not wired on this cluster (and
    /// for `pool_a`), 503 `p0_disabled` for `p0` (its own routes carry it).
    pub fn live(&self, id: VenueId) -> Result<&SharedVenue, ApiError> {
        if id == VenueId::P0 {
            return Err(ApiError::coded(
                StatusCode::SERVICE_UNAVAILABLE,
                "p0_disabled",
                "the p0 integration is not enabled",
            ));
        }
        match self.get(id) {
            Some(venue) if self.is_live(venue) => Ok(venue),
            _ => Err(ApiError::coming_soon(id.as_str())),
        }
    }

    /// The venue's token of `symbol`: 400 `unsupported_protocol` when it takes none.
    pub fn token(&self, venue: &SharedVenue, symbol: TokenSymbol) -> Result<VenueToken, ApiError> {
        venue
            .tokens()
            .into_iter()
            .find(|t| t.symbol == symbol)
            .ok_or_else(|| unsupported(venue.id(), &format!("{symbol} deposits")))
    }

    /// A token's mint on this cluster.
    pub fn mint(&self, symbol: TokenSymbol) -> Pubkey {
        match symbol {
            TokenSymbol::Sol => NATIVE_MINT,
            TokenSymbol::Usdc => self.usdc_mint,
        }
    }

    /// Automatic routing (docs/decisions.md, "DeFi routing"): among the venues live on this
    /// cluster that take the token, the one whose supply APY is highest (`apys` from the APY
    /// read), ties and unknown APYs going to the earlier venue of spec 4.5's order.
    pub fn route(
        &self,
        symbol: TokenSymbol,
        apy_of: impl Fn(VenueId) -> Option<f64>,
    ) -> Result<&SharedVenue, ApiError> {
        let mut best: Option<(&SharedVenue, f64)> = None;
        for venue in self.venues.iter().filter(|v| self.is_live(v)) {
            if !venue.tokens().iter().any(|t| t.symbol == symbol) {
                continue;
            }
            let apy = apy_of(venue.id()).unwrap_or(f64::MIN);
            if best.is_none_or(|(_, b)| apy > b) {
                best = Some((venue, apy));
            }
        }
        best.map(|(v, _)| v).ok_or_else(|| {
            ApiError::coded(
                StatusCode::SERVICE_UNAVAILABLE,
                "no_venue_available",
                format!("no venue takes {symbol} on this cluster"),
            )
        })
    }
}

pub type SharedVenues = Arc<Venues>;

/// 400 `unsupported_protocol` (spec 7): `venue` does not support `what`.
pub fn unsupported(venue: VenueId, what: &str) -> ApiError {
    ApiError::coded(
        StatusCode::BAD_REQUEST,
        "unsupported_protocol",
        format!("{venue} does not support {what}"),
    )
}

/// 503 `jito_unstake_not_supported` (spec 7): the holder swaps the liquid token elsewhere.
pub fn unstake_refused() -> ApiError {
    ApiError::coded(
        StatusCode::SERVICE_UNAVAILABLE,
        "jito_unstake_not_supported",
        "stake_a cannot be unstaked through the service; swap the liquid staking token instead",
    )
}

/// The smallest deposit of `symbol`, in its base units: 0.01 SOL, or its USD value in USDC at
/// `sol_usd` (rounded up, so the minimum is never below 0.01 SOL's worth).
pub fn min_deposit(symbol: TokenSymbol, sol_usd: f64) -> u64 {
    match symbol {
        TokenSymbol::Sol => MIN_DEPOSIT_LAMPORTS,
        // 0.01 SOL × price USD × 10^6 micro-USDC; prices are display-grade, the bound is policy.
        TokenSymbol::Usdc => (sol_usd * 0.01 * 1e6).ceil().max(1.0) as u64,
    }
}

/// `base` units of `symbol` as lamports of SOL at `sol_usd` (SOL is itself).
pub fn lamports_of(symbol: TokenSymbol, base: u64, sol_usd: f64) -> u64 {
    match symbol {
        TokenSymbol::Sol => base,
        TokenSymbol::Usdc if sol_usd > 0.0 => (base as f64 / 1e6 / sol_usd * 1e9).round() as u64,
        TokenSymbol::Usdc => 0,
    }
}

/// A rate kept as decimal strings (it does not fit the store's integers).
pub fn rate_strings(rate: &ExchangeRate) -> (String, String) {
    (rate.liquidity.to_string(), rate.receipt.to_string())
}

pub fn rate_from_strings(liquidity: &str, receipt: &str) -> Result<ExchangeRate, ApiError> {
    Ok(ExchangeRate {
        liquidity: liquidity.parse().map_err(ApiError::internal)?,
        receipt: receipt.parse().map_err(ApiError::internal)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usdc_minimum_is_a_hundredth_of_a_sol_in_dollars() {
        assert_eq!(min_deposit(TokenSymbol::Sol, 150.0), 10_000_000);
        assert_eq!(min_deposit(TokenSymbol::Usdc, 150.0), 1_500_000);
        assert_eq!(min_deposit(TokenSymbol::Usdc, 123.456_7), 1_234_567);
        assert_eq!(lamports_of(TokenSymbol::Usdc, 1_500_000, 150.0), 10_000_000);
        assert_eq!(lamports_of(TokenSymbol::Sol, 42, 150.0), 42);
    }
}
