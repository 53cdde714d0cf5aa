//! `lend_b`: Kamino Lending (klend), devnet-live. Deposits go into the wallet's obligation as
//! collateral (so the borrow issue can borrow against them): the first deposit needs the wallet's
//! user metadata and its vanilla obligation, made in a transaction of their own before the
//! deposit's.
//!
//! Interface pinned from the published IDL (Kamino-Finance/klend-sdk `src/idl/klend.json`,
//! committed at tests/ts/venues/idl/klend.json) and the program's account structs
//! (docs/venues-research.md §2). Anchor 0.29 program: data = sha256("global:<name>")[..8] ‖
//! Borsh arguments; an absent optional account is passed as the program id. The tests in
//! tests/ts build each instruction with `@coral-xyz/anchor` from that IDL and compare bytes.

use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::system_program;
use narrative_sdk::Pubkey;
use poem::http::StatusCode;

use super::{
    above_deposit_limit, anchor_data, anchor_discriminator, fee_on, key_at, le_i64, le_u128,
    le_u32, le_u64, liquidity_insufficient, no_collateral, not_configured, read, read_each,
    too_little_unlent, unreadable, Cluster, Deposit, ExchangeRate, Lender, Loan, LoanRead,
    MarketRead, TokenLeg, Transactions, Venue, VenueToken, CLOCK_SYSVAR, INSTRUCTIONS_SYSVAR,
    RENT_SYSVAR,
};
use crate::chain::holdings::TOKEN_PROGRAM;
use crate::chain::ledger::{decode_clock, Ledger, LedgerAccount};
use crate::error::ApiError;
use crate::values::VenueId;

/// The same id on mainnet and devnet (klend README, `declare_id!`).
pub const PROGRAM: Pubkey = Pubkey::from_str_const("KLend2g3cP87fffoy8q1mQqGKjrxjC8boSyAYavgmjD");
/// Kamino's farms program, named by the v2 deposit and withdrawal.
pub const FARMS_PROGRAM: Pubkey =
    Pubkey::from_str_const("FarmsPZpWu9i7Kky8tPN37rs2TpmMrAZrC7S7vJa91Hr");
/// Interest compounds per slot over this many slots a year (klend `utils/consts.rs`).
pub const SLOTS_PER_YEAR: f64 = 63_072_000.0;

/// `Reserve` (zero-copy, 8 + 8616 bytes) offsets, from the IDL's types.
pub mod reserve {
    pub const LEN: usize = 8624;
    pub const LENDING_MARKET: usize = 32;
    pub const FARM_COLLATERAL: usize = 64;
    pub const LIQUIDITY_MINT: usize = 128;
    pub const LIQUIDITY_SUPPLY: usize = 160;
    pub const FEE_VAULT: usize = 192;
    pub const AVAILABLE_AMOUNT: usize = 224;
    pub const BORROWED_AMOUNT_SF: usize = 232;
    /// `cumulative_borrow_rate_bsf`: a 256-bit fraction; the low 128 bits hold any rate a
    /// reserve reaches (1.0 is 2^60).
    pub const CUMULATIVE_BORROW_RATE: usize = 296;
    pub const ACCUMULATED_PROTOCOL_FEES_SF: usize = 344;
    pub const ACCUMULATED_REFERRER_FEES_SF: usize = 360;
    pub const PENDING_REFERRER_FEES_SF: usize = 376;
    pub const LIQUIDITY_TOKEN_PROGRAM: usize = 408;
    pub const COLLATERAL_MINT: usize = 2560;
    pub const COLLATERAL_MINT_TOTAL_SUPPLY: usize = 2592;
    pub const COLLATERAL_SUPPLY: usize = 2600;
    pub const PROTOCOL_TAKE_RATE_PCT: usize = 4870;
    /// `config.status`: `ReserveStatus` (0 Active, 1 Obsolete, 2 Hidden).
    pub const STATUS: usize = 4856;
    pub const BORROW_RATE_CURVE: usize = 4920;
    /// `config.deposit_limit`: the most liquidity the reserve takes in all, in base units.
    pub const DEPOSIT_LIMIT: usize = 5016;
    /// `config.deposit_withdrawal_cap` (`WithdrawalCaps`): `config_capacity` (i64),
    /// `current_total` (i64), `last_interval_start_timestamp` (u64) and
    /// `config_interval_length_seconds` (u64), in that order.
    pub const DEPOSIT_WITHDRAWAL_CAP: usize = 5416;
    /// `config.debt_withdrawal_cap`: the same, for the liquidity borrows take.
    pub const DEBT_WITHDRAWAL_CAP: usize = 5448;
    /// Within either cap (`WithdrawalCaps`).
    pub mod cap {
        pub const CAPACITY: usize = 0;
        pub const CURRENT_TOTAL: usize = 8;
        pub const INTERVAL_START: usize = 16;
        pub const INTERVAL_SECS: usize = 24;
    }
    /// `config.fees.origination_fee_sf`: the borrow fee, a fraction over 2^60.
    pub const ORIGINATION_FEE_SF: usize = 4896;
    /// `config.borrow_limit`: the most liquidity the reserve lends in all.
    pub const BORROW_LIMIT: usize = 5024;
    /// `config.utilization_limit_block_borrowing_above_pct`: a borrow that would leave the
    /// reserve lent at or above this share of its supply is refused (0: no ceiling).
    pub const UTILIZATION_CEILING_PCT: usize = 5501;
    /// `config.disable_usage_as_coll_outside_emode`: the reserve's collateral backs borrows
    /// only inside an elevation group (non-zero).
    pub const COLLATERAL_EMODE_ONLY: usize = 5500;
    /// `config.elevation_groups`: the elevation groups the reserve is in (0 fills the rest).
    pub const ELEVATION_GROUPS: usize = 5480;
    pub const ELEVATION_GROUP_COUNT: usize = 20;
    /// `config.borrow_limit_outside_elevation_group`: the most the reserve lends to
    /// obligations outside an elevation group (the api's vanilla obligations), in base units.
    pub const BORROW_LIMIT_OUTSIDE_ELEVATION_GROUP: usize = 5504;
    /// `borrowed_amount_outside_elevation_group`: what it has lent to them, in base units.
    pub const BORROWED_OUTSIDE_ELEVATION_GROUP: usize = 6704;
    pub const SCOPE_PRICE_FEED: usize = 5112;
    pub const SWITCHBOARD_PRICE: usize = 5160;
    pub const SWITCHBOARD_TWAP: usize = 5192;
    pub const PYTH_PRICE: usize = 5224;
}

/// `LendingMarket` (zero-copy, 8 + 4656 bytes) offsets: the two switches its owner throws
/// that refuse what the service prepares.
pub mod market {
    pub const LEN: usize = 4664;
    /// `emergency_mode`: every refresh and user instruction is refused (`GlobalEmergencyMode`).
    pub const EMERGENCY_MODE: usize = 122;
    /// `borrow_disabled`: every borrow is refused (`BorrowingDisabled`).
    pub const BORROW_DISABLED: usize = 124;
}

/// `Obligation` (8 + 3336 bytes) offsets.
pub mod obligation {
    pub const LEN: usize = 3344;
    pub const DEPOSITS: usize = 96;
    pub const DEPOSIT_STRIDE: usize = 136;
    pub const DEPOSIT_COUNT: usize = 8;
    /// Within a deposit entry (`ObligationCollateral`): its reserve and the collateral units.
    pub const DEPOSIT_RESERVE: usize = 0;
    pub const DEPOSITED_AMOUNT: usize = 32;
    pub const BORROWS: usize = 1208;
    pub const BORROW_STRIDE: usize = 200;
    pub const BORROW_COUNT: usize = 5;
    /// Within a borrow entry (`ObligationLiquidity`): its reserve, the reserve's cumulative
    /// borrow rate at the entry's last refresh, and the debt in fractions.
    pub const BORROW_RESERVE: usize = 0;
    pub const BORROW_RATE: usize = 32;
    pub const BORROWED_AMOUNT_SF: usize = 88;
    /// The elevation group its owner put it in (0: none; Kamino's app can set one on the
    /// same vanilla obligation the service uses).
    pub const ELEVATION_GROUP: usize = 2285;
}

/// Fractions (`*_sf`) are U68F60: a u128 over 2^60.
const FRACTION_ONE: u128 = 1 << 60;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reserve {
    pub lending_market: Pubkey,
    pub farm_collateral: Pubkey,
    pub liquidity_mint: Pubkey,
    pub liquidity_supply: Pubkey,
    /// Where borrow fees go.
    pub fee_vault: Pubkey,
    pub liquidity_token_program: Pubkey,
    pub available: u64,
    pub borrowed_sf: u128,
    /// What a unit borrowed at the reserve's start owes now, in fractions (2^60 is 1.0).
    pub cumulative_borrow_rate: u128,
    pub fees_sf: u128,
    pub collateral_mint: Pubkey,
    pub collateral_supply_total: u64,
    pub collateral_supply: Pubkey,
    pub protocol_take_rate_pct: u8,
    /// (utilisation bps, borrow rate bps), eleven points.
    pub curve: Vec<(u32, u32)>,
    /// Pyth, Switchboard price, Switchboard TWAP, Scope (zero = none).
    pub oracles: [Pubkey; 4],
    /// `ReserveStatus::Obsolete`: the program refuses deposits (`ReserveObsolete`).
    pub obsolete: bool,
    /// The most liquidity the reserve takes in all (`config.deposit_limit`, base units).
    pub deposit_limit: u64,
    /// How much liquidity may leave the reserve through withdrawals in an interval.
    pub withdrawal_cap: WithdrawalCap,
    /// The same through borrows (`config.debt_withdrawal_cap`).
    pub debt_cap: WithdrawalCap,
    /// The most the reserve lends in all (`config.borrow_limit`, base units).
    pub borrow_limit: u64,
    /// The borrow fee (`config.fees.origination_fee_sf`, a fraction over 2^60).
    pub origination_fee_sf: u64,
    /// The utilisation in per cent at or above which a borrow is refused (0: none).
    pub utilization_ceiling_pct: u8,
    /// What the reserve lends in all to obligations outside an elevation group, at most and
    /// now (base units).
    pub borrow_limit_outside_groups: u64,
    pub borrowed_outside_groups: u64,
    /// Its collateral backs borrows only inside an elevation group: an obligation in none that
    /// holds it cannot borrow, and one that owes cannot take it in.
    pub collateral_emode_only: bool,
    /// The elevation groups it is in (none is 0).
    pub elevation_groups: [u8; reserve::ELEVATION_GROUP_COUNT],
}

