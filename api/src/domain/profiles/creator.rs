//! Creator profiles (spec 2.3b), from the narratives a wallet published and their indexed
//! markets. The rules, also in docs/decisions.md:
//!
//! - A narrative resolved TRUE (the creator's own YES stake won) earns 20 points, one resolved
//!   FALSE earns 5 (a clean market is still a contribution); each adds 1 point per outside
//!   backer of its market, at most 20, so a narrative others engaged with counts for more.
//! - Tiers use the conviction thresholds (50/100/300/600/900); a wallet with no resolved
//!   narrative gets the zeroed `ember` profile, as in conviction.
//! - `creator_share_pct`, by tier: 5 up to ember, 7.5 flare, 10 molten, 12.5 core, 15 volcanic:
//!   the share of the Crucible forfeit of the creator's finalized markets that the Echo Pool's
//!   creator pool owes the creator. `total_creator_earnings_sol` sums it over those markets,
//!   at the current share, rounded down to the lamport.

use crate::domain::profiles::conviction::Tier;
use crate::values::OracleStatus;

const TRUE_POINTS: u64 = 20;
const FALSE_POINTS: u64 = 5;
const MAX_BACKER_POINTS: u64 = 20;

/// One of the creator's narratives, as far as the profile needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    pub oracle_status: OracleStatus,
    /// Backers of its market other than the creator.
    pub outside_backers: u64,
    /// Lamports its finalized market sent to the Crucible (0 until finalized).
    pub crucible_lamports: u64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreatorScore {
    pub score: f64,
    pub tier: Tier,
    pub share_pct: f64,
    pub earnings_lamports: u64,
    pub submitted: u64,
    pub resolved_true: u64,
    pub pending: u64,
}

/// The creator's share of its markets' Crucible forfeit, in basis points.
pub fn share_bps(tier: Tier) -> u64 {
    match tier {
        Tier::Initiate | Tier::Ember => 500,
        Tier::Flare => 750,
        Tier::Molten => 1_000,
        Tier::Core => 1_250,
        Tier::Volcanic => 1_500,
    }
}

/// [`share_bps`] as a percentage.
pub fn share_pct(tier: Tier) -> f64 {
    share_bps(tier) as f64 / 100.0
}

pub fn creator_score(created: &[Created]) -> CreatorScore {
    let (mut points, mut resolved, mut resolved_true, mut pending) = (0u64, 0u64, 0u64, 0u64);
    for narrative in created {
        let base = match narrative.oracle_status {
            OracleStatus::ResolvedTrue => {
                resolved_true += 1;
                TRUE_POINTS
            }
            OracleStatus::ResolvedFalse => FALSE_POINTS,
            _ => {
                pending += 1;
                continue;
            }
        };
        resolved += 1;
        points += base + narrative.outside_backers.min(MAX_BACKER_POINTS);
    }
    let tier = if resolved == 0 {
        Tier::Ember
    } else {
        Tier::for_score(points as f64)
    };
    // Basis points keep the money math in integers: 7.5 % is 750 bps.
    let share = u128::from(share_bps(tier));
    let earnings: u128 = created
        .iter()
        .map(|n| u128::from(n.crucible_lamports) * share / 10_000)
        .sum();
    CreatorScore {
        score: points as f64,
        tier,
        share_pct: share_pct(tier),
        earnings_lamports: u64::try_from(earnings).unwrap_or(u64::MAX),
        submitted: created.len() as u64,
        resolved_true,
        pending,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn created(status: &str, backers: u64, crucible: u64) -> Created {
        Created {
            oracle_status: status.parse().unwrap(),
            outside_backers: backers,
            crucible_lamports: crucible,
        }
    }

    #[test]
    fn a_wallet_without_resolved_narratives_is_a_zeroed_ember() {
        let s = creator_score(&[created("open", 7, 0)]);
        assert_eq!(s.score, 0.0);
        assert_eq!(s.tier, Tier::Ember);
        assert_eq!(s.share_pct, 5.0);
        assert_eq!((s.submitted, s.resolved_true, s.pending), (1, 0, 1));
        assert_eq!(creator_score(&[]).submitted, 0);
    }

    #[test]
    fn resolutions_and_outside_backers_make_the_score() {
        // 20 + 3, 5 + 20 (capped from 50): 48 is still initiate.
        let s = creator_score(&[
            created("resolved_true", 3, 1_000_000_000),
            created("resolved_false", 50, 0),
            created("pending", 9, 0),
        ]);
        assert_eq!(s.score, 48.0);
        assert_eq!(s.tier, Tier::Initiate);
        assert_eq!(s.earnings_lamports, 50_000_000, "5 % of 1 SOL");
        assert_eq!((s.submitted, s.resolved_true, s.pending), (3, 1, 1));
    }

    #[test]
    fn the_share_grows_with_the_tier_and_rounds_down() {
        // Three TRUE narratives with 20+ outside backers: 120 points, flare, 7.5 %.
        let s = creator_score(&[
            created("resolved_true", 25, 333),
            created("resolved_true", 20, 0),
            created("resolved_true", 40, 0),
        ]);
        assert_eq!(s.score, 120.0);
        assert_eq!(s.tier, Tier::Flare);
        assert_eq!(s.share_pct, 7.5);
        assert_eq!(s.earnings_lamports, 24, "333 × 7.5 % = 24.975, floored");
    }
}
