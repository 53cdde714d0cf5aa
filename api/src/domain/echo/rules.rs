//! How an Echo Pool epoch is split (the rules, also in docs/decisions.md). Pure integer math on
//! lamports; every share rounds down, and what rounding leaves over stays in the epoch, which
//! crucible_pool carries into the next one.
//!
//! 1. **Creator pool.** Each forfeit the epoch received from a market pays that market's creator
//!    its creator share (`creator_share_pct` of spec 2.3b, by the creator's tier: 5–15 %) of the
//!    forfeit. Should the index attribute more than the epoch holds, the shares are scaled down
//!    pro rata.
//! 2. **Conviction pool.** Everything else the epoch holds (the rest of each forfeit, shield
//!    seam shares, what earlier epochs carried in) goes to the wallets whose backings won in a
//!    market settled within the epoch's window, pro rata to `amount × combined multiplier` (the
//!    conviction profile's, in basis points), so conviction, not only size, earns the echo.
//! 3. A wallet's leaf is its conviction plus creator amounts; one claim per wallet per epoch.

use std::collections::BTreeMap;

const BPS: u128 = 10_000;

/// A forfeit the epoch received from a market.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forfeit {
    pub market_id: String,
    pub creator: String,
    pub lamports: u64,
    /// The creator's share of it, in basis points.
    pub creator_share_bps: u64,
}

/// A backing on the winning side of a market settled within the epoch's window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Win {
    pub wallet: String,
    pub market_id: String,
    pub lamports: u64,
    /// The wallet's combined conviction multiplier, in basis points.
    pub multiplier_bps: u64,
}

impl Win {
    pub fn weight(&self) -> u128 {
        u128::from(self.lamports) * u128::from(self.multiplier_bps)
    }
}

/// A wallet's share of the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Share {
    pub conviction: u64,
    pub creator: u64,
}

impl Share {
    /// The Merkle leaf's amount.
    pub fn total(&self) -> u64 {
        self.conviction.saturating_add(self.creator)
    }
}

/// An epoch's split.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Split {
    /// What the epoch held.
    pub available: u64,
    pub creator_pool: u64,
    pub conviction_pool: u64,
    /// Wallets with a share above zero, by wallet.
    pub shares: BTreeMap<String, Share>,
}

impl Split {
    /// What the root distributes; the rest is carried into the next epoch.
    pub fn distributed(&self) -> u64 {
        self.creator_pool.saturating_add(self.conviction_pool)
    }

    pub fn carried(&self) -> u64 {
        self.available.saturating_sub(self.distributed())
    }
}

/// `amount × part / whole`, rounded down; `part ≤ whole` and every value below 2^64 in the
/// callers, so the product fits in a u128.
fn pro_rata(amount: u64, part: u128, whole: u128) -> u64 {
    if whole == 0 {
        return 0;
    }
    (u128::from(amount) * part / whole) as u64
}

/// Bits to drop from weights so that the largest total is below 2^64 (the pro-rata product then
/// fits in a u128). Only the ratios matter, and dropping the same bits from every weight keeps
/// them to within a part in 2^64.
fn weight_shift(total: u128) -> u32 {
    (128 - total.leading_zeros()).saturating_sub(64)
}