/// The lending market's switches, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LendingMarket {
    /// Every refresh and user instruction is refused.
    pub emergency: bool,
    /// Every borrow is refused.
    pub borrow_disabled: bool,
}

impl LendingMarket {
    pub fn decode(data: &[u8]) -> Option<LendingMarket> {
        use market::*;
        if data.len() != LEN || data[..8] != anchor_discriminator("account:LendingMarket") {
            return None;
        }
        Some(LendingMarket {
            emergency: data[EMERGENCY_MODE] != 0,
            borrow_disabled: data[BORROW_DISABLED] != 0,
        })
    }
}

/// A reserve's `deposit_withdrawal_cap`: withdrawals add the liquidity they take to
/// `current_total`, deposits take theirs off it, and a withdrawal that would bring it past
/// `capacity` within the interval is refused (`WithdrawalCapReached`). The total starts again at
/// 0 with the first withdrawal or deposit once the interval is over. An interval of 0 seconds
/// sets no cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WithdrawalCap {
    pub capacity: i64,
    pub current_total: i64,
    pub interval_start: u64,
    pub interval_secs: u64,
}

/// What a withdrawal cap leaves at a moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapWindow {
    /// The most liquidity a withdrawal may take now (base units).
    pub room: u64,
    /// Seconds until the interval is over and the total starts again.
    pub resets_in: u64,
}

impl WithdrawalCap {
    fn decode(data: &[u8], at: usize) -> Option<WithdrawalCap> {
        use reserve::cap::*;
        Some(WithdrawalCap {
            capacity: le_i64(data, at + CAPACITY)?,
            current_total: le_i64(data, at + CURRENT_TOTAL)?,
            interval_start: le_u64(data, at + INTERVAL_START)?,
            interval_secs: le_u64(data, at + INTERVAL_SECS)?,
        })
    }

    /// Whether it caps anything (an interval is set).
    pub fn is_on(&self) -> bool {
        self.interval_secs != 0
    }

    /// The window as the program would see it at `now` (the ledger's unix time): None when the
    /// cap is off. As `check_and_update_withdrawal_caps` does, an interval that is over counts
    /// from 0 again; a negative capacity lets nothing out. A start after `now` (a clock read
    /// behind the program's) counts as the current interval.
    pub fn window(&self, now: i64) -> Option<CapWindow> {
        if !self.is_on() {
            return None;
        }
        let now = u64::try_from(now).unwrap_or(0);
        let over = now >= self.interval_start && now - self.interval_start >= self.interval_secs;
        let (total, resets_in) = if over {
            (0, self.interval_secs)
        } else {
            let ends = self.interval_start.saturating_add(self.interval_secs);
            (self.current_total, ends.saturating_sub(now))
        };
        let room = if self.capacity < 0 {
            0
        } else {
            u64::try_from(i128::from(self.capacity) - i128::from(total)).unwrap_or(0)
        };
        Some(CapWindow { room, resets_in })
    }
}

/// Where `amount` base units on top of `used_sf` (a fraction) would pass `limit` (base units),
/// compared in fractions as klend compares them: the whole base units that still fit.
fn room_if_past(limit: u64, used_sf: u128, amount: u64) -> Option<u64> {
    let limit_sf = u128::from(limit).saturating_mul(FRACTION_ONE);
    let after_sf = used_sf.saturating_add(u128::from(amount).saturating_mul(FRACTION_ONE));
    (after_sf > limit_sf).then(|| {
        let room = limit_sf.saturating_sub(used_sf) / FRACTION_ONE;
        u64::try_from(room).unwrap_or(u64::MAX)
    })
}

/// `ReserveStatus::Obsolete`.
const STATUS_OBSOLETE: u8 = 1;

/// Why Kamino would refuse a deposit into a reserve as it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The reserve is marked obsolete (`ReserveObsolete`).
    Obsolete,
    /// The deposit would take the reserve's supply past its deposit limit
    /// (`DepositLimitExceeded`); `room` base units still fit.
    AboveDepositLimit { room: u64 },
    /// The reserve's collateral backs borrows only inside an elevation group and the wallet's
    /// obligation, in none, owes (`DepositDisabledOutsideElevationGroup`).
    CollateralOutsideGroups,
    /// The wallet's obligation is in elevation group `group`, which the reserve is not in
    /// (`InconsistentElevationGroup`).
    OutsideObligationGroup { group: u8 },
}

/// Why Kamino would refuse liquidity leaving a reserve (a withdrawal or a borrow) as it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutflowRefusal {
    /// Too little of its liquidity is unlent (`InsufficientLiquidity`).
    Illiquid,
    /// The interval's cap leaves less than the outflow until the interval is over
    /// (`WithdrawalCapReached`).
    Capped(CapWindow),
    /// The borrow would take what the reserve lends past its borrow limit
    /// (`BorrowLimitExceeded`); `room` base units still fit.
    AboveBorrowLimit { room: u64 },
    /// The borrow would leave the reserve lent at or above its utilisation ceiling
    /// (`BorrowingAboveUtilizationRateDisabled`); a borrow of `room` base units, with its
    /// origination fee, stays below it.
    AboveUtilizationCeiling { room: u64 },
    /// The borrow, with its fee, would take what the reserve lends to obligations outside an
    /// elevation group past its limit for them (`BorrowLimitExceeded`); `room` base units,
    /// with their fee, still fit. A limit of 0 lends only within elevation groups.
    AboveLimitOutsideGroups { room: u64 },
}

