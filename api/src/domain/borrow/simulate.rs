//! A borrow simulated before it is prepared (spec 2.9, 4.7 `GET /v1/borrow/simulate`): the
//! collateral it needs at the wallet's max LTV and the health factor it would leave (its
//! lending collateral's value over everything it would owe), with a warning when that is below
//! [`WARNING_HEALTH`](super::WARNING_HEALTH), beyond its capacity, or not open to its tier.

use super::capacity::{capacity, Capacity};
use super::{may_borrow_from, LENDING_VENUES, WARNING_HEALTH};
use crate::domain::defi::unsupported;
use crate::domain::profiles::conviction::Tier;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{TokenSymbol, UsdAmount, VenueId, Wallet};

#[derive(Debug, Clone)]
pub struct Simulation {
    pub borrow_amount_usd: f64,
    /// `None` below `ember`.
    pub collateral_required_usd: Option<f64>,
    /// Collateral value over what would be owed (0 with no collateral).
    pub estimated_health_factor: f64,
    /// Why the borrow would be refused or risky, if it would.
    pub warning: Option<String>,
    pub capacity: Capacity,
}

/// A lending venue that lends, or 400 `unsupported_protocol`.
pub fn lending_venue(venue: VenueId) -> Result<VenueId, ApiError> {
    if LENDING_VENUES.contains(&venue) {
        Ok(venue)
    } else {
        Err(unsupported(venue, "borrowing"))
    }
}

pub async fn simulate(
    state: &AppState,
    wallet: &Wallet,
    venue: VenueId,
    asset: TokenSymbol,
    amount: UsdAmount,
) -> Result<Simulation, ApiError> {
    let venue = lending_venue(venue)?;
    let lends = state
        .defi
        .get(venue)
        .is_some_and(|v| state.defi.is_live(v) && v.tokens().iter().any(|t| t.symbol == asset));
    let capacity = capacity(state, wallet).await?;
    Ok(outcome(
        capacity,
        venue,
        amount.get(),
        lends.then_some(asset).ok_or(asset),
    ))
}

/// The simulation of borrowing `amount_usd` of an asset from `venue` with `capacity`; the asset
/// is `Err` when the venue has no live market for it here.
pub fn outcome(
    capacity: Capacity,
    venue: VenueId,
    amount_usd: f64,
    asset: Result<TokenSymbol, TokenSymbol>,
) -> Simulation {
    let owed = capacity.total_borrowed_usd + amount_usd;
    let health = capacity.collateral_usd / owed;
    let mut warnings = Vec::new();
    if capacity.max_ltv_bps.is_none() {
        warnings.push(format!(
            "borrowing needs the ember tier (conviction score {}+) or a tier NFT",
            Tier::Ember.min_score()
        ));
    } else if !may_borrow_from(capacity.tier, venue) {
        warnings.push(format!(
            "{venue} needs the flare tier (conviction score {}+)",
            Tier::Flare.min_score()
        ));
    }
    if let Err(asset) = asset {
        warnings.push(format!("{venue} lends no {asset} on this cluster"));
    }
    if capacity.max_ltv_bps.is_some() && amount_usd > capacity.available_usd() {
        warnings.push(format!(
            "exceeds the wallet's borrow capacity: {:.2} USD available of {:.2}",
            capacity.available_usd(),
            capacity.capacity_usd
        ));
    }
    if health < WARNING_HEALTH {
        warnings.push(format!(
            "the health factor would be {health:.2}, below {WARNING_HEALTH:.2}: the lender \
             liquidates below 1.00"
        ));
    }
    Simulation {
        borrow_amount_usd: amount_usd,
        collateral_required_usd: capacity
            .max_ltv_bps
            .map(|_| amount_usd / capacity.max_ltv()),
        estimated_health_factor: health,
        warning: (!warnings.is_empty()).then(|| warnings.join("; ")),
        capacity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::prices::PriceQuote;

    const USDC: Result<TokenSymbol, TokenSymbol> = Ok(TokenSymbol::Usdc);

    fn capacity(tier: Tier, collateral_usd: f64, borrowed_usd: f64) -> Capacity {
        let max_ltv_bps = super::super::max_ltv_bps(tier);
        Capacity {
            tier,
            max_ltv_bps,
            collateral_usd,
            capacity_usd: collateral_usd * max_ltv_bps.map_or(0.0, super::super::bps_fraction),
            total_borrowed_usd: borrowed_usd,
            open_positions: u64::from(borrowed_usd > 0.0),
            price: PriceQuote {
                sol_usd: 150.0,
                source: "configured",
                read_at: None,
            },
        }
    }

    #[test]
    fn a_borrow_within_capacity_at_a_safe_health_has_no_warning() {
        let s = outcome(
            capacity(Tier::Flare, 1_000.0, 0.0),
            VenueId::LendB,
            400.0,
            USDC,
        );
        assert_eq!(s.collateral_required_usd, Some(400.0 / 0.6));
        assert!((s.estimated_health_factor - 2.5).abs() < 1e-12);
        assert_eq!(s.warning, None);
    }

    #[test]
    fn health_counts_what_is_already_owed() {
        // 1,000 USD of collateral, 300 owed, 400 more: 1000 / 700.
        let s = outcome(
            capacity(Tier::Volcanic, 1_000.0, 300.0),
            VenueId::LendA,
            400.0,
            USDC,
        );
        assert!((s.estimated_health_factor - 1_000.0 / 700.0).abs() < 1e-12);
        let warning = s.warning.unwrap();
        assert!(warning.contains("health factor would be 1.43"), "{warning}");
        assert!(
            !warning.contains("capacity"),
            "750 - 300 leaves 450: {warning}"
        );
    }

    #[test]
    fn beyond_capacity_and_the_wrong_tier_are_both_said() {
        let s = outcome(
            capacity(Tier::Ember, 1_000.0, 0.0),
            VenueId::LendB,
            600.0,
            USDC,
        );
        let warning = s.warning.unwrap();
        assert!(warning.contains("lend_b needs the flare tier"), "{warning}");
        assert!(warning.contains("500.00 USD available"), "{warning}");
        assert!(!warning.contains("health"), "1000 / 600 is 1.67: {warning}");
    }

    #[test]
    fn below_ember_nothing_is_lent() {
        let s = outcome(
            capacity(Tier::Initiate, 1_000.0, 0.0),
            VenueId::LendA,
            10.0,
            USDC,
        );
        assert_eq!(s.collateral_required_usd, None);
        assert!(s
            .warning
            .unwrap()
            .starts_with("borrowing needs the ember tier"));
        let none = outcome(capacity(Tier::Ember, 0.0, 0.0), VenueId::LendA, 10.0, USDC);
        assert_eq!(none.estimated_health_factor, 0.0);
        let no_market = outcome(
            capacity(Tier::Flare, 1_000.0, 0.0),
            VenueId::LendB,
            10.0,
            Err(TokenSymbol::Usdc),
        );
        assert_eq!(
            no_market.warning.as_deref(),
            Some("lend_b lends no USDC on this cluster")
        );
    }
}
