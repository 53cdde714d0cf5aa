//! Borrowing against lending positions (spec 2.9, 3.4, 4.7): the venues' borrow rates, a
//! wallet's capacity (its lending collateral in USD times its tier's max LTV), simulation, the
//! one-time signed acceptance of the borrow terms, borrows and repayments through the prepare →
//! confirm runner (`flow`, `repay`, `fast_action`), open positions with their debt and health
//! read from the venue (`positions`), and the health-alert job (`alerts`). Liquidation belongs to
//! the lender: the service reads health and tells the wallet, it never acts on it.

use crate::domain::profiles::conviction::Tier;
use crate::values::{NftTier, VenueId};

pub mod alerts;
pub mod capacity;
pub mod fast_action;
pub mod flow;
pub mod positions;
pub mod rates;
pub mod repay;
pub mod simulate;
pub mod terms;

/// What the service adds to a venue's borrow rate (spec 4.7's `magma_spread_bps`).
pub const SPREAD_BPS: u32 = 50;

/// Health-factor alert levels (spec 3.4): below 1.50 warning, 1.20 urgent, 1.05 critical.
pub const WARNING_HEALTH: f64 = 1.50;
pub const URGENT_HEALTH: f64 = 1.20;
pub const CRITICAL_HEALTH: f64 = 1.05;

/// The lending venues whose positions are collateral (spec 4.7: liquid staking and the
/// protocol's own token do not count) and that lend.
pub const LENDING_VENUES: [VenueId; 2] = [VenueId::LendA, VenueId::LendB];

/// The tier borrowing goes by: the wallet's conviction tier, raised to `ember` (no higher) when
/// it holds a tier NFT (spec 4.7: "an `ember` NFT holder also qualifies"). A transferred NFT
/// grants access, never a higher LTV: the LTV is a money weight, and those follow the score.
pub fn borrowing_tier(score_tier: Tier, held_nft: Option<NftTier>) -> Tier {
    if held_nft.is_some() {
        score_tier.max(Tier::Ember)
    } else {
        score_tier
    }
}

/// The tier's max LTV in basis points; `None` below `ember` (no borrowing).
pub fn max_ltv_bps(tier: Tier) -> Option<u32> {
    match tier {
        Tier::Initiate => None,
        Tier::Ember => Some(5_000),
        Tier::Flare => Some(6_000),
        Tier::Molten => Some(6_500),
        Tier::Core => Some(7_000),
        Tier::Volcanic => Some(7_500),
    }
}

/// Whether the tier may borrow from `venue` (ember: `lend_a` only; flare and up: `lend_b` too).
pub fn may_borrow_from(tier: Tier, venue: VenueId) -> bool {
    match venue {
        VenueId::LendA => tier >= Tier::Ember,
        VenueId::LendB => tier >= Tier::Flare,
        _ => false,
    }
}

/// A fraction of basis points (0.5 for 5,000).
pub fn bps_fraction(bps: u32) -> f64 {
    f64::from(bps) / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_nft_lifts_a_wallet_to_ember_and_no_higher() {
        assert_eq!(borrowing_tier(Tier::Initiate, None), Tier::Initiate);
        assert_eq!(
            borrowing_tier(Tier::Initiate, Some(NftTier::Ember)),
            Tier::Ember
        );
        assert_eq!(
            borrowing_tier(Tier::Initiate, Some(NftTier::Volcanic)),
            Tier::Ember
        );
        assert_eq!(
            borrowing_tier(Tier::Molten, Some(NftTier::Ember)),
            Tier::Molten
        );
    }

    #[test]
    fn ltv_and_venue_access_follow_the_tier_table() {
        let table: Vec<_> = [
            Tier::Initiate,
            Tier::Ember,
            Tier::Flare,
            Tier::Molten,
            Tier::Core,
            Tier::Volcanic,
        ]
        .into_iter()
        .map(|t| {
            (
                max_ltv_bps(t),
                may_borrow_from(t, VenueId::LendA),
                may_borrow_from(t, VenueId::LendB),
            )
        })
        .collect();
        assert_eq!(
            table,
            vec![
                (None, false, false),
                (Some(5_000), true, false),
                (Some(6_000), true, true),
                (Some(6_500), true, true),
                (Some(7_000), true, true),
                (Some(7_500), true, true),
            ]
        );
        assert!(!may_borrow_from(Tier::Volcanic, VenueId::StakeB));
    }
}