impl Reserve {
    pub fn decode(data: &[u8]) -> Option<Reserve> {
        use reserve::*;
        if data.len() != LEN || data[..8] != anchor_discriminator("account:Reserve") {
            return None;
        }
        let fees = le_u128(data, ACCUMULATED_PROTOCOL_FEES_SF)?
            .saturating_add(le_u128(data, ACCUMULATED_REFERRER_FEES_SF)?)
            .saturating_add(le_u128(data, PENDING_REFERRER_FEES_SF)?);
        let curve = (0..11)
            .map(|i| {
                let at = BORROW_RATE_CURVE + i * 8;
                Some((le_u32(data, at)?, le_u32(data, at + 4)?))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Reserve {
            lending_market: key_at(data, LENDING_MARKET)?,
            farm_collateral: key_at(data, FARM_COLLATERAL)?,
            liquidity_mint: key_at(data, LIQUIDITY_MINT)?,
            liquidity_supply: key_at(data, LIQUIDITY_SUPPLY)?,
            fee_vault: key_at(data, FEE_VAULT)?,
            liquidity_token_program: key_at(data, LIQUIDITY_TOKEN_PROGRAM)?,
            available: le_u64(data, AVAILABLE_AMOUNT)?,
            borrowed_sf: le_u128(data, BORROWED_AMOUNT_SF)?,
            cumulative_borrow_rate: le_u128(data, CUMULATIVE_BORROW_RATE)?,
            fees_sf: fees,
            collateral_mint: key_at(data, COLLATERAL_MINT)?,
            collateral_supply_total: le_u64(data, COLLATERAL_MINT_TOTAL_SUPPLY)?,
            collateral_supply: key_at(data, COLLATERAL_SUPPLY)?,
            protocol_take_rate_pct: data[PROTOCOL_TAKE_RATE_PCT],
            curve,
            oracles: [
                key_at(data, PYTH_PRICE)?,
                key_at(data, SWITCHBOARD_PRICE)?,
                key_at(data, SWITCHBOARD_TWAP)?,
                key_at(data, SCOPE_PRICE_FEED)?,
            ],
            obsolete: *data.get(STATUS)? == STATUS_OBSOLETE,
            deposit_limit: le_u64(data, DEPOSIT_LIMIT)?,
            withdrawal_cap: WithdrawalCap::decode(data, DEPOSIT_WITHDRAWAL_CAP)?,
            debt_cap: WithdrawalCap::decode(data, DEBT_WITHDRAWAL_CAP)?,
            borrow_limit: le_u64(data, BORROW_LIMIT)?,
            origination_fee_sf: le_u64(data, ORIGINATION_FEE_SF)?,
            utilization_ceiling_pct: *data.get(UTILIZATION_CEILING_PCT)?,
            borrow_limit_outside_groups: le_u64(data, BORROW_LIMIT_OUTSIDE_ELEVATION_GROUP)?,
            borrowed_outside_groups: le_u64(data, BORROWED_OUTSIDE_ELEVATION_GROUP)?,
            collateral_emode_only: *data.get(COLLATERAL_EMODE_ONLY)? != 0,
            elevation_groups: data
                .get(ELEVATION_GROUPS..ELEVATION_GROUPS + ELEVATION_GROUP_COUNT)?
                .try_into()
                .ok()?,
        })
    }

    /// Refuses a deposit of `amount` into an obligation (`into`; none yet before the first) as
    /// `deposit_reserve_liquidity` and then `deposit_obligation_collateral` would against the
    /// reserve as read: an obsolete reserve, a supply past the deposit limit
    /// (`lending_operations.rs`: amount + total supply > limit, compared in fractions),
    /// collateral that backs borrows only inside an elevation group going into an obligation in
    /// none that owes, or an obligation in an elevation group the reserve is not in. The refresh
    /// in the same transaction adds the interest accrued since, so a deposit at the very edge of
    /// the limit can still be refused on chain.
    pub fn check_deposit(&self, amount: u64, into: Option<&Obligation>) -> Result<(), Refusal> {
        if self.obsolete {
            return Err(Refusal::Obsolete);
        }
        if let Some(room) = room_if_past(self.deposit_limit, self.total_supply_sf(), amount) {
            return Err(Refusal::AboveDepositLimit { room });
        }
        let Some(obligation) = into else {
            return Ok(());
        };
        match obligation.elevation_group {
            0 if self.collateral_emode_only && !obligation.borrows.is_empty() => {
                Err(Refusal::CollateralOutsideGroups)
            }
            0 => Ok(()),
            group if !self.elevation_groups.contains(&group) => {
                Err(Refusal::OutsideObligationGroup { group })
            }
            _ => Ok(()),
        }
    }

    /// Refuses a withdrawal paying `payout` base units as `redeem_reserve_collateral` would at
    /// the ledger's time `now`: more than the reserve holds unlent (`InsufficientLiquidity`), or
    /// past its withdrawal cap for the interval (`WithdrawalCapReached`).
    pub fn check_withdrawal(&self, payout: u64, now: i64) -> Result<(), OutflowRefusal> {
        self.check_outflow(payout, &self.withdrawal_cap, now)
    }

    /// `taken` base units leaving the reserve, against its unlent liquidity and then `cap`'s
    /// interval at `now`.
    fn check_outflow(
        &self,
        taken: u64,
        cap: &WithdrawalCap,
        now: i64,
    ) -> Result<(), OutflowRefusal> {
        if taken > self.available {
            return Err(OutflowRefusal::Illiquid);
        }
        match cap.window(now) {
            Some(window) if taken > window.room => Err(OutflowRefusal::Capped(window)),
            _ => Ok(()),
        }
    }

    /// The origination fee klend adds to a borrow of `amount` (`calculate_borrow_fees`,
    /// exclusive, no referrer): the amount times the fee, rounded to the nearest base unit and
    /// at least 1 where there is a fee.
    pub fn origination_fee(&self, amount: u64) -> u64 {
        fee_on(amount, self.origination_fee_sf, FRACTION_ONE, 1)
    }

    /// Refuses a borrow of `amount` as `borrow_obligation_liquidity` would at the ledger's time
    /// `now` (read only where the debt cap is on; otherwise it does not matter): past the
    /// borrow limit (the amount against what is lent, fees aside), then the amount with its
    /// origination fee against the unlent liquidity, the debt cap's interval, the utilisation
    /// ceiling and what the reserve lends outside elevation groups. What the obligation's
    /// collateral allows is the borrow flow's own check.
    pub fn check_borrow(&self, amount: u64, now: i64) -> Result<(), OutflowRefusal> {
        if let Some(room) = room_if_past(self.borrow_limit, self.borrowed_sf, amount) {
            return Err(OutflowRefusal::AboveBorrowLimit { room });
        }
        let taken = amount.saturating_add(self.origination_fee(amount));
        self.check_outflow(taken, &self.debt_cap, now)?;
        if let Some(most) = self.lendable_below_ceiling() {
            if taken > most {
                return Err(OutflowRefusal::AboveUtilizationCeiling {
                    room: self.amount_within(most),
                });
            }
        }
        // `update_elevation_group_debt_trackers_on_borrow`, for an obligation in no group.
        let most = self
            .borrow_limit_outside_groups
            .saturating_sub(self.borrowed_outside_groups);
        if taken > most {
            return Err(OutflowRefusal::AboveLimitOutsideGroups {
                room: self.amount_within(most),
            });
        }
        Ok(())
    }

    /// A borrow whose amount and origination fee together take at most `most`: the fee only
    /// grows with the amount, so `most` less its own fee fits.
    fn amount_within(&self, most: u64) -> u64 {
        most.saturating_sub(self.origination_fee(most))
    }

    /// The most a borrow may take out of the reserve (amount and fee) and leave it lent below
    /// its utilisation ceiling; `None` without one. klend checks the utilisation after the
    /// borrow: what is lent grows by what the borrow takes and the unlent liquidity falls by
    /// as much, so the supply is unchanged and the borrow is refused once
    /// `(borrowed + taken) / supply ≥ pct / 100`. Compared here exactly, in fractions; the
    /// program rounds both sides to 60 bits, which can differ only within 2^-60 of the ceiling.
    fn lendable_below_ceiling(&self) -> Option<u64> {
        let pct = u128::from(self.utilization_ceiling_pct);
        if pct == 0 {
            return None;
        }
        // ceil(supply × pct / 100), without overflow: supply = 100q + r.
        let supply = self.total_supply_sf();
        let (q, r) = (supply / 100, supply % 100);
        let ceiling_sf = (q * pct).saturating_add((r * pct).div_ceil(100));
        // The largest whole `taken` with borrowed + taken × 2^60 < ceiling.
        let below = ceiling_sf.saturating_sub(self.borrowed_sf);
        Some(match below {
            0 => 0,
            _ => u64::try_from((below - 1) / FRACTION_ONE).unwrap_or(u64::MAX),
        })
    }

    /// Total supply in fractions: available plus borrowed, less the fees owed out of it
    /// (`ReserveLiquidity::total_supply`).
    fn total_supply_sf(&self) -> u128 {
        (self.available as u128)
            .saturating_mul(FRACTION_ONE)
            .saturating_add(self.borrowed_sf)
            .saturating_sub(self.fees_sf)
    }

    pub fn rate(&self) -> ExchangeRate {
        let total = self.total_supply_sf();
        if self.collateral_supply_total == 0 || total == 0 {
            return ExchangeRate::PAR;
        }
        ExchangeRate {
            liquidity: total,
            receipt: (self.collateral_supply_total as u128).saturating_mul(FRACTION_ONE),
        }
    }

    pub fn utilization(&self) -> f64 {
        let total = self.total_supply_sf();
        if total == 0 {
            return 0.0;
        }
        (self.borrowed_sf as f64 / total as f64).min(1.0)
    }

    /// The borrow APR in percent: the curve interpolated at the utilisation.
    pub fn borrow_apr_pct(&self) -> f64 {
        let u_bps = self.utilization() * 10_000.0;
        for pair in self.curve.windows(2) {
            let ((u0, r0), (u1, r1)) = (pair[0], pair[1]);
            if u_bps <= f64::from(u1) {
                if u1 == u0 {
                    return f64::from(r1) / 100.0;
                }
                let share = (u_bps - f64::from(u0)) / f64::from(u1 - u0);
                return (f64::from(r0) + share * (f64::from(r1) - f64::from(r0))) / 100.0;
            }
        }
        self.curve
            .last()
            .map_or(0.0, |(_, r)| f64::from(*r) / 100.0)
    }

    /// Supply APY in percent (klend-sdk `calculateSupplyAPR`, compounded per slot).
    pub fn supply_apy_pct(&self) -> f64 {
        let apr = self.borrow_apr_pct() / 100.0
            * self.utilization()
            * (1.0 - f64::from(self.protocol_take_rate_pct) / 100.0);
        ((1.0 + apr / SLOTS_PER_YEAR).powf(SLOTS_PER_YEAR) - 1.0) * 100.0
    }
}

/// An obligation's deposits (reserve, collateral amount) and borrows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Obligation {
    pub deposits: Vec<(Pubkey, u64)>,
    pub borrows: Vec<ObligationBorrow>,
    /// The elevation group it is in (0: none, as the service leaves it).
    pub elevation_group: u8,
}

/// A debt of an obligation to one reserve, as of the obligation's last refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObligationBorrow {
    pub reserve: Pubkey,
    /// The reserve's cumulative borrow rate at that refresh.
    pub rate: u128,
    pub borrowed_sf: u128,
}

impl ObligationBorrow {
    /// What it owes at the reserve's cumulative rate `now_rate`, in base units, rounded up (the
    /// program grows each debt by the rate's growth since the entry's refresh).
    pub fn owed_at(&self, now_rate: u128) -> u64 {
        let scaled = if self.rate == 0 || now_rate <= self.rate {
            self.borrowed_sf
        } else {
            // Whole units and the fraction apart, so nothing overflows.
            let ratio = (now_rate << 60) / self.rate;
            let whole = self.borrowed_sf >> 60;
            let part = self.borrowed_sf & (FRACTION_ONE - 1);
            whole
                .saturating_mul(ratio)
                .saturating_add((part * ratio).div_ceil(FRACTION_ONE))
        };
        u64::try_from(scaled.div_ceil(FRACTION_ONE)).unwrap_or(u64::MAX)
    }
}

impl Obligation {
    pub fn decode(data: &[u8]) -> Option<Obligation> {
        use obligation::*;
        if data.len() != LEN || data[..8] != anchor_discriminator("account:Obligation") {
            return None;
        }
        let mut found = Obligation {
            elevation_group: *data.get(ELEVATION_GROUP)?,
            ..Obligation::default()
        };
        for i in 0..DEPOSIT_COUNT {
            let at = DEPOSITS + i * DEPOSIT_STRIDE;
            let reserve = key_at(data, at + DEPOSIT_RESERVE)?;
            if reserve != Pubkey::default() {
                found
                    .deposits
                    .push((reserve, le_u64(data, at + DEPOSITED_AMOUNT)?));
            }
        }
        for i in 0..BORROW_COUNT {
            let at = BORROWS + i * BORROW_STRIDE;
            let reserve = key_at(data, at + BORROW_RESERVE)?;
            if reserve != Pubkey::default() {
                found.borrows.push(ObligationBorrow {
                    reserve,
                    rate: le_u128(data, at + BORROW_RATE)?,
                    borrowed_sf: le_u128(data, at + BORROWED_AMOUNT_SF)?,
                });
            }
        }
        Some(found)
    }

    /// Every reserve the obligation names, deposits first (the order refresh_obligation
    /// takes them in).
    fn reserves(&self) -> Vec<Pubkey> {
        self.deposits
            .iter()
            .map(|(r, _)| *r)
            .chain(self.borrows.iter().map(|b| b.reserve))
            .collect()
    }
}

