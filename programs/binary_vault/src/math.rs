//! Settlement and payout arithmetic, kept pure so that the rounding rules can be unit-tested.
//!
//! Rounding always favours the vault: the forfeit taken from losers is rounded up, and every
//! amount paid out (crucible share, loser refund, winner bonus) is rounded down. Each claim
//! therefore leaves less than one lamport (or base unit) behind, so a market's dust after all
//! claims is below its number of claims.

use anchor_lang::prelude::*;

use vault_common::{bps_ceil, bps_floor, mul_div_floor, SafeMath};

use crate::constants::{ORACLE_STATUS_REFUND, ORACLE_STATUS_RESOLVED};
use crate::error::BinaryError;
use crate::state::{Market, MarketVariant, Side};

/// How a resolved market's losing side is divided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settlement {
    /// Shared among winners pro rata, on top of their principal.
    pub winner_bonus_pool: u64,
    /// Shared among Yield losers pro rata (they keep 1 - capital_loss).
    pub loser_refund_pool: u64,
    /// Sent to crucible_pool at finalisation.
    pub crucible_amount: u64,
}

pub fn settle(
    variant: MarketVariant,
    loser_total: u64,
    capital_loss_bps: u16,
    crucible_share_bps: u16,
) -> Result<Settlement> {
    Ok(match variant {
        MarketVariant::Classic => Settlement {
            winner_bonus_pool: loser_total,
            loser_refund_pool: 0,
            crucible_amount: 0,
        },
        MarketVariant::Yield => {
            let forfeit = bps_ceil(loser_total, capital_loss_bps)?;
            let crucible_amount = bps_floor(forfeit, crucible_share_bps)?;
            Settlement {
                winner_bonus_pool: forfeit.safe_sub(crucible_amount)?,
                loser_refund_pool: loser_total.safe_sub(forfeit)?,
                crucible_amount,
            }
        }
    })
}

/// What one claim pays, by the vault it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Payout {
    /// From the vault of the backing's own side (principal, or a loser's kept share).
    pub from_own_side: u64,
    /// From the opposite vault (a winner's share of the forfeit).
    pub from_other_side: u64,
}

impl Payout {
    pub fn total(&self) -> Result<u64> {
        self.from_own_side.safe_add(self.from_other_side)
    }
}

