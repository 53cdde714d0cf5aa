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
//!   backing of the current streak, at most 1.5; combined = the product. The fee falls with the
//!   tier: 2.0 % up to ember, 1.75 flare, 1.5 molten, 1.25 core, 1.0 volcanic.

use std::collections::{BTreeMap, HashMap};

use narrative_store::entities::{backings, markets, narratives};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use crate::values::Wallet;

/// One resolved backing.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub correct: bool,
    /// The narrative's category, when the market is a narrative.
    pub category: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    Initiate,
    Ember,
    Flare,
    Molten,
    Core,
    Volcanic,
}

impl Tier {
    pub fn for_score(score: f64) -> Tier {
        match score {
            s if s >= 900.0 => Tier::Volcanic,
            s if s >= 600.0 => Tier::Core,
            s if s >= 300.0 => Tier::Molten,
            s if s >= 100.0 => Tier::Flare,
            s if s >= 50.0 => Tier::Ember,
            _ => Tier::Initiate,
        }
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

    pub fn multiplier(self) -> f64 {
        match self {
            Tier::Initiate | Tier::Ember => 1.0,
            Tier::Flare => 1.1,
            Tier::Molten => 1.25,
            Tier::Core => 1.5,
            Tier::Volcanic => 2.0,
        }
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
}

const CORRECT_POINTS: i64 = 10;
const STREAK_BONUS: i64 = 2;
const MAX_STREAK_BONUS: i64 = 10;
const INCORRECT_POINTS: i64 = 5;
const STREAK_STEP: f64 = 0.05;
const MAX_STREAK_MULTIPLIER: f64 = 1.5;

fn percent(part: u32, whole: u32) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (f64::from(part) * 10_000.0 / f64::from(whole)).round() / 100.0
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
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
    let streak_multiplier =
        round4((1.0 + STREAK_STEP * f64::from(streak)).min(MAX_STREAK_MULTIPLIER));
    let combined = round4(tier.multiplier() * streak_multiplier);
    Score {
        score,
        tier,
        correct,
        incorrect,
        accuracy_rate: percent(correct, correct + incorrect),
        current_streak: streak,
        longest_streak: longest,
        conviction_multiplier: tier.multiplier(),
        streak_multiplier,
        combined_multiplier: combined,
        fee_pct: tier.fee_pct(),
        per_category,
    }
}

/// The conviction profile of `owner` from the index: its backings in finalized markets, taken
/// in the order the markets settled so that streaks mean consecutive results.
pub async fn wallet_score(db: &impl ConnectionTrait, owner: &Wallet) -> Result<Score, DbErr> {
    let held = backings::Entity::find()
        .filter(backings::Column::Backer.eq(owner.to_string()))
        .all(db)
        .await?;
    let market_ids: Vec<String> = held.iter().map(|b| b.market_id.clone()).collect();
    let settled: HashMap<String, markets::Model> = markets::Entity::find()
        .filter(markets::Column::MarketId.is_in(market_ids.clone()))
        .filter(markets::Column::Finalized.eq(true))
        .filter(markets::Column::Outcome.is_not_null())
        .all(db)
        .await?
        .into_iter()
        .map(|m| (m.market_id.clone(), m))
        .collect();
    let categories: HashMap<String, String> = narratives::Entity::find()
        .filter(narratives::Column::MarketId.is_in(market_ids))
        .all(db)
        .await?
        .into_iter()
        .map(|n| (n.market_id, n.category))
        .collect();
    let mut resolved: Vec<(i64, String, Resolved)> = held
        .iter()
        .filter_map(|b| {
            let market = settled.get(&b.market_id)?;
            Some((
                market.finalized_at,
                b.market_id.clone(),
                Resolved {
                    correct: market.outcome.as_deref() == Some(b.side.as_str()),
                    category: categories.get(&b.market_id).cloned(),
                },
            ))
        })
        .collect();
    resolved.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let resolved: Vec<Resolved> = resolved.into_iter().map(|(_, _, r)| r).collect();
    Ok(score(&resolved))
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