pub fn market_authority(market: &Pubkey) -> Pubkey {
    narrative_sdk::derive::find_program_address(&[b"lma", market.as_ref()], &PROGRAM).0
}

pub fn user_metadata(owner: &Pubkey) -> Pubkey {
    narrative_sdk::derive::find_program_address(&[b"user_meta", owner.as_ref()], &PROGRAM).0
}

/// The vanilla obligation (tag 0, id 0, both seed accounts the default key).
pub fn vanilla_obligation(owner: &Pubkey, market: &Pubkey) -> Pubkey {
    let zero = Pubkey::default();
    narrative_sdk::derive::find_program_address(
        &[
            &[0u8],
            &[0u8],
            owner.as_ref(),
            market.as_ref(),
            zero.as_ref(),
            zero.as_ref(),
        ],
        &PROGRAM,
    )
    .0
}

/// An optional account: its key, or the program's id standing for "none".
fn optional(key: Pubkey, writable: bool) -> AccountMeta {
    if key == Pubkey::default() {
        AccountMeta::new_readonly(PROGRAM, false)
    } else if writable {
        AccountMeta::new(key, false)
    } else {
        AccountMeta::new_readonly(key, false)
    }
}

pub fn init_user_metadata(owner: &Pubkey) -> Instruction {
    Instruction {
        program_id: PROGRAM,
        accounts: vec![
            AccountMeta::new_readonly(*owner, true),
            AccountMeta::new(*owner, true),
            AccountMeta::new(user_metadata(owner), false),
            optional(Pubkey::default(), false),
            AccountMeta::new_readonly(RENT_SYSVAR, false),
            AccountMeta::new_readonly(system_program::ID, false),
        ],
        // user_lookup_table: not checked by the program; none.
        data: anchor_data("init_user_metadata", Pubkey::default().as_ref()),
    }
}

pub fn init_obligation(owner: &Pubkey, market: &Pubkey) -> Instruction {
    Instruction {
        program_id: PROGRAM,
        accounts: vec![
            AccountMeta::new_readonly(*owner, true),
            AccountMeta::new(*owner, true),
            AccountMeta::new(vanilla_obligation(owner, market), false),
            AccountMeta::new_readonly(*market, false),
            AccountMeta::new_readonly(Pubkey::default(), false),
            AccountMeta::new_readonly(Pubkey::default(), false),
            AccountMeta::new_readonly(user_metadata(owner), false),
            AccountMeta::new_readonly(RENT_SYSVAR, false),
            AccountMeta::new_readonly(system_program::ID, false),
        ],
        // InitObligationArgs { tag: 0, id: 0 }
        data: anchor_data("init_obligation", &[0, 0]),
    }
}

pub fn refresh_reserve(address: &Pubkey, reserve: &Reserve) -> Instruction {
    let mut accounts = vec![
        AccountMeta::new(*address, false),
        AccountMeta::new_readonly(reserve.lending_market, false),
    ];
    accounts.extend(reserve.oracles.iter().map(|o| optional(*o, false)));
    Instruction {
        program_id: PROGRAM,
        accounts,
        data: anchor_data("refresh_reserve", &[]),
    }
}

pub fn refresh_obligation(
    market: &Pubkey,
    obligation: &Pubkey,
    reserves: &[Pubkey],
) -> Instruction {
    let mut accounts = vec![
        AccountMeta::new_readonly(*market, false),
        AccountMeta::new(*obligation, false),
    ];
    accounts.extend(
        reserves
            .iter()
            .map(|r| AccountMeta::new_readonly(*r, false)),
    );
    Instruction {
        program_id: PROGRAM,
        accounts,
        data: anchor_data("refresh_obligation", &[]),
    }
}