pub fn split(available: u64, forfeits: &[Forfeit], wins: &[Win]) -> Split {
    let mut owed: BTreeMap<&str, u128> = BTreeMap::new();
    for forfeit in forfeits {
        let share = u128::from(forfeit.lamports) * u128::from(forfeit.creator_share_bps) / BPS;
        *owed.entry(forfeit.creator.as_str()).or_default() += share;
    }
    let owed_total: u128 = owed.values().sum();
    let mut shares: BTreeMap<String, Share> = BTreeMap::new();
    let mut creator_pool = 0u64;
    // Scaled down pro rata when the index attributes more than the epoch holds.
    let (creator_base, creator_whole) = if owed_total > u128::from(available) {
        (available, owed_total)
    } else {
        (u64::MAX, 0)
    };
    for (creator, share) in owed {
        let amount = if creator_whole == 0 {
            share as u64
        } else {
            let shift = weight_shift(creator_whole);
            pro_rata(creator_base, share >> shift, creator_whole >> shift)
        };
        if amount > 0 {
            shares.entry(creator.to_owned()).or_default().creator = amount;
            creator_pool += amount;
        }
    }

    let budget = available - creator_pool;
    let mut weights: BTreeMap<&str, u128> = BTreeMap::new();
    for win in wins {
        *weights.entry(win.wallet.as_str()).or_default() += win.weight();
    }
    let shift = weight_shift(weights.values().sum());
    let scaled: Vec<(&str, u128)> = weights.into_iter().map(|(w, x)| (w, x >> shift)).collect();
    let whole: u128 = scaled.iter().map(|(_, x)| x).sum();
    let mut conviction_pool = 0u64;
    for (wallet, weight) in scaled {
        let amount = pro_rata(budget, weight, whole);
        if amount > 0 {
            shares.entry(wallet.to_owned()).or_default().conviction = amount;
            conviction_pool += amount;
        }
    }
    Split {
        available,
        creator_pool,
        conviction_pool,
        shares,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(wallet: &str, lamports: u64, multiplier_bps: u64) -> Win {
        Win {
            wallet: wallet.into(),
            market_id: "m".into(),
            lamports,
            multiplier_bps,
        }
    }

    fn forfeit(creator: &str, lamports: u64, bps: u64) -> Forfeit {
        Forfeit {
            market_id: "m".into(),
            creator: creator.into(),
            lamports,
            creator_share_bps: bps,
        }
    }

    #[test]
    fn creators_take_their_share_and_winners_the_rest_by_weight() {
        // 1 SOL forfeited by a market of a 5 % creator; 0.2 SOL carried in.
        let s = split(
            1_200_000_000,
            &[forfeit("c", 1_000_000_000, 500)],
            &[win("a", 3_000, 10_000), win("b", 1_000, 15_000)],
        );
        assert_eq!(s.creator_pool, 50_000_000);
        assert_eq!(s.shares["c"].creator, 50_000_000);
        // 1.15 SOL by weights 30M and 15M: two thirds and one third.
        assert_eq!(s.shares["a"].conviction, 766_666_666);
        assert_eq!(s.shares["b"].conviction, 383_333_333);
        assert_eq!(s.conviction_pool, 1_149_999_999);
        assert_eq!(s.carried(), 1, "rounding stays in the epoch");
        assert_eq!(s.distributed() + s.carried(), s.available);
    }

    #[test]
    fn a_wallet_that_created_and_won_has_one_leaf_of_both() {
        let s = split(
            1_000,
            &[forfeit("a", 1_000, 1_000)],
            &[win("a", 10, 10_000), win("a", 30, 10_000)],
        );
        assert_eq!(s.shares.len(), 1);
        assert_eq!(
            s.shares["a"],
            Share {
                conviction: 900,
                creator: 100
            }
        );
        assert_eq!(s.shares["a"].total(), 1_000);
    }

    #[test]
    fn without_winners_everything_but_the_creator_share_carries_over() {
        let s = split(10_000, &[forfeit("c", 10_000, 1_500)], &[]);
        assert_eq!((s.creator_pool, s.conviction_pool), (1_500, 0));
        assert_eq!(s.carried(), 8_500);
        let empty = split(0, &[], &[win("a", 5, 10_000)]);
        assert!(empty.shares.is_empty());
        assert_eq!(empty.distributed(), 0);
    }

    #[test]
    fn creator_shares_never_exceed_what_the_epoch_holds() {
        // The index attributes 2 × 15 % of 1,000 = 300, the epoch holds 150.
        let s = split(
            150,
            &[forfeit("c", 1_000, 1_500), forfeit("d", 1_000, 1_500)],
            &[win("a", 1, 10_000)],
        );
        assert_eq!(s.shares["c"].creator, 75);
        assert_eq!(s.shares["d"].creator, 75);
        assert_eq!(s.conviction_pool, 0);
        assert!(s.distributed() <= s.available);
    }

    #[test]
    fn huge_weights_do_not_overflow_and_keep_their_ratio() {
        let big = u64::MAX / 2;
        let s = split(
            u64::MAX,
            &[],
            &[win("a", big, 30_000), win("b", big, 10_000)],
        );
        assert!(s.distributed() <= s.available);
        let (a, b) = (s.shares["a"].conviction, s.shares["b"].conviction);
        assert!((a as f64 / b as f64 - 3.0).abs() < 1e-9, "{a} / {b}");
        assert!(s.carried() <= 2, "{}", s.carried());
    }

    /// Whatever the inputs, the split distributes at most what the epoch holds and each share
    /// is its floor: a seeded sweep of random epochs.
    #[test]
    fn random_epochs_never_distribute_more_than_they_hold() {
        let mut seed = 0x5eed_u64;
        let mut next = move |bound: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % bound.max(1)
        };
        for _ in 0..2_000 {
            let available = next(1 << 50);
            let forfeits: Vec<Forfeit> = (0..next(4))
                .map(|i| {
                    forfeit(
                        &format!("c{}", next(3) + i),
                        next(1 << 48),
                        500 + next(1_001),
                    )
                })
                .collect();
            let wins: Vec<Win> = (0..next(6))
                .map(|_| {
                    win(
                        &format!("w{}", next(5)),
                        1 + next(1 << 45),
                        10_000 + next(20_001),
                    )
                })
                .collect();
            let s = split(available, &forfeits, &wins);
            assert!(s.distributed() <= available);
            assert_eq!(
                s.shares.values().map(|x| x.total()).sum::<u64>(),
                s.distributed()
            );
            if !wins.is_empty() {
                // Rounding leaves less than a lamport per party it divides among.
                let parties: std::collections::BTreeSet<&str> = wins
                    .iter()
                    .map(|w| w.wallet.as_str())
                    .chain(forfeits.iter().map(|f| f.creator.as_str()))
                    .collect();
                assert!(s.carried() < parties.len() as u64, "{s:?}");
            }
        }
    }
}
