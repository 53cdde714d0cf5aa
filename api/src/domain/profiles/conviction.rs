//! Conviction scoring (spec 2.5), computed from a wallet's resolved backings. The rules, also in
//! docs/decisions.md:
//!
//! - A backing counts once its market is finalized with an outcome: correct when its side won.
//!   Backings are taken in the order their markets were finalized (then by market id).
//! - A correct backing earns 10 points plus 2 per correct backing immediately before it (the
//!   streak), the bonus capped at 10; an incorrect one loses 5; the score never goes below 0.
//!   The amount backed does not matter, so conviction cannot be bought.
//! - Tiers: `initiate` below 50, `ember` from 50, `flare` 100, `molten` 300, `core` 600,
//!   `volcanic` 900. A wallet with no resolved backing gets spec 2.5's zeroed profile, tier
//!   `ember`.
//! - Multipliers: conviction by tier (1.0, 1.0, 1.1, 1.25, 1.5, 2.0); streak 1 + 0.05 per
//!   backing of the current streak, at most 1.5; combined = the product. They are kept in basis
//!   points (the Echo Pool weighs lamports with them, so no float touches money) and shown as
//!   numbers. The fee falls with the tier: 2.0 % up to ember, 1.75 flare, 1.5 molten, 1.25
//!   core, 1.0 volcanic.

use std::collections::BTreeMap;

use narrative_store::indexed::{resolved_backings, ResolvedBacking, ResolvedFilter};
use sea_orm::{ConnectionTrait, DbErr};

use crate::values::{NftTier, Wallet};

/// One resolved backing.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub correct: bool,
    /// The narrative's category, when the market is a narrative.
    pub category: Option<String>,
}

/// Ordered from the lowest tier to the highest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    Initiate,
    Ember,
    Flare,
    Molten,
    Core,
    Volcanic,
}

impl Tier {
    /// Highest first, for [`Tier::for_score`].
    const DESCENDING: [Tier; 6] = [
        Tier::Volcanic,
        Tier::Core,
        Tier::Molten,
        Tier::Flare,
        Tier::Ember,
        Tier::Initiate,
    ];

    pub fn for_score(score: f64) -> Tier {
        Tier::DESCENDING
            .into_iter()
            .find(|tier| score >= tier.min_score())
            .unwrap_or(Tier::Initiate)
    }

    /// The score from which a wallet is in this tier.
    pub fn min_score(self) -> f64 {
        match self {
            Tier::Initiate => 0.0,
            Tier::Ember => 50.0,
            Tier::Flare => 100.0,
            Tier::Molten => 300.0,
            Tier::Core => 600.0,
            Tier::Volcanic => 900.0,
        }
    }

    /// The tier of that name.
    pub fn named(name: &str) -> Option<Tier> {
        Tier::DESCENDING.into_iter().find(|t| t.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Tier::Initiate => "initiate",
            Tier::Ember => "ember",
            Tier::Flare => "flare",
            Tier::Molten => "molten",
            Tier::Core => "core",
            Tier::Volcanic => "volcanic",
        }
    }

    /// The conviction multiplier in basis points.
    pub fn multiplier_bps(self) -> u64 {
        match self {
            Tier::Initiate | Tier::Ember => 10_000,
            Tier::Flare => 11_000,
            Tier::Molten => 12_500,
            Tier::Core => 15_000,
            Tier::Volcanic => 20_000,
        }
    }

    pub fn multiplier(self) -> f64 {
        bps_number(self.multiplier_bps())
    }

    /// The tier an NFT of `tier` stands for.
    pub fn of_nft(tier: NftTier) -> Tier {
        match tier {
            NftTier::Ember => Tier::Ember,
            NftTier::Flare => Tier::Flare,
            NftTier::Molten => Tier::Molten,
            NftTier::Core => Tier::Core,
            NftTier::Volcanic => Tier::Volcanic,
        }
    }

    /// This tier, raised to that of a held tier NFT (spec 4.7: an `ember` NFT holder qualifies
    /// as `ember`). Only the tier: multipliers and fees follow the score, so money weights
    /// cannot be bought with a transferred NFT.
    pub fn honouring(self, nft: Option<NftTier>) -> Tier {
        nft.map_or(self, |held| self.max(Tier::of_nft(held)))
    }