/// `deposit_reserve_liquidity_and_obligation_collateral_v2` of `amount` from `source`.
pub fn deposit_v2(
    owner: &Pubkey,
    address: &Pubkey,
    reserve: &Reserve,
    source: &Pubkey,
    amount: u64,
) -> Instruction {
    let market = reserve.lending_market;
    Instruction {
        program_id: PROGRAM,
        accounts: vec![
            AccountMeta::new(*owner, true),
            AccountMeta::new(vanilla_obligation(owner, &market), false),
            AccountMeta::new_readonly(market, false),
            AccountMeta::new_readonly(market_authority(&market), false),
            AccountMeta::new(*address, false),
            AccountMeta::new_readonly(reserve.liquidity_mint, false),
            AccountMeta::new(reserve.liquidity_supply, false),
            AccountMeta::new(reserve.collateral_mint, false),
            AccountMeta::new(reserve.collateral_supply, false),
            AccountMeta::new(*source, false),
            optional(Pubkey::default(), false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
            AccountMeta::new_readonly(reserve.liquidity_token_program, false),
            AccountMeta::new_readonly(INSTRUCTIONS_SYSVAR, false),
            // No farm on the reserve: both farm accounts absent (a reserve with a farm is
            // refused before building, see `LendB::reserve`).
            optional(Pubkey::default(), true),
            optional(Pubkey::default(), true),
            AccountMeta::new_readonly(FARMS_PROGRAM, false),
        ],
        data: anchor_data(
            "deposit_reserve_liquidity_and_obligation_collateral_v2",
            &amount.to_le_bytes(),
        ),
    }
}

/// `withdraw_obligation_collateral_and_redeem_reserve_collateral_v2` of `collateral` to
/// `destination`.
pub fn withdraw_v2(
    owner: &Pubkey,
    address: &Pubkey,
    reserve: &Reserve,
    destination: &Pubkey,
    collateral: u64,
) -> Instruction {
    let market = reserve.lending_market;
    Instruction {
        program_id: PROGRAM,
        accounts: vec![
            AccountMeta::new(*owner, true),
            AccountMeta::new(vanilla_obligation(owner, &market), false),
            AccountMeta::new_readonly(market, false),
            AccountMeta::new_readonly(market_authority(&market), false),
            AccountMeta::new(*address, false),
            AccountMeta::new_readonly(reserve.liquidity_mint, false),
            AccountMeta::new(reserve.collateral_supply, false),
            AccountMeta::new(reserve.collateral_mint, false),
            AccountMeta::new(reserve.liquidity_supply, false),
            AccountMeta::new(*destination, false),
            optional(Pubkey::default(), false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
            AccountMeta::new_readonly(reserve.liquidity_token_program, false),
            AccountMeta::new_readonly(INSTRUCTIONS_SYSVAR, false),
            optional(Pubkey::default(), true),
            optional(Pubkey::default(), true),
            AccountMeta::new_readonly(FARMS_PROGRAM, false),
        ],
        data: anchor_data(
            "withdraw_obligation_collateral_and_redeem_reserve_collateral_v2",
            &collateral.to_le_bytes(),
        ),
    }
}

/// `borrow_obligation_liquidity_v2` of `amount` to `destination` (the owner's token account).
pub fn borrow_v2(
    owner: &Pubkey,
    address: &Pubkey,
    reserve: &Reserve,
    destination: &Pubkey,
    amount: u64,
) -> Instruction {
    let market = reserve.lending_market;
    Instruction {
        program_id: PROGRAM,
        accounts: vec![
            AccountMeta::new_readonly(*owner, true),
            AccountMeta::new(vanilla_obligation(owner, &market), false),
            AccountMeta::new_readonly(market, false),
            AccountMeta::new_readonly(market_authority(&market), false),
            AccountMeta::new(*address, false),
            AccountMeta::new_readonly(reserve.liquidity_mint, false),
            AccountMeta::new(reserve.liquidity_supply, false),
            AccountMeta::new(reserve.fee_vault, false),
            AccountMeta::new(*destination, false),
            // No referrer.
            optional(Pubkey::default(), true),
            AccountMeta::new_readonly(reserve.liquidity_token_program, false),
            AccountMeta::new_readonly(INSTRUCTIONS_SYSVAR, false),
            optional(Pubkey::default(), true),
            optional(Pubkey::default(), true),
            AccountMeta::new_readonly(FARMS_PROGRAM, false),
        ],
        data: anchor_data("borrow_obligation_liquidity_v2", &amount.to_le_bytes()),
    }
}

/// `repay_obligation_liquidity_v2` of `amount` (`u64::MAX`: all that is owed) from `source`.
pub fn repay_v2(
    owner: &Pubkey,
    address: &Pubkey,
    reserve: &Reserve,
    source: &Pubkey,
    amount: u64,
) -> Instruction {
    let market = reserve.lending_market;
    Instruction {
        program_id: PROGRAM,
        accounts: vec![
            AccountMeta::new_readonly(*owner, true),
            AccountMeta::new(vanilla_obligation(owner, &market), false),
            AccountMeta::new_readonly(market, false),
            AccountMeta::new(*address, false),
            AccountMeta::new_readonly(reserve.liquidity_mint, false),
            AccountMeta::new(reserve.liquidity_supply, false),
            AccountMeta::new(*source, false),
            AccountMeta::new_readonly(reserve.liquidity_token_program, false),
            AccountMeta::new_readonly(INSTRUCTIONS_SYSVAR, false),
            optional(Pubkey::default(), true),
            optional(Pubkey::default(), true),
            AccountMeta::new_readonly(market_authority(&market), false),
            AccountMeta::new_readonly(FARMS_PROGRAM, false),
        ],
        data: anchor_data("repay_obligation_liquidity_v2", &amount.to_le_bytes()),
    }
}

/// The venue: a lending market and one reserve per token.
pub struct LendB {
    pub market: Pubkey,
    pub reserves: Vec<(VenueToken, Pubkey)>,
}

impl LendB {
    fn reserve_of(&self, token: &VenueToken) -> Result<Pubkey, ApiError> {
        self.reserves
            .iter()
            .find(|(t, _)| t.symbol == token.symbol)
            .map(|(_, r)| *r)
            .ok_or_else(|| not_configured(VenueId::LendB, token.symbol))
    }

    /// Reads the token's reserve, the other reserves the wallet's obligation names, and the
    /// obligation and user metadata (None where missing).
    async fn accounts(
        &self,
        ledger: &dyn Ledger,
        owner: &Pubkey,
        token: &VenueToken,
    ) -> Result<Accounts, ApiError> {
        let address = self.reserve_of(token)?;
        let obligation_key = vanilla_obligation(owner, &self.market);
        let mut read_back = read(
            ledger,
            &[address, obligation_key, user_metadata(owner), self.market],
        )
        .await?;
        let market = read_back
            .pop()
            .flatten()
            .filter(|a| a.owner == PROGRAM)
            .and_then(|a| LendingMarket::decode(&a.data))
            .ok_or_else(|| unreadable(VenueId::LendB, "lending market"))?;
        if market.emergency {
            return Err(ApiError::unavailable(
                "venue_paused",
                "Kamino's lending market is in emergency mode; it refuses every deposit, \
                 withdrawal, borrow and repayment until it leaves it",
            ));
        }
        let metadata_exists = read_back.pop().flatten().is_some();
        let obligation = match read_back.pop().flatten() {
            Some(account) if account.owner == PROGRAM => Some(
                Obligation::decode(&account.data)
                    .ok_or_else(|| unreadable(VenueId::LendB, "obligation"))?,
            ),
            Some(_) => return Err(unreadable(VenueId::LendB, "obligation")),
            None => None,
        };
        let reserve = decode_reserve(read_back.pop().flatten(), token)?;
        if reserve.lending_market != self.market {
            return Err(unreadable(VenueId::LendB, "reserve"));
        }
        if reserve.farm_collateral != Pubkey::default() {
            return Err(unreadable(
                VenueId::LendB,
                "reserve (it has a collateral farm)",
            ));
        }
        // Each reserve once (one that is both collateral and debt is refreshed once).
        let mut involved: Vec<Pubkey> = Vec::new();
        let named = obligation
            .as_ref()
            .map(Obligation::reserves)
            .unwrap_or_default();
        for key in named.into_iter().chain([address]) {
            if !involved.contains(&key) {
                involved.push(key);
            }
        }
        let others: Vec<Pubkey> = involved.iter().copied().filter(|r| *r != address).collect();
        let mut refreshes = Vec::new();
        let mut collateral_emode_only = false;
        let read_others = read(ledger, &others).await?;
        for key in &involved {
            let other;
            let involved_reserve = if *key == address {
                &reserve
            } else {
                let at = others.iter().position(|o| o == key).expect("listed");
                other = read_others[at]
                    .as_ref()
                    .filter(|a| a.owner == PROGRAM)
                    .and_then(|a| Reserve::decode(&a.data))
                    .ok_or_else(|| unreadable(VenueId::LendB, "obligation reserve"))?;
                &other
            };
            refreshes.push(refresh_reserve(key, involved_reserve));
            collateral_emode_only |= involved_reserve.collateral_emode_only
                && obligation
                    .as_ref()
                    .is_some_and(|o| o.deposits.iter().any(|(r, _)| r == key));
        }
        Ok(Accounts {
            address,
            reserve,
            market,
            obligation_key,
            obligation,
            metadata_exists,
            collateral_emode_only,
            refreshes,
        })
    }
}

fn decode_reserve(
    account: Option<crate::chain::ledger::LedgerAccount>,
    token: &VenueToken,
) -> Result<Reserve, ApiError> {
    account
        .filter(|a| a.owner == PROGRAM)
        .and_then(|a| Reserve::decode(&a.data))
        .filter(|r| r.liquidity_mint == token.mint)
        .ok_or_else(|| unreadable(VenueId::LendB, "reserve"))
}

/// The answer to a deposit Kamino would refuse now: the wallet is told before it signs (and
/// before a first deposit's set-up transaction spends rent on accounts it would not use).
fn refused(refusal: Refusal) -> ApiError {
    match refusal {
        // Not transient: no retry-after.
        Refusal::Obsolete => ApiError::coded(
            StatusCode::SERVICE_UNAVAILABLE,
            "venue_reserve_obsolete",
            "Kamino has marked this reserve obsolete; it takes no deposits",
        ),
        Refusal::AboveDepositLimit { room } => above_deposit_limit(
            "this deposit would take the Kamino reserve past its deposit limit",
            room,
        ),
        Refusal::CollateralOutsideGroups => collateral_outside_groups(
            "this reserve's collateral is taken only inside a Kamino elevation group and the \
             wallet's obligation, in none, owes: repay it first",
        ),
        Refusal::OutsideObligationGroup { group } => in_a_group(format!(
            "the wallet's Kamino obligation is in elevation group {group}, which this reserve \
             is not in"
        )),
    }
}

/// 409 `obligation_in_elevation_group`: the wallet put its Kamino obligation (the vanilla one
/// the service uses) in an elevation group, in Kamino's app.
fn in_a_group(message: String) -> ApiError {
    ApiError::coded(
        StatusCode::CONFLICT,
        "obligation_in_elevation_group",
        message,
    )
}

/// 409 `collateral_outside_elevation_group`: Kamino lends against the reserve's collateral only
/// inside an elevation group, and the wallet's obligation (the service's are vanilla) is in
/// none.
fn collateral_outside_groups(message: &str) -> ApiError {
    ApiError::coded(
        StatusCode::CONFLICT,
        "collateral_outside_elevation_group",
        message,
    )
}

/// The answer to liquidity leaving the reserve (`what`: "this withdrawal", "this borrow") that
/// Kamino would refuse now: 503 with a retry-after (the end of the cap's interval where that is
/// what holds it back), or 400 with the room left under the borrow limit.
fn outflow_refused(refusal: OutflowRefusal, what: &str) -> ApiError {
    match refusal {
        OutflowRefusal::Illiquid => too_little_unlent(VenueId::LendB, what),
        OutflowRefusal::Capped(window) => liquidity_insufficient(&format!(
            "Kamino caps what leaves this reserve per interval and {} base units are left \
             until it starts again in {} s",
            window.room, window.resets_in
        ))
        .retry_after(window.resets_in.max(1)),
        OutflowRefusal::AboveBorrowLimit { room } => above_a_limit(
            room,
            format!(
                "{what} would take the Kamino reserve past its borrow limit; it lends at most \
                 {room} base units more now"
            ),
        ),
        OutflowRefusal::AboveLimitOutsideGroups { room } => above_a_limit(
            room,
            format!(
                "{what} would take what the Kamino reserve lends outside its elevation groups \
                 (the service's obligations are in none) past its limit for them; it lends \
                 {room} base units more there now"
            ),
        ),
        OutflowRefusal::AboveUtilizationCeiling { room } => above_a_limit(
            room,
            format!(
                "{what} would leave the Kamino reserve lent at or above its utilisation \
                 ceiling, where it lends no more; {room} base units stay below it now"
            ),
        ),
    }
}

/// 400 for a borrow past one of the reserve's limits: a smaller one, up to `room`, goes
/// through now.
fn above_a_limit(room: u64, message: String) -> ApiError {
    ApiError::coded(
        StatusCode::BAD_REQUEST,
        "amount_above_borrow_limit",
        message,
    )
    .with("room_base", room)
}

/// The ledger's unix time, from the clock sysvar's account as read.
fn unix_time(clock: &Option<LedgerAccount>) -> Result<i64, ApiError> {
    Ok(decode_clock(clock)
        .map_err(|_| unreadable(VenueId::LendB, "clock"))?
        .unix_timestamp)
}

/// The ledger's unix time, read on its own.
async fn ledger_now(ledger: &dyn Ledger) -> Result<i64, ApiError> {
    unix_time(&read(ledger, &[CLOCK_SYSVAR]).await?.remove(0))
}

struct Accounts {
    address: Pubkey,
    reserve: Reserve,
    market: LendingMarket,
    obligation_key: Pubkey,
    obligation: Option<Obligation>,
    metadata_exists: bool,
    /// The obligation holds collateral whose reserve backs borrows only inside an elevation
    /// group: klend's refresh then stops its borrowing (it is in none).
    collateral_emode_only: bool,
    /// A refresh of every reserve the obligation will name, in its order.
    refreshes: Vec<Instruction>,
}

impl Accounts {
    /// `op` on the obligation with what it needs around it: the token leg's set-up, a refresh of
    /// every reserve involved and then of the obligation (the program wants both in this slot),
    /// `op`, and the leg's closing.
    fn around(&self, market: &Pubkey, leg: TokenLeg, op: Instruction) -> Vec<Instruction> {
        let mut ixs = leg.before;
        ixs.extend(self.refreshes.iter().cloned());
        ixs.push(refresh_obligation(
            market,
            &self.obligation_key,
            &self.obligation_reserves(),
        ));
        ixs.push(op);
        ixs.extend(leg.after);
        ixs
    }

    /// The reserves `refresh_obligation` takes once `also` is deposited.
    fn obligation_reserves(&self) -> Vec<Pubkey> {
        self.obligation
            .as_ref()
            .map(Obligation::reserves)
            .unwrap_or_default()
    }
}

#[async_trait::async_trait]
impl Venue for LendB {
    fn id(&self) -> VenueId {
        VenueId::LendB
    }

    fn label(&self) -> &'static str {
        "Kamino Lending"
    }

    fn tokens(&self) -> Vec<VenueToken> {
        self.reserves.iter().map(|(t, _)| *t).collect()
    }

    fn live_on(&self) -> &'static [Cluster] {
        &[Cluster::Devnet, Cluster::Mainnet]
    }

    fn lender(&self) -> Option<&dyn Lender> {
        Some(self)
    }

    async fn market(
        &self,
        ledger: &dyn Ledger,
        token: &VenueToken,
    ) -> Result<MarketRead, ApiError> {
        let address = self.reserve_of(token)?;
        let reserve = decode_reserve(read(ledger, &[address]).await?.remove(0), token)?;
        Ok(MarketRead {
            rate: reserve.rate(),
            supply_apy_pct: Some(reserve.supply_apy_pct()),
            borrow_apr_pct: Some(reserve.borrow_apr_pct()),
            available: Some(reserve.available),
        })
    }

    async fn deposit(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
        amount: u64,
    ) -> Result<Deposit, ApiError> {
        let accounts = self.accounts(ledger, wallet, token).await?;
        accounts
            .reserve
            .check_deposit(amount, accounts.obligation.as_ref())
            .map_err(refused)?;
        let mut transactions = Vec::new();
        let mut setup = Vec::new();
        if !accounts.metadata_exists {
            setup.push(init_user_metadata(wallet));
        }
        if accounts.obligation.is_none() {
            setup.push(init_obligation(wallet, &self.market));
        }
        if !setup.is_empty() {
            transactions.push(setup);
        }
        let source = TokenLeg::source(ledger, wallet, token, amount).await?;
        let op = deposit_v2(
            wallet,
            &accounts.address,
            &accounts.reserve,
            &source.account,
            amount,
        );
        let ixs = accounts.around(&self.market, source, op);
        transactions.push(ixs);
        Ok(Deposit {
            transactions,
            receipt_account: accounts.obligation_key,
        })
    }

    async fn withdraw(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
        receipt: u64,
    ) -> Result<Transactions, ApiError> {
        let accounts = self.accounts(ledger, wallet, token).await?;
        let Some(obligation) = &accounts.obligation else {
            return Err(crate::error::ApiError::not_found("lend_b obligation"));
        };
        // Every lend_b deposit is collateral of the wallet's one obligation. klend lets
        // collateral out under a debt only as far as the rest still covers it at the reserve's
        // loan-to-value, priced at the refresh in the same transaction; the service does not
        // price the obligation itself, so it answers as lend_a does rather than prepare a
        // withdrawal that could fail on chain.
        if !obligation.borrows.is_empty() {
            return Err(ApiError::coded(
                StatusCode::CONFLICT,
                "collateral_pledged",
                "this deposit is collateral of an open lend_b borrow: repay it first",
            ));
        }
        let destination = TokenLeg::destination(ledger, wallet, token).await?;
        let op = withdraw_v2(
            wallet,
            &accounts.address,
            &accounts.reserve,
            &destination.account,
            receipt,
        );
        let ixs = accounts.around(&self.market, destination, op);
        Ok(vec![ixs])
    }

    /// The payout at the reserve's rate, refused as Kamino would refuse it at the ledger's
    /// time: the reserve and the clock are read in one call.
    async fn payout(
        &self,
        ledger: &dyn Ledger,
        token: &VenueToken,
        receipt: u64,
    ) -> Result<u64, ApiError> {
        let address = self.reserve_of(token)?;
        let [reserve, clock] = read_each(ledger, [address, CLOCK_SYSVAR]).await?;
        let reserve = decode_reserve(reserve, token)?;
        let now = unix_time(&clock)?;
        let payout = reserve.rate().value_of(receipt);
        reserve
            .check_withdrawal(payout, now)
            .map_err(|refusal| outflow_refused(refusal, "this withdrawal"))?;
        Ok(payout)
    }

    async fn receipt_balance(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
    ) -> Result<u64, ApiError> {
        let address = self.reserve_of(token)?;
        let obligation = read(ledger, &[vanilla_obligation(wallet, &self.market)])
            .await?
            .remove(0);
        Ok(obligation
            .filter(|a| a.owner == PROGRAM)
            .and_then(|a| Obligation::decode(&a.data))
            .and_then(|o| {
                o.deposits
                    .iter()
                    .find(|(r, _)| *r == address)
                    .map(|(_, a)| *a)
            })
            .unwrap_or(0))
    }
}

