//! Yield-share and split arithmetic, pure so that every rounding edge has a named unit test.
//!
//! Shares: `shares = amount × (shares_total + VIRTUAL_SHARES) / (total_assets + VIRTUAL_ASSETS)`
//! and `assets = shares × (total_assets + VIRTUAL_ASSETS) / (shares_total + VIRTUAL_SHARES)`,
//! both floored, so minting never gives more shares and redeeming never gives more assets than
//! the deposit is worth: rounding favours the vault. `total_assets` is booked internally (by
//! deposits and harvests), never read from the vault balance: lamports sent to a vault change
//! the price only once booked, as yield of the shares already there (by the harvest, or by the
//! next backing before it mints).

use anchor_lang::prelude::*;

use vault_common::{bps_floor, SafeMath};

use crate::constants::*;
use crate::state::ShieldKind;

fn to_u64(value: u128) -> Result<u64> {
    u64::try_from(value).map_err(|_| ProgramError::ArithmeticOverflow.into())
}

/// Shares minted for depositing `amount` into a side holding `total_assets` over
/// `shares_total` shares.
pub fn shares_for_deposit(amount: u64, total_assets: u64, shares_total: u128) -> Result<u128> {
    (amount as u128)
        .safe_mul(shares_total.safe_add(VIRTUAL_SHARES)?)?
        .safe_div((total_assets as u128).safe_add(VIRTUAL_ASSETS)?)
}

/// Assets `shares` are worth in a side holding `total_assets` over `shares_total` shares.
pub fn assets_for_shares(shares: u128, total_assets: u64, shares_total: u128) -> Result<u64> {
    to_u64(
        shares
            .safe_mul((total_assets as u128).safe_add(VIRTUAL_ASSETS)?)?
            .safe_div(shares_total.safe_add(VIRTUAL_SHARES)?)?,
    )
}

/// A claim's yield: what the shares are worth above the principal, capped at the yield the
/// side has realised and not yet paid.
pub fn claim_yield(assets: u64, principal: u64, realised_unpaid: u64) -> u64 {
    assets.saturating_sub(principal).min(realised_unpaid)
}

/// Where the losing side's principal goes at finalisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    /// To the winning backers pro rata (moved into the winning vault).
    pub winner_bonus_pool: u64,
    pub protocol_payout: u64,
    pub treasury_payout: u64,
    pub seam_payout: u64,
}

