//! The venues configured for the cluster: which are live, their tokens, and automatic routing.

use narrative_sdk::Pubkey;
use poem::http::StatusCode;

use super::{Cluster, SharedVenue, VenueToken, NATIVE_MINT};
use crate::error::ApiError;
use crate::values::{TokenSymbol, VenueId};

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

    /// Whether the service builds for the venue on this cluster at all.
    pub fn is_wired(&self, venue: &SharedVenue) -> bool {
        venue.live_on().contains(&self.cluster)
    }

    /// Whether it takes deposits here: wired on this cluster, with a market configured for at
    /// least one token (lend_a's and lend_b's reserves are the operator's to name).
    pub fn is_live(&self, venue: &SharedVenue) -> bool {
        self.is_wired(venue) && !venue.tokens().is_empty()
    }

    /// The venue for a money flow: 503 `coming_soon` for one not wired on this cluster (and
    /// for `pool_a`), 503 `venue_not_configured` for one wired here without a market, 400
    /// `unsupported_protocol` for `p0`, whose deposits and withdrawals have routes of their own
    /// (spec 4.5: the generic flows take lend_a, lend_b, lend_c, stake_a and stake_b).
    pub fn live(&self, id: VenueId) -> Result<&SharedVenue, ApiError> {
        if id == VenueId::P0 {
            return Err(unsupported(
                id,
                "the generic deposit and withdrawal (its routes are /v1/defi/p0/*)",
            ));
        }
        match self.get(id) {
            Some(venue) if self.is_live(venue) => Ok(venue),
            Some(venue) if self.is_wired(venue) => Err(ApiError::coded(
                StatusCode::SERVICE_UNAVAILABLE,
                "venue_not_configured",
                format!("{id} has no market configured on this service"),
            )),
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

    /// Automatic routing (docs/decisions.md, "DeFi routing"): the venues live on this cluster
    /// that take the token, best first: highest supply APY (`apy_of`, from the APY read), ties
    /// and unknown APYs in spec 4.5's order. A deposit goes to the first that takes it as it
    /// stands ([`refuses_as_it_stands`]).
    pub fn ranked(
        &self,
        symbol: TokenSymbol,
        apy_of: impl Fn(VenueId) -> Option<f64>,
    ) -> Result<Vec<&SharedVenue>, ApiError> {
        // Taking the token implies a configured market: `is_wired` and this check are `is_live`
        // without listing the venue's tokens twice a prepare.
        let mut ranked: Vec<(&SharedVenue, f64)> = self
            .venues
            .iter()
            .filter(|v| self.is_wired(v) && v.tokens().iter().any(|t| t.symbol == symbol))
            .map(|v| (v, apy_of(v.id()).unwrap_or(f64::MIN)))
            .collect();
        if ranked.is_empty() {
            return Err(ApiError::coded(
                StatusCode::SERVICE_UNAVAILABLE,
                "no_venue_available",
                format!("no venue takes {symbol} on this cluster"),
            ));
        }
        // Stable: equal APYs keep the venues' order.
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        Ok(ranked.into_iter().map(|(v, _)| v).collect())
    }
}

/// The codes a venue answers for a deposit it would refuse as it stands (paused, not yet
/// updated for the epoch, restricted, obsolete, full, the amount outside what it takes, or
/// collateral the wallet's Kamino obligation cannot take while it owes or outside its elevation
/// group), before the wallet signs. Automatic routing then tries the next venue; a deposit that
/// named its venue gets the refusal.
pub const DEPOSIT_REFUSALS: [&str; 8] = [
    "venue_paused",
    "venue_not_updated",
    "venue_deposits_restricted",
    "venue_reserve_obsolete",
    "amount_above_deposit_limit",
    "amount_below_minimum",
    "collateral_outside_elevation_group",
    "obligation_in_elevation_group",
];

/// Whether `error` is a venue's refusal of a deposit as it stands ([`DEPOSIT_REFUSALS`]).
pub fn refuses_as_it_stands(error: &ApiError) -> bool {
    DEPOSIT_REFUSALS.contains(&error.code())
}

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