/// The payout of a backing of `amount` on `side` in a resolved or refunding market.
pub fn claim_payout(market: &Market, side: Side, amount: u64) -> Result<Payout> {
    match market.oracle_status {
        ORACLE_STATUS_REFUND => Ok(Payout {
            from_own_side: amount,
            from_other_side: 0,
        }),
        ORACLE_STATUS_RESOLVED => {
            let outcome = market.outcome.ok_or(BinaryError::NotClaimable)?;
            if side == outcome {
                Ok(Payout {
                    from_own_side: amount,
                    from_other_side: mul_div_floor(
                        amount,
                        market.winner_bonus_pool,
                        market.total(outcome),
                    )?,
                })
            } else {
                require!(
                    market.variant == MarketVariant::Yield,
                    BinaryError::ClassicLoserCannotClaim
                );
                Ok(Payout {
                    from_own_side: mul_div_floor(
                        amount,
                        market.loser_refund_pool,
                        market.total(side),
                    )?,
                    from_other_side: 0,
                })
            }
        }
        _ => err!(BinaryError::NotClaimable),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constants::*;

    fn resolved_market(variant: MarketVariant, yes: u64, no: u64, outcome: Side) -> Market {
        let loser_total = if outcome == Side::Yes { no } else { yes };
        let s = settle(
            variant,
            loser_total,
            DEFAULT_CAPITAL_LOSS_BPS,
            DEFAULT_CRUCIBLE_SHARE_BPS,
        )
        .unwrap();
        Market {
            version: crate::state::MarketVersion::CURRENT,
            market_id: [0; 32],
            creator: Pubkey::default(),
            variant,
            source: crate::state::MarketSource::Seed,
            mint: Pubkey::default(),
            approved: true,
            oracle_status: ORACLE_STATUS_RESOLVED,
            finalized: true,
            outcome: Some(outcome),
            created_at: 0,
            deadline: 0,
            resolution_proposed_at: 0,
            finalized_at: 0,
            yes_total: yes,
            no_total: no,
            yes_backers: 0,
            no_backers: 0,
            yes_votes: 0,
            no_votes: 0,
            total_yield: 0,
            min_backing: MIN_BACKING_LAMPORTS,
            capital_loss_bps: DEFAULT_CAPITAL_LOSS_BPS,
            crucible_share_bps: DEFAULT_CRUCIBLE_SHARE_BPS,
            resolution_timelock_secs: DEFAULT_RESOLUTION_TIMELOCK_SECS,
            max_resolution_delay_secs: 0,
            winner_bonus_pool: s.winner_bonus_pool,
            loser_refund_pool: s.loser_refund_pool,
            crucible_amount: s.crucible_amount,
            total_paid_out: 0,
            claims_count: 0,
            bump: 0,
            yes_vault_bump: 0,
            no_vault_bump: 0,
            oracle_set: crate::state::OracleSet::new(&[Pubkey::new_unique()], 1).unwrap(),
            crucible_forwarded: false,
            dispute_bond_lamports: 1_000_000_000,
        }
    }

    #[test]
    fn yield_settlement_of_one_sol_matches_the_spec_split() {
        let s = settle(MarketVariant::Yield, 1_000_000_000, 3_500, 5_000).unwrap();
        // Losers keep 65 %, 35 % is forfeited, half of it to crucible_pool.
        assert_eq!(s.loser_refund_pool, 650_000_000);
        assert_eq!(s.crucible_amount, 175_000_000);
        assert_eq!(s.winner_bonus_pool, 175_000_000);
    }

    #[test]
    fn yield_forfeit_rounds_up_and_crucible_share_rounds_down() {
        // 35 % of 3 lamports is 1.05: the forfeit is 2; half of it to crucible is exactly 1.
        let s = settle(MarketVariant::Yield, 3, 3_500, 5_000).unwrap();
        assert_eq!(
            (s.loser_refund_pool, s.crucible_amount, s.winner_bonus_pool),
            (1, 1, 1)
        );
        // 35 % of 1 lamport rounds up to the whole lamport; crucible's half of 1 rounds to 0.
        let s = settle(MarketVariant::Yield, 1, 3_500, 5_000).unwrap();
        assert_eq!(
            (s.loser_refund_pool, s.crucible_amount, s.winner_bonus_pool),
            (0, 0, 1)
        );
    }

    #[test]
    fn classic_settlement_gives_the_whole_losing_side_to_winners() {
        let s = settle(MarketVariant::Classic, 777, 3_500, 5_000).unwrap();
        assert_eq!(
            s,
            Settlement {
                winner_bonus_pool: 777,
                loser_refund_pool: 0,
                crucible_amount: 0
            }
        );
    }

    #[test]
    fn winner_gets_principal_plus_pro_rata_bonus() {
        let m = resolved_market(
            MarketVariant::Yield,
            3_000_000_000,
            1_000_000_000,
            Side::Yes,
        );
        let p = claim_payout(&m, Side::Yes, 1_000_000_000).unwrap();
        assert_eq!(p.from_own_side, 1_000_000_000);
        // A third of the 175_000_000 bonus, rounded down.
        assert_eq!(p.from_other_side, 58_333_333);
    }

    #[test]
    fn yield_loser_keeps_sixty_five_percent() {
        let m = resolved_market(
            MarketVariant::Yield,
            3_000_000_000,
            1_000_000_000,
            Side::Yes,
        );
        let p = claim_payout(&m, Side::No, 400_000_000).unwrap();
        assert_eq!(
            p,
            Payout {
                from_own_side: 260_000_000,
                from_other_side: 0
            }
        );
    }

    #[test]
    fn classic_loser_cannot_claim() {
        let m = resolved_market(MarketVariant::Classic, 10, 20, Side::No);
        assert!(claim_payout(&m, Side::Yes, 10).is_err());
    }

    #[test]
    fn refund_pays_full_principal_from_own_side() {
        let mut m = resolved_market(MarketVariant::Yield, 10, 20, Side::No);
        m.oracle_status = ORACLE_STATUS_REFUND;
        let p = claim_payout(&m, Side::Yes, 10).unwrap();
        assert_eq!(p.total().unwrap(), 10);
        assert_eq!(p.from_other_side, 0);
    }

    #[test]
    fn open_market_is_not_claimable() {
        let mut m = resolved_market(MarketVariant::Yield, 10, 20, Side::No);
        m.oracle_status = ORACLE_STATUS_OPEN;
        assert!(claim_payout(&m, Side::No, 20).is_err());
    }

    #[test]
    fn all_claims_leave_less_dust_than_claims_and_never_overdraw() {
        // Awkward amounts so every division leaves a remainder.
        let yes = [10_000_007u64, 33_333_333, 12_345_679];
        let no = [10_000_001u64, 77_777_777, 19_999_999, 10_000_003];
        for variant in [MarketVariant::Yield, MarketVariant::Classic] {
            for outcome in [Side::Yes, Side::No] {
                let m = resolved_market(variant, yes.iter().sum(), no.iter().sum(), outcome);
                let mut paid: u64 = 0;
                let mut claims = 0u64;
                for (side, amounts) in [(Side::Yes, &yes[..]), (Side::No, &no[..])] {
                    for &a in amounts {
                        if let Ok(p) = claim_payout(&m, side, a) {
                            paid += p.total().unwrap();
                            claims += 1;
                        }
                    }
                }
                let backed = m.yes_total + m.no_total;
                let left = backed - paid - m.crucible_amount;
                assert!(paid + m.crucible_amount <= backed);
                assert!(
                    left < claims,
                    "{variant:?} {outcome:?}: dust {left}, claims {claims}"
                );
            }
        }
    }
}