/// Splits `loser_principal` when `exploit_won` on a shield of `kind` (spec 4.14). Fees are
/// floored; whatever rounding leaves goes to the winning backers' pool, so the parts always
/// sum to the principal.
pub fn split(kind: ShieldKind, exploit_won: bool, loser_principal: u64) -> Result<Split> {
    if !exploit_won {
        return Ok(Split {
            winner_bonus_pool: loser_principal,
            protocol_payout: 0,
            treasury_payout: 0,
            seam_payout: 0,
        });
    }
    let (protocol_bps, treasury_bps) = match kind {
        ShieldKind::Partnership => (PARTNERSHIP_PROTOCOL_BPS, PARTNERSHIP_TREASURY_BPS),
        ShieldKind::Community => (0, COMMUNITY_TREASURY_BPS),
    };
    let protocol_payout = bps_floor(loser_principal, protocol_bps)?;
    let treasury_payout = bps_floor(loser_principal, treasury_bps)?;
    let seam_payout = bps_floor(loser_principal, SEAM_POOL_BPS)?;
    Ok(Split {
        winner_bonus_pool: loser_principal
            .safe_sub(protocol_payout)?
            .safe_sub(treasury_payout)?
            .safe_sub(seam_payout)?,
        protocol_payout,
        treasury_payout,
        seam_payout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOL: u64 = 1_000_000_000;

    #[test]
    fn first_deposit_mints_at_the_virtual_ratio_and_redeems_to_itself() {
        let shares = shares_for_deposit(SOL, 0, 0).unwrap();
        assert_eq!(shares, SOL as u128 * 1_000);
        assert_eq!(assets_for_shares(shares, SOL, shares).unwrap(), SOL);
    }

    #[test]
    fn deposit_after_yield_mints_fewer_shares_and_keeps_earlier_yield() {
        let first = shares_for_deposit(SOL, 0, 0).unwrap();
        // 0.1 SOL of yield harvested: the price rises by 10 %.
        let assets = SOL + SOL / 10;
        let second = shares_for_deposit(SOL, assets, first).unwrap();
        assert!(second < first);
        let total_shares = first + second;
        let total_assets = assets + SOL;
        // The first backer's shares carry the yield, the second's do not (floors only).
        let a = assets_for_shares(first, total_assets, total_shares).unwrap();
        let b = assets_for_shares(second, total_assets, total_shares).unwrap();
        assert_eq!(claim_yield(a, SOL, SOL / 10), SOL / 10 - 1);
        assert!(b <= SOL && SOL - b <= 1, "late backer worth {b}");
        assert!(a + b <= total_assets);
    }

    #[test]
    fn dust_amounts_never_redeem_for_more_than_deposited() {
        for (deposit, assets, shares) in [
            (1u64, 0u64, 0u128),
            (1, 7, 7_000),
            (3, 1_000_003, 999_000_001),
            (2, u32::MAX as u64, 1),
        ] {
            let minted = shares_for_deposit(deposit, assets, shares).unwrap();
            let back = assets_for_shares(minted, assets + deposit, shares + minted).unwrap();
            assert!(back <= deposit, "deposit {deposit} redeemed {back}");
        }
    }

    #[test]
    fn a_large_price_makes_a_tiny_deposit_mint_zero_shares_not_free_ones() {
        // 1 lamport into a side worth 10^12 lamports per share unit mints nothing.
        assert_eq!(shares_for_deposit(1, 1_000_000_000_000, 0).unwrap(), 0);
    }

    #[test]
    fn last_redeemer_cannot_take_more_than_the_side_holds() {
        let s1 = shares_for_deposit(3 * SOL + 7, 0, 0).unwrap();
        let s2 = shares_for_deposit(5 * SOL + 3, 3 * SOL + 7, s1).unwrap();
        let (total_assets, total_shares) = (8 * SOL + 10 + 13, s1 + s2);
        let a1 = assets_for_shares(s1, total_assets, total_shares).unwrap();
        let a2 = assets_for_shares(s2, total_assets - a1, total_shares - s1).unwrap();
        assert!(a1 + a2 <= total_assets);
    }

    #[test]
    fn yield_is_capped_at_what_the_side_realised() {
        assert_eq!(claim_yield(150, 100, 20), 20);
        assert_eq!(claim_yield(110, 100, 20), 10);
        assert_eq!(claim_yield(90, 100, 20), 0);
    }

    #[test]
    fn partnership_exploit_split_matches_the_spec_and_sums_to_the_principal() {
        let s = split(ShieldKind::Partnership, true, 10 * SOL).unwrap();
        assert_eq!(
            (
                s.protocol_payout,
                s.winner_bonus_pool,
                s.treasury_payout,
                s.seam_payout
            ),
            (5 * SOL, 3_500_000_000, 1_200_000_000, 300_000_000)
        );
        let s = split(ShieldKind::Partnership, true, 10_001).unwrap();
        assert_eq!(
            s.protocol_payout + s.winner_bonus_pool + s.treasury_payout + s.seam_payout,
            10_001
        );
        assert_eq!(
            (s.protocol_payout, s.treasury_payout, s.seam_payout),
            (5_000, 1_200, 300)
        );
    }

    #[test]
    fn community_exploit_split_and_safe_win_match_the_spec() {
        let s = split(ShieldKind::Community, true, 10 * SOL).unwrap();
        assert_eq!(
            (
                s.protocol_payout,
                s.winner_bonus_pool,
                s.treasury_payout,
                s.seam_payout
            ),
            (0, 5_800_000_000, 3_900_000_000, 300_000_000)
        );
        let s = split(ShieldKind::Community, false, 7).unwrap();
        assert_eq!(
            (s.winner_bonus_pool, s.treasury_payout, s.seam_payout),
            (7, 0, 0)
        );
    }
}