#[async_trait::async_trait]
impl Lender for LendB {
    async fn loan_account(&self, _: &dyn Ledger, wallet: &Pubkey) -> Result<Pubkey, ApiError> {
        Ok(vanilla_obligation(wallet, &self.market))
    }

    async fn borrow(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
        amount: u64,
    ) -> Result<Transactions, ApiError> {
        let accounts = self.accounts(ledger, wallet, token).await?;
        if accounts
            .obligation
            .as_ref()
            .is_none_or(|o| o.deposits.is_empty())
        {
            return Err(no_collateral(VenueId::LendB));
        }
        // `check_borrow_possible`, then what the obligation's refresh in the same transaction
        // will set (`check_non_elevation_group_borrowing_enabled`).
        if accounts.market.borrow_disabled {
            return Err(ApiError::coded(
                StatusCode::SERVICE_UNAVAILABLE,
                "venue_borrowing_disabled",
                "Kamino's lending market lends nothing now; its owner has stopped borrowing",
            ));
        }
        // Inside a group klend lends under other rules (no origination fee, debt limits per
        // collateral and group) that the service does not read; it prepares borrows only for
        // obligations in none.
        if let Some(group) = accounts
            .obligation
            .as_ref()
            .map(|o| o.elevation_group)
            .filter(|g| *g != 0)
        {
            return Err(in_a_group(format!(
                "the wallet's Kamino obligation is in elevation group {group}; the service \
                 borrows only for an obligation in none: leave the group in Kamino's app first"
            )));
        }
        if accounts.collateral_emode_only {
            return Err(collateral_outside_groups(
                "the wallet's Kamino collateral backs borrows only inside an elevation group, \
                 and the service's obligations are in none",
            ));
        }
        // The clock is read only for a reserve whose debt cap is on.
        let now = if accounts.reserve.debt_cap.is_on() {
            ledger_now(ledger).await?
        } else {
            0
        };
        accounts
            .reserve
            .check_borrow(amount, now)
            .map_err(|refusal| outflow_refused(refusal, "this borrow"))?;
        let destination = TokenLeg::destination(ledger, wallet, token).await?;
        let op = borrow_v2(
            wallet,
            &accounts.address,
            &accounts.reserve,
            &destination.account,
            amount,
        );
        let ixs = accounts.around(&self.market, destination, op);
        Ok(vec![ixs])
    }

    async fn repay(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
    ) -> Result<(Transactions, u64), ApiError> {
        let accounts = self.accounts(ledger, wallet, token).await?;
        let owed = accounts
            .obligation
            .as_ref()
            .and_then(|o| o.borrows.iter().find(|b| b.reserve == accounts.address))
            .map(|b| b.owed_at(accounts.reserve.cumulative_borrow_rate))
            .ok_or_else(|| ApiError::not_found("lend_b debt"))?;
        // Interest accrues until the repayment lands: the source holds a tenth of a percent
        // more than is owed now, the repayment takes what is owed then (`u64::MAX`), and a
        // wrapped-SOL account this flow made gives the rest back when it is closed.
        let margin = owed / 1_000 + 1;
        let source = TokenLeg::source(ledger, wallet, token, owed.saturating_add(margin)).await?;
        let op = repay_v2(
            wallet,
            &accounts.address,
            &accounts.reserve,
            &source.account,
            u64::MAX,
        );
        let ixs = accounts.around(&self.market, source, op);
        Ok((vec![ixs], owed))
    }