    pub fn fee_pct(self) -> f64 {
        match self {
            Tier::Initiate | Tier::Ember => 2.0,
            Tier::Flare => 1.75,
            Tier::Molten => 1.5,
            Tier::Core => 1.25,
            Tier::Volcanic => 1.0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CategoryStats {
    pub backed: u32,
    pub correct: u32,
}

impl CategoryStats {
    pub fn accuracy(&self) -> f64 {
        percent(self.correct, self.backed)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Score {
    pub score: f64,
    pub tier: Tier,
    pub correct: u32,
    pub incorrect: u32,
    pub accuracy_rate: f64,
    pub current_streak: u32,
    pub longest_streak: u32,
    pub conviction_multiplier: f64,
    pub streak_multiplier: f64,
    pub combined_multiplier: f64,
    pub fee_pct: f64,
    pub per_category: BTreeMap<String, CategoryStats>,
    /// `combined_multiplier` in basis points, exact.
    pub combined_multiplier_bps: u64,
}

const CORRECT_POINTS: i64 = 10;
const STREAK_BONUS: i64 = 2;
const MAX_STREAK_BONUS: i64 = 10;
const INCORRECT_POINTS: i64 = 5;
const STREAK_STEP_BPS: u64 = 500;
const MAX_STREAK_MULTIPLIER_BPS: u64 = 15_000;
const BPS: u64 = 10_000;

/// The streak multiplier of a current streak, in basis points.
pub fn streak_multiplier_bps(streak: u32) -> u64 {
    (BPS + STREAK_STEP_BPS * u64::from(streak)).min(MAX_STREAK_MULTIPLIER_BPS)
}

/// A basis-point multiplier as the number it is shown as (15_000 → 1.5).
fn bps_number(bps: u64) -> f64 {
    bps as f64 / BPS as f64
}

fn percent(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (f64::from(part) * 10_000.0 / f64::from(whole)).round() / 100.0
}

/// The profile of backings resolved in this order.
pub fn score(resolved: &[Resolved]) -> Score {
    if resolved.is_empty() {
        return Score {
            score: 0.0,
            tier: Tier::Ember,
            correct: 0,
            incorrect: 0,
            accuracy_rate: 0.0,
            current_streak: 0,
            longest_streak: 0,
            conviction_multiplier: 1.0,
            streak_multiplier: 1.0,
            combined_multiplier: 1.0,
            fee_pct: Tier::Ember.fee_pct(),
            per_category: BTreeMap::new(),
            combined_multiplier_bps: BPS,
        };
    }
    let (mut points, mut streak, mut longest, mut correct, mut incorrect) =
        (0i64, 0u32, 0u32, 0u32, 0u32);
    let mut per_category: BTreeMap<String, CategoryStats> = BTreeMap::new();
    for backing in resolved {
        if backing.correct {
            points += CORRECT_POINTS + (STREAK_BONUS * i64::from(streak)).min(MAX_STREAK_BONUS);
            streak += 1;
            longest = longest.max(streak);
            correct += 1;
        } else {
            points = (points - INCORRECT_POINTS).max(0);
            streak = 0;
            incorrect += 1;
        }
        if let Some(category) = &backing.category {
            let stats = per_category.entry(category.clone()).or_default();
            stats.backed += 1;
            stats.correct += u32::from(backing.correct);
        }
    }
    let score = points as f64;
    let tier = Tier::for_score(score);
    let streak_bps = streak_multiplier_bps(streak);
    let combined_bps = tier.multiplier_bps() * streak_bps / BPS;
    Score {
        score,
        tier,
        correct,
        incorrect,
        accuracy_rate: percent(correct, correct + incorrect),
        current_streak: streak,
        longest_streak: longest,
        conviction_multiplier: tier.multiplier(),
        streak_multiplier: bps_number(streak_bps),
        combined_multiplier: bps_number(combined_bps),
        fee_pct: tier.fee_pct(),
        per_category,
        combined_multiplier_bps: combined_bps,
    }
}

impl From<&ResolvedBacking> for Resolved {
    fn from(row: &ResolvedBacking) -> Self {
        Resolved {
            correct: row.correct(),
            category: row.category.clone(),
        }
    }
}

/// Each wallet's resolved backings among `backers` (every wallet with one when `None`), in the
/// order their markets settled (then by market and side), so that streaks mean consecutive
/// results: one query.
pub async fn histories(
    db: &impl ConnectionTrait,
    backers: Option<Vec<String>>,
) -> Result<BTreeMap<String, Vec<ResolvedBacking>>, DbErr> {
    let mut by_wallet: BTreeMap<String, Vec<ResolvedBacking>> = BTreeMap::new();
    let filter = ResolvedFilter {
        backers,
        ..ResolvedFilter::default()
    };
    for row in resolved_backings(db, filter).await? {
        by_wallet.entry(row.backer.clone()).or_default().push(row);
    }
    Ok(by_wallet)
}

/// The profile of one wallet's history (as [`histories`] orders it).
pub fn score_history(history: &[ResolvedBacking]) -> Score {
    let resolved: Vec<Resolved> = history.iter().map(Resolved::from).collect();
    score(&resolved)
}

/// The scores of `backers` (every wallet with a resolved backing when `None`); a wallet without
/// one is absent (its profile is the zeroed one).
pub async fn scores(
    db: &impl ConnectionTrait,
    backers: Option<Vec<String>>,
) -> Result<BTreeMap<String, Score>, DbErr> {
    Ok(histories(db, backers)
        .await?
        .into_iter()
        .map(|(wallet, history)| {
            let score = score_history(&history);
            (wallet, score)
        })
        .collect())
}

/// The conviction profile of `owner` from the index.
pub async fn wallet_score(db: &impl ConnectionTrait, owner: &Wallet) -> Result<Score, DbErr> {
    let owner = owner.to_string();
    Ok(scores(db, Some(vec![owner.clone()]))
        .await?
        .remove(&owner)
        .unwrap_or_else(|| score(&[])))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pattern: &str) -> Vec<Resolved> {
        pattern
            .chars()
            .map(|c| Resolved {
                correct: c == 'W',
                category: Some("ONCHAIN".into()),
            })
            .collect()
    }

    #[test]
    fn no_resolved_backing_is_the_zeroed_ember_profile() {
        let s = score(&[]);
        assert_eq!((s.score, s.tier, s.fee_pct), (0.0, Tier::Ember, 2.0));
        assert_eq!(
            (
                s.conviction_multiplier,
                s.streak_multiplier,
                s.combined_multiplier
            ),
            (1.0, 1.0, 1.0)
        );
        assert!(s.per_category.is_empty());
    }

    #[test]
    fn streaks_earn_a_capped_bonus_and_losses_reset_them() {
        // 10, 12, 14, then a loss (-5), then 10, 12.
        let s = score(&run("WWWLWW"));
        assert_eq!(s.score, 10.0 + 12.0 + 14.0 - 5.0 + 10.0 + 12.0);
        assert_eq!((s.correct, s.incorrect), (5, 1));
        assert_eq!((s.current_streak, s.longest_streak), (2, 3));
        assert_eq!(s.accuracy_rate, 83.33);
        assert_eq!(s.tier, Tier::Ember);
        assert_eq!(s.streak_multiplier, 1.1);
        // The bonus stops growing after five in a row: 10+12+14+16+18+20+20.
        assert_eq!(score(&run("WWWWWWW")).score, 110.0);
    }

    #[test]
    fn the_score_never_goes_below_zero() {
        let s = score(&run("LLLW"));
        assert_eq!(s.score, 10.0);
        assert_eq!(s.tier, Tier::Initiate);
        assert_eq!(s.accuracy_rate, 25.0);
    }

    #[test]
    fn tiers_multipliers_and_fees_follow_the_thresholds() {
        for (score, tier, multiplier, fee) in [
            (0.0, Tier::Initiate, 1.0, 2.0),
            (49.0, Tier::Initiate, 1.0, 2.0),
            (50.0, Tier::Ember, 1.0, 2.0),
            (100.0, Tier::Flare, 1.1, 1.75),
            (299.0, Tier::Flare, 1.1, 1.75),
            (300.0, Tier::Molten, 1.25, 1.5),
            (600.0, Tier::Core, 1.5, 1.25),
            (900.0, Tier::Volcanic, 2.0, 1.0),
        ] {
            let t = Tier::for_score(score);
            assert_eq!(
                (t, t.multiplier(), t.fee_pct()),
                (tier, multiplier, fee),
                "{score}"
            );
        }
        // A long streak: volcanic's 2.0 times the capped 1.5.
        let s = score(&run(&"W".repeat(60)));
        assert_eq!(s.tier, Tier::Volcanic);
        assert_eq!(s.streak_multiplier, 1.5);
        assert_eq!(s.combined_multiplier, 3.0);
        assert_eq!(s.combined_multiplier_bps, 30_000);
        // Flare with a streak of 8: 1.1 × 1.4, exact in basis points.
        let flare = score(&run(&"W".repeat(8)));
        assert_eq!(flare.tier, Tier::Flare);
        assert_eq!(flare.streak_multiplier, 1.4);
        assert_eq!(flare.combined_multiplier_bps, 15_400);
        assert_eq!(flare.combined_multiplier, 1.54);
    }

    #[test]
    fn categories_are_counted_separately() {
        let mut backings = run("WL");
        backings.push(Resolved {
            correct: true,
            category: Some("SPORTS".into()),
        });
        backings.push(Resolved {
            correct: true,
            category: None,
        });
        let s = score(&backings);
        assert_eq!(
            s.per_category["ONCHAIN"],
            CategoryStats {
                backed: 2,
                correct: 1
            }
        );
        assert_eq!(s.per_category["ONCHAIN"].accuracy(), 50.0);
        assert_eq!(s.per_category["SPORTS"].accuracy(), 100.0);
        assert_eq!(s.per_category.len(), 2);
        assert_eq!(s.correct, 3);
    }
}