    async fn loan(&self, ledger: &dyn Ledger, wallet: &Pubkey) -> Result<LoanRead, ApiError> {
        let account = vanilla_obligation(wallet, &self.market);
        let (slot, mut found) = ledger.accounts(&[account]).await?;
        let answered = found
            .pop()
            .ok_or_else(|| unreadable(VenueId::LendB, "obligation"))?;
        let Some(read_back) = answered else {
            return Ok(LoanRead { slot, loan: None });
        };
        let obligation = Some(read_back)
            .filter(|a| a.owner == PROGRAM)
            .and_then(|a| Obligation::decode(&a.data))
            .ok_or_else(|| unreadable(VenueId::LendB, "obligation"))?;
        let mut named: Vec<Pubkey> = Vec::new();
        for key in obligation.reserves() {
            if !named.contains(&key) {
                named.push(key);
            }
        }
        let reserves = read(ledger, &named)
            .await?
            .into_iter()
            .map(|a| {
                let reserve = a
                    .filter(|a| a.owner == PROGRAM)
                    .and_then(|a| Reserve::decode(&a.data))
                    .ok_or_else(|| unreadable(VenueId::LendB, "obligation reserve"))?;
                let token = self
                    .reserves
                    .iter()
                    .find(|(t, _)| t.mint == reserve.liquidity_mint)
                    .map(|(t, _)| t.symbol)
                    .ok_or_else(|| {
                        unreadable(VenueId::LendB, "reserve of a token not configured")
                    })?;
                Ok((token, reserve))
            })
            .collect::<Result<Vec<_>, ApiError>>()?;
        let of = |key: &Pubkey| &reserves[named.iter().position(|n| n == key).expect("named")];
        let loan = Loan {
            account,
            collateral: obligation
                .deposits
                .iter()
                .map(|(key, amount)| {
                    let (token, reserve) = of(key);
                    (*token, reserve.rate().value_of(*amount))
                })
                .collect(),
            debts: obligation
                .borrows
                .iter()
                .map(|b| {
                    let (token, reserve) = of(&b.reserve);
                    (*token, b.owed_at(reserve.cumulative_borrow_rate))
                })
                .collect(),
        };
        Ok(LoanRead {
            slot,
            loan: Some(loan),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_debt_grows_with_the_reserves_cumulative_rate_rounded_up() {
        let one = FRACTION_ONE;
        let borrow = ObligationBorrow {
            reserve: Pubkey::new_unique(),
            rate: one,
            borrowed_sf: 2_000_000_000 * one,
        };
        assert_eq!(borrow.owed_at(one), 2_000_000_000);
        // The rate up 10 %: 2.2 SOL owed.
        assert_eq!(borrow.owed_at(one + one / 10), 2_200_000_000);
        // A part of a base unit is owed as a whole one.
        let part = ObligationBorrow {
            borrowed_sf: 5 * one + 1,
            ..borrow
        };
        assert_eq!(part.owed_at(one), 6);
        // 1,000 SOL at a rate grown 50-fold still fits.
        let big = ObligationBorrow {
            borrowed_sf: 1_000_000_000_000 * one,
            ..borrow
        };
        assert_eq!(big.owed_at(50 * one), 50_000_000_000_000);
    }

    #[test]
    fn account_discriminators_match_the_published_ones() {
        // docs/venues-research.md §2.4, from the IDL's account names.
        assert_eq!(
            hex::encode(anchor_discriminator("account:Reserve")),
            "2bf2ccca1af73b7f"
        );
        assert_eq!(
            hex::encode(anchor_discriminator("account:Obligation")),
            "a8ce8d6a584caca7"
        );
        assert_eq!(
            hex::encode(anchor_discriminator("account:LendingMarket")),
            "f6723262489d1c78"
        );
    }

    #[test]
    fn a_lending_market_reads_its_two_switches() {
        let mut data = vec![0u8; market::LEN];
        data[..8].copy_from_slice(&anchor_discriminator("account:LendingMarket"));
        let read =
            |data: &[u8]| LendingMarket::decode(data).map(|m| (m.emergency, m.borrow_disabled));
        assert_eq!(read(&data), Some((false, false)));
        data[market::EMERGENCY_MODE] = 1;
        assert_eq!(read(&data), Some((true, false)));
        data[market::BORROW_DISABLED] = 1;
        data[market::EMERGENCY_MODE] = 0;
        assert_eq!(read(&data), Some((false, true)));
        assert_eq!(read(&data[..market::LEN - 1]), None, "a short account");
        data[0] ^= 1;
        assert_eq!(read(&data), None, "another account type");
    }

    #[test]
    fn a_reserve_reads_its_rate_and_curve() {
        let mut data = vec![0u8; reserve::LEN];
        data[..8].copy_from_slice(&anchor_discriminator("account:Reserve"));
        data[reserve::AVAILABLE_AMOUNT..][..8].copy_from_slice(&500u64.to_le_bytes());
        data[reserve::BORROWED_AMOUNT_SF..][..16]
            .copy_from_slice(&(500u128 * FRACTION_ONE).to_le_bytes());
        data[reserve::COLLATERAL_MINT_TOTAL_SUPPLY..][..8].copy_from_slice(&800u64.to_le_bytes());
        // Curve: 0 % → 0 bps, 100 % → 2,000 bps, flat after.
        let points = [(0u32, 0u32), (10_000, 2_000)];
        for i in 0..11 {
            let (u, r) = points[i.min(1)];
            let at = reserve::BORROW_RATE_CURVE + i * 8;
            data[at..at + 4].copy_from_slice(&u.to_le_bytes());
            data[at + 4..at + 8].copy_from_slice(&r.to_le_bytes());
        }
        let reserve = Reserve::decode(&data).unwrap();
        assert_eq!(reserve.rate().value_of(800), 1_000);
        assert_eq!(reserve.utilization(), 0.5);
        assert!((reserve.borrow_apr_pct() - 10.0).abs() < 1e-9);
        data[0] ^= 1;
        assert!(Reserve::decode(&data).is_none(), "another account type");
    }

    #[test]
    fn automatic_routing_passes_over_every_deposit_refusal() {
        for refusal in [
            Refusal::Obsolete,
            Refusal::AboveDepositLimit { room: 1 },
            Refusal::CollateralOutsideGroups,
            Refusal::OutsideObligationGroup { group: 1 },
        ] {
            assert!(
                crate::chain::venues::refuses_as_it_stands(&refused(refusal)),
                "{refusal:?}"
            );
        }
    }

    /// A reserve of 500 available and 500.25 lent out (fees 0.25 of it), so a supply of 1,000.
    fn reserve_of_1000(limit: u64, status: u8) -> Reserve {
        let mut data = vec![0u8; reserve::LEN];
        data[..8].copy_from_slice(&anchor_discriminator("account:Reserve"));
        data[reserve::AVAILABLE_AMOUNT..][..8].copy_from_slice(&500u64.to_le_bytes());
        data[reserve::BORROWED_AMOUNT_SF..][..16]
            .copy_from_slice(&(500 * FRACTION_ONE + FRACTION_ONE / 4).to_le_bytes());
        data[reserve::ACCUMULATED_PROTOCOL_FEES_SF..][..16]
            .copy_from_slice(&(FRACTION_ONE / 4).to_le_bytes());
        data[reserve::DEPOSIT_LIMIT..][..8].copy_from_slice(&limit.to_le_bytes());
        data[reserve::STATUS] = status;
        Reserve::decode(&data).unwrap()
    }

    #[test]
    fn deposits_are_refused_as_kamino_refuses_them() {
        let reserve = reserve_of_1000(1_500, 0);
        assert_eq!(reserve.deposit_limit, 1_500);
        assert!(!reserve.obsolete);
        // Up to the limit exactly: 1,000 + 500.
        assert_eq!(reserve.check_deposit(500, None), Ok(()));
        assert_eq!(
            reserve.check_deposit(501, None),
            Err(Refusal::AboveDepositLimit { room: 500 })
        );
        // A supply already past its limit (the limit lowered) has no room at all.
        assert_eq!(
            reserve_of_1000(900, 0).check_deposit(1, None),
            Err(Refusal::AboveDepositLimit { room: 0 })
        );
        // Obsolete refuses any deposit; Hidden (2) still takes them.
        assert_eq!(
            reserve_of_1000(1_500, 1).check_deposit(1, None),
            Err(Refusal::Obsolete)
        );
        assert_eq!(reserve_of_1000(1_500, 2).check_deposit(1, None), Ok(()));
        // The largest deposit against the largest limit does not overflow.
        assert_eq!(
            reserve_of_1000(u64::MAX, 0).check_deposit(u64::MAX - 1_000, None),
            Ok(())
        );
        assert_eq!(
            reserve_of_1000(u64::MAX, 0).check_deposit(u64::MAX, None),
            Err(Refusal::AboveDepositLimit {
                room: u64::MAX - 1_000
            })
        );
        // Into an obligation: one that owes and one that does not, in no group, and one its
        // owner put in elevation group 3.
        let owing = Obligation {
            borrows: vec![ObligationBorrow {
                reserve: Pubkey::new_unique(),
                rate: FRACTION_ONE,
                borrowed_sf: FRACTION_ONE,
            }],
            ..Obligation::default()
        };
        let clear = Obligation::default();
        let in_group_3 = Obligation {
            elevation_group: 3,
            ..owing.clone()
        };
        // Collateral that backs borrows only inside an elevation group: taken while the
        // obligation owes nothing, refused once it owes (after the reserve's own refusals).
        let mut emode_only = reserve_of_1000(1_500, 0);
        emode_only.collateral_emode_only = true;
        assert_eq!(emode_only.check_deposit(1, Some(&clear)), Ok(()));
        assert_eq!(
            emode_only.check_deposit(1, Some(&owing)),
            Err(Refusal::CollateralOutsideGroups)
        );
        assert_eq!(
            emode_only.check_deposit(501, Some(&owing)),
            Err(Refusal::AboveDepositLimit { room: 500 })
        );
        assert_eq!(reserve.check_deposit(1, Some(&owing)), Ok(()));
        // An obligation in a group takes only the group's reserves, owing or not; there the
        // collateral's restriction outside groups does not apply.
        assert_eq!(
            reserve.check_deposit(1, Some(&in_group_3)),
            Err(Refusal::OutsideObligationGroup { group: 3 })
        );
        emode_only.elevation_groups[..2].copy_from_slice(&[1, 3]);
        assert_eq!(emode_only.check_deposit(1, Some(&in_group_3)), Ok(()));
    }

    fn capped(capacity: i64, current_total: i64, start: u64, secs: u64) -> Reserve {
        let mut data = vec![0u8; reserve::LEN];
        data[..8].copy_from_slice(&anchor_discriminator("account:Reserve"));
        data[reserve::AVAILABLE_AMOUNT..][..8].copy_from_slice(&1_000u64.to_le_bytes());
        let at = reserve::DEPOSIT_WITHDRAWAL_CAP;
        data[at..][..8].copy_from_slice(&capacity.to_le_bytes());
        data[at + 8..][..8].copy_from_slice(&current_total.to_le_bytes());
        data[at + 16..][..8].copy_from_slice(&start.to_le_bytes());
        data[at + 24..][..8].copy_from_slice(&secs.to_le_bytes());
        Reserve::decode(&data).unwrap()
    }

    #[test]
    fn withdrawals_are_refused_as_kamino_caps_them() {
        // 600 an hour, 450 out already in the interval that started at 10,000.
        let reserve = capped(600, 450, 10_000, 3_600);
        assert_eq!(
            reserve.withdrawal_cap,
            WithdrawalCap {
                capacity: 600,
                current_total: 450,
                interval_start: 10_000,
                interval_secs: 3_600
            }
        );
        // 15 minutes in: 150 may go, and the interval starts again in 45 minutes.
        let now = 10_900;
        assert_eq!(reserve.check_withdrawal(150, now), Ok(()));
        assert_eq!(
            reserve.check_withdrawal(151, now),
            Err(OutflowRefusal::Capped(CapWindow {
                room: 150,
                resets_in: 2_700
            }))
        );
        // The last second of the interval still counts the 450; at its end the total is 0.
        assert_eq!(
            reserve.withdrawal_cap.window(13_599),
            Some(CapWindow {
                room: 150,
                resets_in: 1
            })
        );
        assert_eq!(
            reserve.withdrawal_cap.window(13_600),
            Some(CapWindow {
                room: 600,
                resets_in: 3_600
            })
        );
        assert_eq!(reserve.check_withdrawal(600, 13_600), Ok(()));
        // What the reserve holds unlent bounds it first.
        assert_eq!(
            reserve.check_withdrawal(1_001, 13_600),
            Err(OutflowRefusal::Illiquid)
        );
        // Deposits in the interval can take the total below 0: more room than the capacity.
        assert_eq!(
            capped(600, -400, 10_000, 3_600).check_withdrawal(1_000, now),
            Ok(())
        );
        // A total already past a lowered capacity leaves nothing; so does a negative capacity,
        // even in a new interval.
        assert_eq!(
            capped(100, 450, 10_000, 3_600).withdrawal_cap.window(now),
            Some(CapWindow {
                room: 0,
                resets_in: 2_700
            })
        );
        assert_eq!(
            capped(-1, 0, 10_000, 3_600).withdrawal_cap.window(20_000),
            Some(CapWindow {
                room: 0,
                resets_in: 3_600
            })
        );
        // A clock read behind the interval's start counts it as the current one.
        assert_eq!(
            reserve.withdrawal_cap.window(9_000),
            Some(CapWindow {
                room: 150,
                resets_in: 4_600
            })
        );
        // An interval of 0 seconds: no cap, whatever the totals say.
        let uncapped = capped(0, 450, 10_000, 0);
        assert_eq!(uncapped.withdrawal_cap.window(now), None);
        assert_eq!(uncapped.check_withdrawal(1_000, now), Ok(()));
    }

    /// 1,000 lent out of a limit of `limit`, 500 unlent, a borrow fee of 1/1024, and a debt cap
    /// of 400 an hour with 100 out since 10,000.
    fn lending(limit: u64) -> Reserve {
        let mut data = vec![0u8; reserve::LEN];
        data[..8].copy_from_slice(&anchor_discriminator("account:Reserve"));
        data[reserve::AVAILABLE_AMOUNT..][..8].copy_from_slice(&500u64.to_le_bytes());
        data[reserve::BORROWED_AMOUNT_SF..][..16]
            .copy_from_slice(&(1_000 * FRACTION_ONE).to_le_bytes());
        data[reserve::BORROW_LIMIT..][..8].copy_from_slice(&limit.to_le_bytes());
        data[reserve::BORROW_LIMIT_OUTSIDE_ELEVATION_GROUP..][..8]
            .copy_from_slice(&u64::MAX.to_le_bytes());
        let fee_sf = u64::try_from(FRACTION_ONE / 1_024).unwrap();
        data[reserve::ORIGINATION_FEE_SF..][..8].copy_from_slice(&fee_sf.to_le_bytes());
        let at = reserve::DEBT_WITHDRAWAL_CAP;
        data[at..][..8].copy_from_slice(&400i64.to_le_bytes());
        data[at + 8..][..8].copy_from_slice(&100i64.to_le_bytes());
        data[at + 16..][..8].copy_from_slice(&10_000u64.to_le_bytes());
        data[at + 24..][..8].copy_from_slice(&3_600u64.to_le_bytes());
        Reserve::decode(&data).unwrap()
    }

    #[test]
    fn the_origination_fee_rounds_to_the_nearest_unit_and_is_at_least_one() {
        let reserve = lending(u64::MAX);
        assert_eq!(reserve.origination_fee(0), 0);
        assert_eq!(reserve.origination_fee(1), 1, "the minimum");
        assert_eq!(reserve.origination_fee(1_535), 1);
        assert_eq!(reserve.origination_fee(1_536), 2, "1.5 rounds up");
        assert_eq!(reserve.origination_fee(1_024_000), 1_000);
        assert_eq!(reserve.origination_fee(u64::MAX), u64::MAX / 1_024 + 1);
        let free = Reserve {
            origination_fee_sf: 0,
            ..reserve
        };
        assert_eq!(free.origination_fee(1_024_000), 0);
    }

    #[test]
    fn borrows_are_refused_as_kamino_refuses_them() {
        let now = 10_900;
        // The limit counts the amount alone against what is lent: 1,000 + 200 fits 1,200.
        let reserve = lending(1_200);
        assert_eq!(
            reserve.check_borrow(201, now),
            Err(OutflowRefusal::AboveBorrowLimit { room: 200 })
        );
        // The cap counts the amount with its fee: 299 + 1 leaves 0 of the 300.
        assert_eq!(lending(u64::MAX).check_borrow(299, now), Ok(()));
        assert_eq!(
            lending(u64::MAX).check_borrow(300, now),
            Err(OutflowRefusal::Capped(CapWindow {
                room: 300,
                resets_in: 2_700
            }))
        );
        // In the next interval the cap allows 400, but only 500 is unlent: 499 + 1 fits, 500
        // with its fee does not.
        let later = 13_600;
        assert_eq!(
            lending(u64::MAX).check_borrow(400, later),
            Err(OutflowRefusal::Capped(CapWindow {
                room: 400,
                resets_in: 3_600
            }))
        );
        let uncapped = Reserve {
            debt_cap: WithdrawalCap::default(),
            ..lending(u64::MAX)
        };
        assert_eq!(uncapped.check_borrow(499, later), Ok(()));
        assert_eq!(
            uncapped.check_borrow(500, later),
            Err(OutflowRefusal::Illiquid)
        );
        // A limit already passed (lowered below what is lent) leaves no room.
        assert_eq!(
            lending(900).check_borrow(1, now),
            Err(OutflowRefusal::AboveBorrowLimit { room: 0 })
        );
    }

    #[test]
    fn borrows_past_the_limit_outside_elevation_groups_are_refused() {
        let mut data = vec![0u8; reserve::LEN];
        data[..8].copy_from_slice(&anchor_discriminator("account:Reserve"));
        data[reserve::BORROW_LIMIT_OUTSIDE_ELEVATION_GROUP..][..8]
            .copy_from_slice(&700u64.to_le_bytes());
        data[reserve::BORROWED_OUTSIDE_ELEVATION_GROUP..][..8]
            .copy_from_slice(&600u64.to_le_bytes());
        let decoded = Reserve::decode(&data).unwrap();
        assert_eq!(
            (
                decoded.borrow_limit_outside_groups,
                decoded.borrowed_outside_groups
            ),
            (700, 600)
        );

        // 600 of 700 lent outside groups: the amount and its fee (at least 1) must fit 100.
        let outside = |limit, lent| Reserve {
            borrow_limit_outside_groups: limit,
            borrowed_outside_groups: lent,
            debt_cap: WithdrawalCap::default(),
            ..lending(u64::MAX)
        };
        assert_eq!(outside(700, 600).check_borrow(99, 0), Ok(()));
        assert_eq!(
            outside(700, 600).check_borrow(100, 0),
            Err(OutflowRefusal::AboveLimitOutsideGroups { room: 99 })
        );
        // A limit of 0 lends only within elevation groups; one already passed lends nothing.
        assert_eq!(
            outside(0, 0).check_borrow(1, 0),
            Err(OutflowRefusal::AboveLimitOutsideGroups { room: 0 })
        );
        assert_eq!(
            outside(500, 600).check_borrow(1, 0),
            Err(OutflowRefusal::AboveLimitOutsideGroups { room: 0 })
        );
        // Counted beside the reserve's whole borrow limit, which still applies.
        assert_eq!(
            Reserve {
                borrow_limit: 1_050,
                ..outside(u64::MAX, 0)
            }
            .check_borrow(51, 0),
            Err(OutflowRefusal::AboveBorrowLimit { room: 50 })
        );
        // The largest tracker does not overflow.
        assert_eq!(
            outside(u64::MAX, u64::MAX - 10).check_borrow(10, 0),
            Err(OutflowRefusal::AboveLimitOutsideGroups { room: 9 })
        );
    }

    #[test]
    fn borrows_reaching_the_utilisation_ceiling_are_refused() {
        let mut data = vec![0u8; reserve::LEN];
        data[..8].copy_from_slice(&anchor_discriminator("account:Reserve"));
        data[reserve::UTILIZATION_CEILING_PCT] = 80;
        assert_eq!(Reserve::decode(&data).unwrap().utilization_ceiling_pct, 80);

        // 1,000 lent of a supply of 1,500: 80 % is 1,200, so what a borrow takes (the amount
        // and its fee of at least 1) must stay under 200.
        let at = |pct| Reserve {
            utilization_ceiling_pct: pct,
            debt_cap: WithdrawalCap::default(),
            ..lending(u64::MAX)
        };
        assert_eq!(at(80).check_borrow(198, 0), Ok(()));
        assert_eq!(
            at(80).check_borrow(199, 0),
            Err(OutflowRefusal::AboveUtilizationCeiling { room: 198 })
        );
        // No ceiling (0): only the unlent liquidity bounds it.
        assert_eq!(at(0).check_borrow(499, 0), Ok(()));
        // A reserve already at or past its ceiling lends nothing.
        assert_eq!(
            at(66).check_borrow(1, 0),
            Err(OutflowRefusal::AboveUtilizationCeiling { room: 0 })
        );
        // A ceiling between whole units: 10 % of 1,501 is 150.1, so 100 lent takes 50 more.
        let free = Reserve {
            available: 1_401,
            borrowed_sf: 100 * FRACTION_ONE,
            origination_fee_sf: 0,
            ..at(10)
        };
        assert_eq!(free.check_borrow(50, 0), Ok(()));
        assert_eq!(
            free.check_borrow(51, 0),
            Err(OutflowRefusal::AboveUtilizationCeiling { room: 50 })
        );
        // Equal to the ceiling is refused, as klend's `>=` refuses it: 10 % of 1,500 is 150.
        let even = Reserve {
            available: 1_400,
            ..free.clone()
        };
        assert_eq!(even.check_borrow(49, 0), Ok(()));
        assert_eq!(
            even.check_borrow(50, 0),
            Err(OutflowRefusal::AboveUtilizationCeiling { room: 49 })
        );
        // The largest supply does not overflow.
        let vast = Reserve {
            available: u64::MAX,
            borrowed_sf: 0,
            ..free
        };
        assert_eq!(vast.check_borrow(u64::MAX / 10, 0), Ok(()));
        assert_eq!(
            vast.check_borrow(u64::MAX / 10 + 1, 0),
            Err(OutflowRefusal::AboveUtilizationCeiling {
                room: u64::MAX / 10
            })
        );
    }
}
