//! Kamino Lending (`lend_b`): the eight instructions a deposit into an obligation, its
//! withdrawal, a borrow against it and its repayment take, with the program's discriminators, account order and flags and its account
//! layouts (docs/venues-research.md §2; the IDL is tests/ts/venues/idl/klend.json).
//!
//! - `init_user_metadata` and `init_obligation` create the wallet's user metadata and its
//!   vanilla obligation at their PDAs, paid by the fee payer.
//! - `refresh_reserve` accrues interest on what is lent out at the rate curve's borrow rate for
//!   the reserve's utilisation (simple interest per slot; the program compounds) and marks the
//!   reserve fresh for this slot; `refresh_obligation` takes exactly the obligation's reserves,
//!   fresh, and marks it fresh.
//! - `deposit_reserve_liquidity_and_obligation_collateral_v2` moves the wallet's liquidity into
//!   the reserve's supply, mints collateral into the reserve's collateral vault and credits it to
//!   the obligation; `withdraw_obligation_collateral_and_redeem_reserve_collateral_v2` does the
//!   reverse. Both need the reserve and the obligation refreshed in this slot and leave them
//!   stale, as the program does; both round in the reserve's favour.
//!
//! - `borrow_obligation_liquidity_v2` lends from the reserve's supply against the obligation's
//!   collateral up to [`LOAN_TO_VALUE_PCT`]; `repay_obligation_liquidity_v2` pays a debt back
//!   (all of it for `u64::MAX`). A debt grows with the reserve's cumulative borrow rate, applied
//!   to the obligation at `refresh_obligation`.
//!
//! - The market's emergency mode refuses every refresh and user instruction, its
//!   `borrow_disabled` every borrow; a reserve whose collateral backs borrows only inside an
//!   elevation group stops the borrowing of an obligation in none holding it (at refresh) and is
//!   not added to one that owes. An obligation its owner put in an elevation group takes
//!   deposits into and borrows from only the reserves in that group; the debt trackers inside
//!   groups are not in the double (only what is lent outside them is counted).
//!
//! The double has no oracles: a reserve's market price is what its data holds (a test moves it
//! with [`set_price`]), and `refresh_obligation` values the collateral and debts at those prices
//! as the program does. It refuses to withdraw from an obligation that borrows (the program
//! would check the loan-to-value instead), and it supports reserves without farms only.

use anchor_lang::prelude::{AccountInfo, Clock, ProgramError, Pubkey, Rent, SolanaSysvar};
use anchor_lang::solana_program::entrypoint::ProgramResult;
use anchor_lang::solana_program::program::{invoke, invoke_signed};
use anchor_lang::solana_program::system_instruction;
use anchor_spl::token::spl_token;
use solana_account::Account;
use solana_program_test::{processor, ProgramTest};
use solana_signer::Signer;

use super::{
    key, mint_account, mint_with_decimals, owned_by, put, token_account, u128_at, u64_at,
    NATIVE_MINT, RENT,
};
use crate::harness::{keypair, SOL};

/// The same id on mainnet and devnet.
pub const KLEND: Pubkey = Pubkey::from_str_const("KLend2g3cP87fffoy8q1mQqGKjrxjC8boSyAYavgmjD");
pub const FARMS: Pubkey = Pubkey::from_str_const("FarmsPZpWu9i7Kky8tPN37rs2TpmMrAZrC7S7vJa91Hr");
const INSTRUCTIONS_SYSVAR: Pubkey =
    Pubkey::from_str_const("Sysvar1nstructions1111111111111111111111111");
const RENT_SYSVAR: Pubkey = Pubkey::from_str_const("SysvarRent111111111111111111111111111111111");
const SYSTEM_PROGRAM: Pubkey = Pubkey::from_str_const("11111111111111111111111111111111");
/// Slots a year, as klend counts them (`utils/consts.rs`).
pub const SLOTS_PER_YEAR: u128 = 63_072_000;
const FRACTION_SHIFT: u32 = 60;

/// sha256("account:<Name>")[..8] and sha256("global:<name>")[..8], as published.
mod discriminator {
    pub const RESERVE: [u8; 8] = [43, 242, 204, 202, 26, 247, 59, 127];
    pub const OBLIGATION: [u8; 8] = [168, 206, 141, 106, 88, 76, 172, 167];
    pub const USER_METADATA: [u8; 8] = [157, 214, 220, 235, 98, 135, 171, 28];
    pub const LENDING_MARKET: [u8; 8] = [246, 114, 50, 98, 72, 157, 28, 120];
    pub const INIT_USER_METADATA: [u8; 8] = [117, 169, 176, 69, 197, 23, 15, 162];
    pub const INIT_OBLIGATION: [u8; 8] = [251, 10, 231, 76, 27, 11, 159, 96];
    pub const REFRESH_RESERVE: [u8; 8] = [2, 218, 138, 235, 79, 201, 25, 102];
    pub const REFRESH_OBLIGATION: [u8; 8] = [33, 132, 147, 228, 151, 192, 72, 89];
    pub const DEPOSIT_V2: [u8; 8] = [216, 224, 191, 27, 204, 151, 102, 175];
    pub const WITHDRAW_V2: [u8; 8] = [235, 52, 119, 152, 149, 197, 20, 7];
    pub const BORROW_V2: [u8; 8] = [161, 128, 143, 245, 171, 199, 194, 6];
    pub const REPAY_V2: [u8; 8] = [116, 174, 213, 76, 180, 53, 210, 144];
}

/// Offsets in the zero-copy accounts (8-byte discriminator first).
mod reserve {
    pub const LEN: usize = 8624;
    pub const LAST_UPDATE_SLOT: usize = 16;
    pub const STALE: usize = 24;
    pub const LENDING_MARKET: usize = 32;
    pub const FARM_COLLATERAL: usize = 64;
    pub const LIQUIDITY_MINT: usize = 128;
    pub const LIQUIDITY_SUPPLY: usize = 160;
    pub const FEE_VAULT: usize = 192;
    pub const AVAILABLE: usize = 224;
    pub const BORROWED_SF: usize = 232;
    /// `market_price_sf`: USD per whole token, a fraction over 2^60 (the program writes it from
    /// the oracles at refresh; the double keeps what it holds, so a test moves it).
    pub const MARKET_PRICE_SF: usize = 248;
    pub const MINT_DECIMALS: usize = 272;
    /// `cumulative_borrow_rate_bsf`: a 256-bit fraction (60 fractional bits); the double keeps it
    /// in the low 128 bits.
    pub const CUMULATIVE_BORROW_RATE: usize = 296;
    pub const TOKEN_PROGRAM: usize = 408;
    pub const COLLATERAL_MINT: usize = 2560;
    pub const COLLATERAL_TOTAL: usize = 2592;
    pub const COLLATERAL_SUPPLY: usize = 2600;
    /// `config.status`: 0 Active, 1 Obsolete, 2 Hidden.
    pub const STATUS: usize = 4856;
    pub const BORROW_RATE_CURVE: usize = 4920;
    /// `config.deposit_limit`: the most liquidity the reserve takes in all.
    pub const DEPOSIT_LIMIT: usize = 5016;
    /// `config.deposit_withdrawal_cap`: capacity (i64), current total (i64), interval start
    /// (u64, unix seconds), interval length (u64 seconds; 0: no cap).
    pub const DEPOSIT_WITHDRAWAL_CAP: usize = 5416;
    /// `config.debt_withdrawal_cap`: the same, for what borrows take and repayments return.
    pub const DEBT_WITHDRAWAL_CAP: usize = 5448;
    /// `config.borrow_limit`: the most liquidity the reserve lends in all.
    pub const BORROW_LIMIT: usize = 5024;
    /// `config.utilization_limit_block_borrowing_above_pct` (0: no ceiling).
    pub const UTILIZATION_CEILING_PCT: usize = 5501;
    /// `config.borrow_limit_outside_elevation_group` and `borrowed_amount_outside_elevation_group`:
    /// what the reserve lends to obligations in no elevation group, at most and now.
    pub const BORROW_LIMIT_OUTSIDE_ELEVATION_GROUP: usize = 5504;
    pub const BORROWED_OUTSIDE_ELEVATION_GROUP: usize = 6704;
    /// `config.disable_usage_as_coll_outside_emode`: the reserve's collateral backs borrows only
    /// inside an elevation group.
    pub const COLLATERAL_EMODE_ONLY: usize = 5500;
    /// `config.elevation_groups`: the (up to 20) elevation groups the reserve is in, 0 for none.
    pub const ELEVATION_GROUPS: usize = 5480;
    pub const ELEVATION_GROUP_COUNT: usize = 20;
    /// Pyth, Switchboard price, Switchboard TWAP, Scope.
    pub const ORACLES: [usize; 4] = [5224, 5160, 5192, 5112];
}

mod obligation {
    pub const LEN: usize = 3344;
    pub const TAG: usize = 8;
    pub const LAST_UPDATE_SLOT: usize = 16;
    pub const STALE: usize = 24;
    pub const LENDING_MARKET: usize = 32;
    pub const OWNER: usize = 64;
    pub const DEPOSITS: usize = 96;
    pub const DEPOSIT_STRIDE: usize = 136;
    pub const DEPOSIT_COUNT: usize = 8;
    pub const DEPOSITED_AMOUNT: usize = 32;
    pub const BORROWS: usize = 1208;
    pub const BORROW_STRIDE: usize = 200;
    pub const BORROW_COUNT: usize = 5;
    /// Within a borrow entry: the reserve's cumulative borrow rate when the entry was last
    /// refreshed, and the debt in fractions.
    pub const BORROW_RATE: usize = 32;
    pub const BORROWED_AMOUNT_SF: usize = 88;
    /// USD values (fractions) as of the last refresh: the collateral, the debt, and what the
    /// collateral allows to be owed.
    pub const DEPOSITED_VALUE_SF: usize = 1192;
    pub const DEBT_VALUE_SF: usize = 2208;
    pub const ALLOWED_BORROW_VALUE_SF: usize = 2240;
    /// Set at refresh when a deposit's reserve backs borrows only inside an elevation group
    /// (the double's obligations are in none).
    pub const BORROWING_DISABLED: usize = 2320;
    /// The elevation group the owner put the obligation in (0: none).
    pub const ELEVATION_GROUP: usize = 2285;
}

/// `LendingMarket` flags.
mod market {
    /// `emergency_mode`: every user instruction is refused (`GlobalEmergencyMode`).
    pub const EMERGENCY_MODE: usize = 122;
    /// `borrow_disabled`: borrows are refused (`BorrowingDisabled`).
    pub const BORROW_DISABLED: usize = 124;
}

mod user_metadata {
    pub const LEN: usize = 1032;
    pub const BUMP: usize = 40;
    pub const LOOKUP_TABLE: usize = 48;
    pub const OWNER: usize = 80;
}

const LENDING_MARKET_LEN: usize = 4664;

/// The market and its SOL reserve as the harness installs them.
#[derive(Debug, Clone, Copy)]
pub struct KaminoMarket {
    pub market: Pubkey,
    pub authority: Pubkey,
    pub sol_reserve: Pubkey,
    pub liquidity_supply: Pubkey,
    pub collateral_mint: Pubkey,
    pub collateral_vault: Pubkey,
    pub fee_vault: Pubkey,
    /// A USDC reserve beside the SOL one, and the USDC mint the double installs.
    pub usdc_mint: Pubkey,
    pub usdc_reserve: Pubkey,
    pub usdc_supply: Pubkey,
    pub usdc_collateral_mint: Pubkey,
    pub usdc_collateral_vault: Pubkey,
    pub usdc_fee_vault: Pubkey,
}

/// A reserve's accounts and starting state, for [`reserve_data`].
struct ReserveSetup {
    mint: Pubkey,
    decimals: u8,
    supply: Pubkey,
    fee_vault: Pubkey,
    collateral_mint: Pubkey,
    collateral_vault: Pubkey,
    available: u64,
    borrowed: u64,
    collateral: u64,
    price_usd: u64,
    deposit_limit: u64,
}

/// The SOL reserve starts with 1,000 SOL available and 1,000 lent out (utilisation 50 %) and
/// 1,900 collateral units outstanding, so a unit is worth 2,000 / 1,900 SOL; its price is 150
/// USD. The USDC reserve holds 1,000,000 USDC, none lent, at 1 USD.
pub const START_AVAILABLE: u64 = 1_000 * SOL;
pub const START_BORROWED: u64 = 1_000 * SOL;
pub const START_COLLATERAL: u64 = 1_900 * SOL;
pub const SOL_PRICE_USD: u64 = 150;
pub const USDC: u64 = 1_000_000;
pub const USDC_START_AVAILABLE: u64 = 1_000_000 * USDC;
/// The double's loan-to-value limit in percent (the program reads each reserve's config; the
/// double prices collateral and debt in one reserve, so no oracle is needed).
pub const LOAN_TO_VALUE_PCT: u128 = 75;
/// Each reserve's deposit limit as installed: ten times its starting supply (a test lowers it
/// with [`set_deposit_limit`]).
pub const SOL_DEPOSIT_LIMIT: u64 = 10 * (START_AVAILABLE + START_BORROWED);
pub const USDC_DEPOSIT_LIMIT: u64 = 10 * USDC_START_AVAILABLE;
/// `ReserveStatus::Obsolete`: the program refuses deposits.
pub const STATUS_OBSOLETE: u8 = 1;
/// The borrow rate curve: 0 % at no utilisation to 20 % at full, linear (so 10 % at 50 %).
pub const CURVE: [(u32, u32); 2] = [(0, 0), (10_000, 2_000)];

impl KaminoMarket {
    pub fn deterministic() -> KaminoMarket {
        let market = keypair(8, 0).pubkey();
        KaminoMarket {
            market,
            authority: Pubkey::find_program_address(&[b"lma", market.as_ref()], &KLEND).0,
            sol_reserve: keypair(8, 1).pubkey(),
            liquidity_supply: keypair(8, 2).pubkey(),
            collateral_mint: keypair(8, 3).pubkey(),
            collateral_vault: keypair(8, 4).pubkey(),
            fee_vault: keypair(8, 5).pubkey(),
            usdc_mint: keypair(8, 6).pubkey(),
            usdc_reserve: keypair(8, 7).pubkey(),
            usdc_supply: keypair(8, 8).pubkey(),
            usdc_collateral_mint: keypair(8, 9).pubkey(),
            usdc_collateral_vault: keypair(8, 10).pubkey(),
            usdc_fee_vault: keypair(8, 11).pubkey(),
        }
    }
}

/// Registers the double under klend's id with a lending market holding a SOL reserve without
/// farms or oracles. The wrapped-SOL mint is the harness's to install.
pub fn install_klend(pt: &mut ProgramTest) -> KaminoMarket {
    let m = KaminoMarket::deterministic();
    pt.add_program("klend", KLEND, processor!(klend));
    let mut market = vec![0u8; LENDING_MARKET_LEN];
    put(&mut market, 0, &discriminator::LENDING_MARKET);
    pt.add_account(m.market, owned_by(KLEND, RENT, market));
    pt.add_account(
        m.liquidity_supply,
        token_account(NATIVE_MINT, m.authority, START_AVAILABLE),
    );
    pt.add_account(
        m.collateral_mint,
        mint_account(Some(m.authority), START_COLLATERAL),
    );
    pt.add_account(
        m.collateral_vault,
        token_account(m.collateral_mint, m.authority, 0),
    );
    pt.add_account(m.fee_vault, token_account(NATIVE_MINT, m.authority, 0));
    pt.add_account(m.sol_reserve, reserve_account(&m));
    pt.add_account(
        m.usdc_mint,
        mint_with_decimals(None, USDC_START_AVAILABLE, 6),
    );
    pt.add_account(
        m.usdc_supply,
        token_account(m.usdc_mint, m.authority, USDC_START_AVAILABLE),
    );
    pt.add_account(m.usdc_collateral_mint, mint_account(Some(m.authority), 0));
    pt.add_account(
        m.usdc_collateral_vault,
        token_account(m.usdc_collateral_mint, m.authority, 0),
    );
    pt.add_account(m.usdc_fee_vault, token_account(m.usdc_mint, m.authority, 0));
    pt.add_account(
        m.usdc_reserve,
        owned_by(
            KLEND,
            RENT,
            reserve_data(
                &m,
                &ReserveSetup {
                    mint: m.usdc_mint,
                    decimals: 6,
                    supply: m.usdc_supply,
                    fee_vault: m.usdc_fee_vault,
                    collateral_mint: m.usdc_collateral_mint,
                    collateral_vault: m.usdc_collateral_vault,
                    available: USDC_START_AVAILABLE,
                    borrowed: 0,
                    collateral: 0,
                    price_usd: 1,
                    deposit_limit: USDC_DEPOSIT_LIMIT,
                },
            ),
        ),
    );
    m
}

/// The SOL reserve as installed (also what the api's tests read its APY from).
pub fn reserve_account(m: &KaminoMarket) -> Account {
    let setup = ReserveSetup {
        mint: NATIVE_MINT,
        decimals: 9,
        supply: m.liquidity_supply,
        fee_vault: m.fee_vault,
        collateral_mint: m.collateral_mint,
        collateral_vault: m.collateral_vault,
        available: START_AVAILABLE,
        borrowed: START_BORROWED,
        collateral: START_COLLATERAL,
        price_usd: SOL_PRICE_USD,
        deposit_limit: SOL_DEPOSIT_LIMIT,
    };
    owned_by(KLEND, RENT, reserve_data(m, &setup))
}

fn reserve_data(m: &KaminoMarket, r: &ReserveSetup) -> Vec<u8> {
    use reserve::*;
    let mut data = vec![0u8; LEN];
    put(&mut data, 0, &discriminator::RESERVE);
    put(&mut data, 8, &1u64.to_le_bytes());
    put(&mut data, LENDING_MARKET, m.market.as_ref());
    put(&mut data, LIQUIDITY_MINT, r.mint.as_ref());
    put(&mut data, LIQUIDITY_SUPPLY, r.supply.as_ref());
    put(&mut data, FEE_VAULT, r.fee_vault.as_ref());
    put(&mut data, AVAILABLE, &r.available.to_le_bytes());
    put(
        &mut data,
        BORROWED_SF,
        &((r.borrowed as u128) << FRACTION_SHIFT).to_le_bytes(),
    );
    put(
        &mut data,
        MARKET_PRICE_SF,
        &((r.price_usd as u128) << FRACTION_SHIFT).to_le_bytes(),
    );
    put(
        &mut data,
        CUMULATIVE_BORROW_RATE,
        &(1u128 << FRACTION_SHIFT).to_le_bytes(),
    );
    put(
        &mut data,
        MINT_DECIMALS,
        &u64::from(r.decimals).to_le_bytes(),
    );
    put(&mut data, TOKEN_PROGRAM, spl_token::ID.as_ref());
    put(&mut data, COLLATERAL_MINT, r.collateral_mint.as_ref());
    put(&mut data, COLLATERAL_TOTAL, &r.collateral.to_le_bytes());
    put(&mut data, COLLATERAL_SUPPLY, r.collateral_vault.as_ref());
    put(&mut data, DEPOSIT_LIMIT, &r.deposit_limit.to_le_bytes());
    // It lends up to what it may take in, to obligations in an elevation group or not.
    put(&mut data, BORROW_LIMIT, &r.deposit_limit.to_le_bytes());
    put(
        &mut data,
        BORROW_LIMIT_OUTSIDE_ELEVATION_GROUP,
        &r.deposit_limit.to_le_bytes(),
    );
    // Eleven points; the program pads a shorter curve with its last point.
    for i in 0..11 {
        let (u, rate) = CURVE[i.min(CURVE.len() - 1)];
        put(&mut data, BORROW_RATE_CURVE + i * 8, &u.to_le_bytes());
        put(
            &mut data,
            BORROW_RATE_CURVE + i * 8 + 4,
            &rate.to_le_bytes(),
        );
    }
    data
}

/// Sets a reserve's market price (as its oracles would at the next refresh) in its data.
pub fn set_price(reserve_data: &mut [u8], price_usd_sf: u128) {
    put(
        reserve_data,
        reserve::MARKET_PRICE_SF,
        &price_usd_sf.to_le_bytes(),
    );
}

/// Sets a reserve's deposit limit in its data (as its market's admin would).
pub fn set_deposit_limit(reserve_data: &mut [u8], limit: u64) {
    put(reserve_data, reserve::DEPOSIT_LIMIT, &limit.to_le_bytes());
}

/// Sets what a reserve has lent out (whole base units) in its data, as borrowers would have.
pub fn set_borrowed(reserve_data: &mut [u8], amount: u64) {
    put(
        reserve_data,
        reserve::BORROWED_SF,
        &(u128::from(amount) << FRACTION_SHIFT).to_le_bytes(),
    );
}

/// Sets a reserve's available (unlent) liquidity in its data, as borrowers taking the rest
/// would leave it.
pub fn set_available(reserve_data: &mut [u8], amount: u64) {
    put(reserve_data, reserve::AVAILABLE, &amount.to_le_bytes());
}

/// A reserve's two caps on what leaves it in an interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cap {
    /// `deposit_withdrawal_cap`: withdrawals count, deposits count back.
    Withdrawals,
    /// `debt_withdrawal_cap`: borrows count, repayments count back.
    Debt,
}

impl Cap {
    fn offset(self) -> usize {
        match self {
            Cap::Withdrawals => reserve::DEPOSIT_WITHDRAWAL_CAP,
            Cap::Debt => reserve::DEBT_WITHDRAWAL_CAP,
        }
    }
}

/// Sets one of a reserve's caps in its data (as its market's admin would): `capacity` base
/// units an interval of `interval_secs` that started at `interval_start`, with `current_total`
/// out already.
pub fn set_cap(
    reserve_data: &mut [u8],
    cap: Cap,
    capacity: i64,
    current_total: i64,
    interval_start: u64,
    interval_secs: u64,
) {
    let at = cap.offset();
    put(reserve_data, at, &capacity.to_le_bytes());
    put(reserve_data, at + 8, &current_total.to_le_bytes());
    put(reserve_data, at + 16, &interval_start.to_le_bytes());
    put(reserve_data, at + 24, &interval_secs.to_le_bytes());
}

/// One of a reserve's cap totals and the start of its interval.
pub fn cap_total(reserve_data: &[u8], cap: Cap) -> (i64, u64) {
    let at = cap.offset();
    (
        u64_at(reserve_data, at + 8) as i64,
        u64_at(reserve_data, at + 16),
    )
}

/// Sets a reserve's borrow limit in its data (as its market's admin would).
pub fn set_borrow_limit(reserve_data: &mut [u8], limit: u64) {
    put(reserve_data, reserve::BORROW_LIMIT, &limit.to_le_bytes());
}

/// Sets what a reserve lends to obligations outside an elevation group: at most `limit`, with
/// `lent` lent to them now (as its admin and earlier borrowers would).
pub fn set_outside_groups(reserve_data: &mut [u8], limit: u64, lent: u64) {
    put(
        reserve_data,
        reserve::BORROW_LIMIT_OUTSIDE_ELEVATION_GROUP,
        &limit.to_le_bytes(),
    );
    put(
        reserve_data,
        reserve::BORROWED_OUTSIDE_ELEVATION_GROUP,
        &lent.to_le_bytes(),
    );
}

/// What a reserve has lent to obligations outside an elevation group.
pub fn borrowed_outside_groups(reserve_data: &[u8]) -> u64 {
    u64_at(reserve_data, reserve::BORROWED_OUTSIDE_ELEVATION_GROUP)
}

/// Sets the utilisation in per cent at or above which a reserve lends no more (as its market's
/// admin would; 0: none).
pub fn set_utilization_ceiling(reserve_data: &mut [u8], pct: u8) {
    reserve_data[reserve::UTILIZATION_CEILING_PCT] = pct;
}

/// Counts `amount` of liquidity leaving (`Way::Withdraw`: a withdrawal or a borrow) or
/// entering (`Way::Deposit`: a deposit or a repayment) against one of the reserve's caps at
/// unix time `now`, as klend's `withdrawal_cap_operations` do: with an interval set, one that is
/// over starts again from 0 here, and an outflow that would take the total past the capacity
/// (or any, with a negative capacity) is refused; with none, the total only saturates.
fn count_against_cap(data: &mut [u8], cap: Cap, amount: u64, way: Way, now: i64) -> ProgramResult {
    let at = cap.offset();
    let capacity = u64_at(data, at) as i64;
    let mut total = u64_at(data, at + 8) as i64;
    let start = u64_at(data, at + 16);
    let interval = u64_at(data, at + 24);
    let amount = i64::try_from(amount).map_err(|_| fail("amount beyond i64"))?;
    let now = u64::try_from(now).map_err(|_| fail("clock before 1970"))?;
    if interval == 0 {
        total = match way {
            Way::Withdraw => total.saturating_add(amount),
            Way::Deposit => total.saturating_sub(amount),
        };
    } else {
        check(start <= now, "the cap's interval starts after the clock")?;
        let mut start = start;
        if now - start >= interval {
            total = 0;
            start = now;
        }
        total = match way {
            Way::Withdraw => {
                check(capacity >= 0, "withdrawals capped at nothing")?;
                let after = total
                    .checked_add(amount)
                    .ok_or_else(|| fail("cap total overflows"))?;
                check(
                    after <= capacity,
                    "the withdrawal passes the reserve's withdrawal cap",
                )?;
                after
            }
            Way::Deposit => total
                .checked_sub(amount)
                .ok_or_else(|| fail("cap total overflows"))?,
        };
        put(data, at + 16, &start.to_le_bytes());
    }
    put(data, at + 8, &total.to_le_bytes());
    Ok(())
}

/// Sets a reserve's status in its data (as its market's admin would).
pub fn set_status(reserve_data: &mut [u8], status: u8) {
    reserve_data[reserve::STATUS] = status;
}

/// Puts a market in or out of emergency mode in its data (as its owner would).
pub fn set_emergency_mode(market_data: &mut [u8], on: bool) {
    market_data[market::EMERGENCY_MODE] = u8::from(on);
}

/// Stops or resumes a market's borrowing in its data (as its owner would).
pub fn set_borrow_disabled(market_data: &mut [u8], on: bool) {
    market_data[market::BORROW_DISABLED] = u8::from(on);
}

/// Puts an obligation in elevation group `group` (0: none) in its data, as its owner can in
/// Kamino's app (`request_elevation_group`).
pub fn set_obligation_group(obligation_data: &mut [u8], group: u8) {
    obligation_data[obligation::ELEVATION_GROUP] = group;
}

/// Sets the elevation groups a reserve is in (at most 20) in its data, as its market's admin
/// would.
pub fn set_reserve_groups(reserve_data: &mut [u8], groups: &[u8]) {
    let at = reserve::ELEVATION_GROUPS;
    reserve_data[at..at + reserve::ELEVATION_GROUP_COUNT].fill(0);
    reserve_data[at..at + groups.len()].copy_from_slice(groups);
}

/// Makes a reserve's collateral back borrows only inside an elevation group, or everywhere
/// again, in its data (as its market's admin would).
pub fn set_collateral_emode_only(reserve_data: &mut [u8], on: bool) {
    reserve_data[reserve::COLLATERAL_EMODE_ONLY] = u8::from(on);
}

/// USD (a fraction over 2^60) of `amount` base units of a reserve's token at its market price.
fn usd_sf(reserve_data: &[u8], amount: u128) -> Result<u128, ProgramError> {
    let decimals = u32::try_from(u64_at(reserve_data, reserve::MINT_DECIMALS))
        .map_err(|_| fail("decimals"))?;
    amount
        .checked_mul(u128_at(reserve_data, reserve::MARKET_PRICE_SF))
        .map(|v| v / 10u128.pow(decimals))
        .ok_or_else(|| fail("value beyond u128"))
}

/// The vanilla obligation of `owner` in `market` (tag 0, id 0, both seed accounts default).
pub fn vanilla_obligation(owner: &Pubkey, market: &Pubkey) -> Pubkey {
    let zero = Pubkey::default();
    Pubkey::find_program_address(
        &[
            &[0],
            &[0],
            owner.as_ref(),
            market.as_ref(),
            zero.as_ref(),
            zero.as_ref(),
        ],
        &KLEND,
    )
    .0
}

/// The collateral units `owner`'s vanilla obligation holds of `reserve` (0 when none).
pub fn deposited(obligation_data: &[u8], reserve_key: &Pubkey) -> u64 {
    use obligation::*;
    (0..DEPOSIT_COUNT)
        .map(|i| DEPOSITS + i * DEPOSIT_STRIDE)
        .find(|at| key(obligation_data, *at) == *reserve_key)
        .map_or(0, |at| u64_at(obligation_data, at + DEPOSITED_AMOUNT))
}

fn fail(why: &str) -> ProgramError {
    super::fail("klend", why)
}

fn check(condition: bool, why: &str) -> ProgramResult {
    if condition {
        Ok(())
    } else {
        Err(fail(why))
    }
}

fn klend(program_id: &Pubkey, accounts: &[AccountInfo], data: &[u8]) -> ProgramResult {
    check(data.len() >= 8, "no discriminator")?;
    let (tag, args) = data.split_at(8);
    let tag: [u8; 8] = tag.try_into().unwrap();
    match tag {
        discriminator::INIT_USER_METADATA => init_user_metadata(program_id, accounts, args),
        discriminator::INIT_OBLIGATION => init_obligation(program_id, accounts, args),
        discriminator::REFRESH_RESERVE => refresh_reserve(program_id, accounts, args),
        discriminator::REFRESH_OBLIGATION => refresh_obligation(program_id, accounts, args),
        discriminator::DEPOSIT_V2 => move_collateral(program_id, accounts, args, Way::Deposit),
        discriminator::WITHDRAW_V2 => move_collateral(program_id, accounts, args, Way::Withdraw),
        discriminator::BORROW_V2 => borrow(program_id, accounts, args),
        discriminator::REPAY_V2 => repay(program_id, accounts, args),
        _ => Err(fail("instruction not in the double")),
    }
}

/// A program account of this type: owner, length and discriminator.
fn typed(
    program_id: &Pubkey,
    info: &AccountInfo,
    len: usize,
    discriminator: [u8; 8],
    what: &str,
) -> ProgramResult {
    super::typed("klend", program_id, info, len, discriminator, what)
}

fn market_checked(program_id: &Pubkey, info: &AccountInfo) -> ProgramResult {
    typed(
        program_id,
        info,
        LENDING_MARKET_LEN,
        discriminator::LENDING_MARKET,
        "not a lending market of the program",
    )
}

/// A market of the program that is not in emergency mode: what the program's
/// `emergency_mode_disabled` asks of every refresh and every user instruction.
fn market_operating(program_id: &Pubkey, info: &AccountInfo) -> ProgramResult {
    market_checked(program_id, info)?;
    check(
        info.data.borrow()[market::EMERGENCY_MODE] == 0,
        "the market is in emergency mode",
    )
}

/// `check_same_elevation_group`: an obligation in a group takes deposits into and borrows from
/// only the reserves in that group (`InconsistentElevationGroup`).
fn same_group(obligation_data: &[u8], reserve_data: &[u8]) -> ProgramResult {
    let group = obligation_data[obligation::ELEVATION_GROUP];
    let at = reserve::ELEVATION_GROUPS;
    check(
        group == 0 || reserve_data[at..at + reserve::ELEVATION_GROUP_COUNT].contains(&group),
        "the reserve is not in the obligation's elevation group",
    )
}

/// Whether an obligation is in no elevation group (the limits outside groups apply to it).
fn outside_groups(obligation_data: &[u8]) -> bool {
    obligation_data[obligation::ELEVATION_GROUP] == 0
}

/// Creates `info` at its PDA (`seeds` with `bump`) for the program, `len` bytes, paid by
/// `payer`.
fn create<'a>(
    program_id: &Pubkey,
    payer: &AccountInfo<'a>,
    info: &AccountInfo<'a>,
    system: &AccountInfo<'a>,
    len: usize,
    seeds: &[&[u8]],
) -> ProgramResult {
    check(info.lamports() == 0, "account already exists")?;
    let lamports = Rent::get()?.minimum_balance(len);
    invoke_signed(
        &system_instruction::create_account(payer.key, info.key, lamports, len as u64, program_id),
        &[payer.clone(), info.clone(), system.clone()],
        &[seeds],
    )
}

fn init_user_metadata(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    check(
        accounts.len() == 6 && args.len() == 32,
        "init_user_metadata takes 6 accounts and a lookup table key",
    )?;
    let (owner, payer, metadata, referrer, rent, system) = (
        &accounts[0],
        &accounts[1],
        &accounts[2],
        &accounts[3],
        &accounts[4],
        &accounts[5],
    );
    check(owner.is_signer, "the owner signs")?;
    check(payer.is_signer && payer.is_writable, "the fee payer signs")?;
    check(metadata.is_writable, "user metadata writable")?;
    check(
        *referrer.key == *program_id,
        "a referrer is not in the double",
    )?;
    check(*rent.key == RENT_SYSVAR, "not the rent sysvar")?;
    check(*system.key == SYSTEM_PROGRAM, "not the system program")?;
    let (expected, bump) =
        Pubkey::find_program_address(&[b"user_meta", owner.key.as_ref()], program_id);
    check(*metadata.key == expected, "not the owner's user metadata")?;
    create(
        program_id,
        payer,
        metadata,
        system,
        user_metadata::LEN,
        &[b"user_meta", owner.key.as_ref(), &[bump]],
    )?;
    let mut data = metadata.data.borrow_mut();
    put(&mut data, 0, &discriminator::USER_METADATA);
    put(
        &mut data,
        user_metadata::BUMP,
        &u64::from(bump).to_le_bytes(),
    );
    put(&mut data, user_metadata::LOOKUP_TABLE, args);
    put(&mut data, user_metadata::OWNER, owner.key.as_ref());
    Ok(())
}

fn init_obligation(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    check(
        accounts.len() == 9 && args.len() == 2,
        "init_obligation takes 9 accounts and (tag, id)",
    )?;
    let (owner, payer, obligation, market, seed1, seed2, metadata, rent, system) = (
        &accounts[0],
        &accounts[1],
        &accounts[2],
        &accounts[3],
        &accounts[4],
        &accounts[5],
        &accounts[6],
        &accounts[7],
        &accounts[8],
    );
    check(owner.is_signer, "the owner signs")?;
    check(payer.is_signer && payer.is_writable, "the fee payer signs")?;
    check(obligation.is_writable, "obligation writable")?;
    market_checked(program_id, market)?;
    // Tag 0 is the vanilla obligation: both seed accounts must be the default key.
    check(
        args[0] != 0 || (*seed1.key == Pubkey::default() && *seed2.key == Pubkey::default()),
        "a vanilla obligation's seed accounts are the default key",
    )?;
    typed(
        program_id,
        metadata,
        user_metadata::LEN,
        discriminator::USER_METADATA,
        "the owner's user metadata must exist first",
    )?;
    check(
        key(&metadata.data.borrow(), user_metadata::OWNER) == *owner.key,
        "another owner's user metadata",
    )?;
    check(*rent.key == RENT_SYSVAR, "not the rent sysvar")?;
    check(*system.key == SYSTEM_PROGRAM, "not the system program")?;
    let seeds: [&[u8]; 6] = [
        &args[0..1],
        &args[1..2],
        owner.key.as_ref(),
        market.key.as_ref(),
        seed1.key.as_ref(),
        seed2.key.as_ref(),
    ];
    let (expected, bump) = Pubkey::find_program_address(&seeds, program_id);
    check(*obligation.key == expected, "not the obligation's address")?;
    let bump = [bump];
    let mut signer: Vec<&[u8]> = seeds.to_vec();
    signer.push(&bump);
    create(
        program_id,
        payer,
        obligation,
        system,
        obligation::LEN,
        &signer,
    )?;
    let mut data = obligation.data.borrow_mut();
    put(&mut data, 0, &discriminator::OBLIGATION);
    put(
        &mut data,
        obligation::TAG,
        &u64::from(args[0]).to_le_bytes(),
    );
    put(
        &mut data,
        obligation::LAST_UPDATE_SLOT,
        &Clock::get()?.slot.to_le_bytes(),
    );
    data[obligation::STALE] = 1;
    put(&mut data, obligation::LENDING_MARKET, market.key.as_ref());
    put(&mut data, obligation::OWNER, owner.key.as_ref());
    Ok(())
}

fn reserve_checked(program_id: &Pubkey, info: &AccountInfo) -> ProgramResult {
    typed(
        program_id,
        info,
        reserve::LEN,
        discriminator::RESERVE,
        "not a reserve of the program",
    )
}

fn obligation_checked(program_id: &Pubkey, info: &AccountInfo) -> ProgramResult {
    typed(
        program_id,
        info,
        obligation::LEN,
        discriminator::OBLIGATION,
        "not an obligation of the program",
    )?;
    check(info.is_writable, "obligation writable")
}

/// Refreshed in this slot and not marked stale since.
fn fresh(data: &[u8], slot_at: usize, stale_at: usize, now: u64) -> bool {
    u64_at(data, slot_at) == now && data[stale_at] == 0
}

/// The reserve's liquidity in whole base units: available plus borrowed (floored, in the
/// reserve's favour).
fn total_liquidity(data: &[u8]) -> u128 {
    u128::from(u64_at(data, reserve::AVAILABLE))
        + (u128_at(data, reserve::BORROWED_SF) >> FRACTION_SHIFT)
}

/// The curve's borrow rate in bps at the reserve's utilisation, linearly between points.
fn borrow_rate_bps(data: &[u8]) -> u128 {
    let total = total_liquidity(data);
    if total == 0 {
        return 0;
    }
    let utilisation = (u128_at(data, reserve::BORROWED_SF) >> FRACTION_SHIFT) * 10_000 / total;
    let point = |i: usize| {
        let at = reserve::BORROW_RATE_CURVE + i * 8;
        (
            u128::from(u32::from_le_bytes(data[at..at + 4].try_into().unwrap())),
            u128::from(u32::from_le_bytes(data[at + 4..at + 8].try_into().unwrap())),
        )
    };
    for i in 0..10 {
        let ((u0, r0), (u1, r1)) = (point(i), point(i + 1));
        if utilisation <= u1 {
            if u1 == u0 {
                return r1;
            }
            return if r1 >= r0 {
                r0 + (r1 - r0) * (utilisation - u0) / (u1 - u0)
            } else {
                r0 - (r0 - r1) * (utilisation - u0) / (u1 - u0)
            };
        }
    }
    point(10).1
}

fn refresh_reserve(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    check(
        args.is_empty() && accounts.len() == 6,
        "refresh_reserve takes 6 accounts, no arguments",
    )?;
    let (reserve, market) = (&accounts[0], &accounts[1]);
    reserve_checked(program_id, reserve)?;
    check(reserve.is_writable, "reserve writable")?;
    market_operating(program_id, market)?;
    let now = Clock::get()?.slot;
    let mut data = reserve.data.borrow_mut();
    check(
        key(&data, reserve::LENDING_MARKET) == *market.key,
        "not the reserve's market",
    )?;
    for (oracle, at) in accounts[2..].iter().zip(reserve::ORACLES) {
        let configured = key(&data, at);
        let expected = if configured == Pubkey::default() {
            *program_id
        } else {
            configured
        };
        check(*oracle.key == expected, "not the reserve's oracle")?;
    }
    let slots = u128::from(now.saturating_sub(u64_at(&data, reserve::LAST_UPDATE_SLOT)));
    let bps = borrow_rate_bps(&data);
    // What `value` grows by at the rate over the slots (the borrowed total and the cumulative
    // rate alike, so an obligation's debt grows as the reserve's does).
    let grown = |value: u128| {
        (value / 10_000)
            .checked_mul(bps)
            .and_then(|v| (v / SLOTS_PER_YEAR).checked_mul(slots))
            .and_then(|interest| value.checked_add(interest))
            .ok_or_else(|| fail("interest beyond u128"))
    };
    let borrowed = grown(u128_at(&data, reserve::BORROWED_SF))?;
    let rate = grown(u128_at(&data, reserve::CUMULATIVE_BORROW_RATE))?;
    put(&mut data, reserve::BORROWED_SF, &borrowed.to_le_bytes());
    put(
        &mut data,
        reserve::CUMULATIVE_BORROW_RATE,
        &rate.to_le_bytes(),
    );
    put(&mut data, reserve::LAST_UPDATE_SLOT, &now.to_le_bytes());
    data[reserve::STALE] = 0;
    Ok(())
}

/// The reserves an obligation names: its deposits, then its borrows.
fn obligation_reserves(data: &[u8]) -> Vec<Pubkey> {
    use obligation::*;
    let deposits = (0..DEPOSIT_COUNT).map(|i| key(data, DEPOSITS + i * DEPOSIT_STRIDE));
    let borrows = (0..BORROW_COUNT).map(|i| key(data, BORROWS + i * BORROW_STRIDE));
    deposits
        .chain(borrows)
        .filter(|k| *k != Pubkey::default())
        .collect()
}

fn refresh_obligation(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    check(
        args.is_empty() && accounts.len() >= 2,
        "refresh_obligation takes the market, the obligation and its reserves",
    )?;
    let (market, obligation, reserves) = (&accounts[0], &accounts[1], &accounts[2..]);
    market_operating(program_id, market)?;
    obligation_checked(program_id, obligation)?;
    let now = Clock::get()?.slot;
    let mut data = obligation.data.borrow_mut();
    check(
        key(&data, obligation::LENDING_MARKET) == *market.key,
        "not the obligation's market",
    )?;
    let named = obligation_reserves(&data);
    check(
        reserves.iter().map(|r| *r.key).eq(named.iter().copied()),
        "the obligation's reserves, deposits then borrows, in its order",
    )?;
    for r in reserves {
        reserve_checked(program_id, r)?;
        check(
            fresh(
                &r.data.borrow(),
                reserve::LAST_UPDATE_SLOT,
                reserve::STALE,
                now,
            ),
            "a reserve of the obligation is stale: refresh it in this slot",
        )?;
    }
    // Each debt grows as its reserve's cumulative borrow rate has since the entry's refresh.
    for at in
        (0..obligation::BORROW_COUNT).map(|i| obligation::BORROWS + i * obligation::BORROW_STRIDE)
    {
        let reserve_key = key(&data, at);
        if reserve_key == Pubkey::default() {
            continue;
        }
        let lender = reserves
            .iter()
            .find(|r| *r.key == reserve_key)
            .ok_or_else(|| fail("a borrow's reserve is missing"))?;
        let now_rate = u128_at(&lender.data.borrow(), reserve::CUMULATIVE_BORROW_RATE);
        let then_rate = u128_at(&data, at + obligation::BORROW_RATE);
        let debt = u128_at(&data, at + obligation::BORROWED_AMOUNT_SF);
        let debt = scaled_up(debt, now_rate, then_rate)?;
        put(
            &mut data,
            at + obligation::BORROWED_AMOUNT_SF,
            &debt.to_le_bytes(),
        );
        put(
            &mut data,
            at + obligation::BORROW_RATE,
            &now_rate.to_le_bytes(),
        );
    }
    // The values the program keeps for its loan-to-value checks, at the reserves' prices.
    let of = |key: &Pubkey| {
        reserves
            .iter()
            .find(|r| r.key == key)
            .ok_or_else(|| fail("a reserve of the obligation is missing"))
    };
    let mut deposited = 0u128;
    let mut borrowing_disabled = false;
    for at in (0..obligation::DEPOSIT_COUNT)
        .map(|i| obligation::DEPOSITS + i * obligation::DEPOSIT_STRIDE)
    {
        let reserve_key = key(&data, at);
        if reserve_key == Pubkey::default() {
            continue;
        }
        let held = u128::from(u64_at(&data, at + obligation::DEPOSITED_AMOUNT));
        let source = of(&reserve_key)?.data.borrow();
        // `refresh_obligation_deposits`: outside an elevation group, collateral its reserve
        // lends against only inside one stops the obligation's borrowing.
        borrowing_disabled |= outside_groups(&data) && source[reserve::COLLATERAL_EMODE_ONLY] != 0;
        let total = u128::from(u64_at(&source, reserve::COLLATERAL_TOTAL));
        // No collateral outstanding yet: a unit is a unit of liquidity.
        let liquidity = (held * total_liquidity(&source))
            .checked_div(total)
            .unwrap_or(held);
        deposited = deposited
            .checked_add(usd_sf(&source, liquidity)?)
            .ok_or_else(|| fail("value beyond u128"))?;
    }
    let mut owed = 0u128;
    for at in
        (0..obligation::BORROW_COUNT).map(|i| obligation::BORROWS + i * obligation::BORROW_STRIDE)
    {
        let reserve_key = key(&data, at);
        if reserve_key == Pubkey::default() {
            continue;
        }
        let debt =
            u128_at(&data, at + obligation::BORROWED_AMOUNT_SF).div_ceil(1u128 << FRACTION_SHIFT);
        owed = owed
            .checked_add(usd_sf(&of(&reserve_key)?.data.borrow(), debt)?)
            .ok_or_else(|| fail("value beyond u128"))?;
    }
    put(
        &mut data,
        obligation::DEPOSITED_VALUE_SF,
        &deposited.to_le_bytes(),
    );
    put(&mut data, obligation::DEBT_VALUE_SF, &owed.to_le_bytes());
    put(
        &mut data,
        obligation::ALLOWED_BORROW_VALUE_SF,
        &(deposited / 100 * LOAN_TO_VALUE_PCT).to_le_bytes(),
    );
    data[obligation::BORROWING_DISABLED] = u8::from(borrowing_disabled);
    put(&mut data, obligation::LAST_UPDATE_SLOT, &now.to_le_bytes());
    data[obligation::STALE] = 0;
    Ok(())
}

/// `debt` (fractions) × `now_rate` / `then_rate`, rounded up (in the reserve's favour), without
/// overflowing: whole units and the fraction are scaled apart.
fn scaled_up(debt: u128, now_rate: u128, then_rate: u128) -> Result<u128, ProgramError> {
    check(
        then_rate > 0 && now_rate >= then_rate,
        "a borrow rate went back",
    )?;
    let ratio = (now_rate << FRACTION_SHIFT)
        .checked_div(then_rate)
        .ok_or_else(|| fail("rate ratio"))?;
    let whole = debt >> FRACTION_SHIFT;
    let part = debt & ((1u128 << FRACTION_SHIFT) - 1);
    let part = (part * ratio).div_ceil(1u128 << FRACTION_SHIFT);
    whole
        .checked_mul(ratio)
        .and_then(|w| w.checked_add(part))
        .ok_or_else(|| fail("debt beyond u128"))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    Deposit,
    Withdraw,
}

fn move_collateral(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    args: &[u8],
    way: Way,
) -> ProgramResult {
    check(
        accounts.len() == 17 && args.len() == 8,
        "17 accounts and a u64 amount",
    )?;
    let amount = u64::from_le_bytes(args.try_into().unwrap());
    check(amount > 0, "zero amount")?;
    let [owner, obligation, market, authority, reserve, liquidity_mint, a6, collateral_mint, a8, user_liquidity, placeholder, collateral_token_program, liquidity_token_program, instructions, farm_user, farm_state, farms] =
        accounts
    else {
        unreachable!("17 accounts checked above");
    };
    // The deposit names the liquidity supply 6th and the collateral vault 8th; the withdrawal
    // the other way round.
    let (liquidity_supply, collateral_vault) = match way {
        Way::Deposit => (a6, a8),
        Way::Withdraw => (a8, a6),
    };
    check(owner.is_signer && owner.is_writable, "the owner signs")?;
    obligation_checked(program_id, obligation)?;
    market_operating(program_id, market)?;
    reserve_checked(program_id, reserve)?;
    let (expected_authority, bump) =
        Pubkey::find_program_address(&[b"lma", market.key.as_ref()], program_id);
    check(
        *authority.key == expected_authority,
        "not the market's authority",
    )?;
    for writable in [
        reserve,
        liquidity_supply,
        collateral_mint,
        collateral_vault,
        user_liquidity,
    ] {
        check(
            writable.is_writable,
            "an account the transfer writes is read-only",
        )?;
    }
    check(
        *placeholder.key == *program_id,
        "the placeholder collateral account is absent",
    )?;
    check(
        *collateral_token_program.key == spl_token::ID,
        "not the collateral token program",
    )?;
    check(
        *instructions.key == INSTRUCTIONS_SYSVAR,
        "not the instructions sysvar",
    )?;
    check(*farms.key == FARMS, "not the farms program")?;
    let now = Clock::get()?.slot;
    let (liquidity, collateral_total) = {
        let data = reserve.data.borrow();
        check(
            key(&data, reserve::LENDING_MARKET) == *market.key,
            "not the reserve's market",
        )?;
        check(
            key(&data, reserve::LIQUIDITY_MINT) == *liquidity_mint.key,
            "not the reserve's liquidity mint",
        )?;
        check(
            key(&data, reserve::LIQUIDITY_SUPPLY) == *liquidity_supply.key,
            "not the reserve's liquidity supply",
        )?;
        check(
            key(&data, reserve::COLLATERAL_MINT) == *collateral_mint.key,
            "not the reserve's collateral mint",
        )?;
        check(
            key(&data, reserve::COLLATERAL_SUPPLY) == *collateral_vault.key,
            "not the reserve's collateral vault",
        )?;
        check(
            key(&data, reserve::TOKEN_PROGRAM) == *liquidity_token_program.key,
            "not the reserve's liquidity token program",
        )?;
        check(
            key(&data, reserve::FARM_COLLATERAL) == Pubkey::default(),
            "reserves with farms are not in the double",
        )?;
        check(
            *farm_user.key == *program_id && *farm_state.key == *program_id,
            "the reserve has no farm: both farm accounts are absent",
        )?;
        check(
            fresh(&data, reserve::LAST_UPDATE_SLOT, reserve::STALE, now),
            "reserve is stale: refresh it in this slot",
        )?;
        (
            total_liquidity(&data),
            u128::from(u64_at(&data, reserve::COLLATERAL_TOTAL)),
        )
    };
    {
        let data = obligation.data.borrow();
        check(
            key(&data, obligation::OWNER) == *owner.key,
            "another wallet's obligation",
        )?;
        check(
            key(&data, obligation::LENDING_MARKET) == *market.key,
            "an obligation of another market",
        )?;
        check(
            fresh(&data, obligation::LAST_UPDATE_SLOT, obligation::STALE, now),
            "obligation is stale: refresh it in this slot",
        )?;
    }
    let seeds: &[&[u8]] = &[b"lma", market.key.as_ref(), &[bump]];
    let (liquidity_moved, collateral_moved) = match way {
        Way::Deposit => {
            {
                // `deposit_reserve_liquidity_checks` and `deposit_reserve_liquidity`.
                let data = reserve.data.borrow();
                check(
                    data[reserve::STATUS] != STATUS_OBSOLETE,
                    "the reserve is obsolete",
                )?;
                // `DepositDisabledOutsideElevationGroup`: such collateral is not added to an
                // obligation in no group that owes; then `check_same_elevation_group`.
                let held = obligation.data.borrow();
                check(
                    data[reserve::COLLATERAL_EMODE_ONLY] == 0
                        || !outside_groups(&held)
                        || u128_at(&held, obligation::DEBT_VALUE_SF) == 0,
                    "the reserve's collateral backs borrows only inside an elevation group",
                )?;
                same_group(&held, &data)?;
                check(
                    liquidity + u128::from(amount)
                        <= u128::from(u64_at(&data, reserve::DEPOSIT_LIMIT)),
                    "the deposit passes the reserve's deposit limit",
                )?;
            }
            let minted = if liquidity == 0 || collateral_total == 0 {
                u128::from(amount)
            } else {
                u128::from(amount) * collateral_total / liquidity
            };
            let minted = u64::try_from(minted).map_err(|_| fail("mints beyond u64"))?;
            check(minted > 0, "deposit too small for one collateral unit")?;
            invoke(
                &spl_token::instruction::transfer(
                    &spl_token::ID,
                    user_liquidity.key,
                    liquidity_supply.key,
                    owner.key,
                    &[],
                    amount,
                )?,
                &[
                    user_liquidity.clone(),
                    liquidity_supply.clone(),
                    owner.clone(),
                    liquidity_token_program.clone(),
                ],
            )?;
            invoke_signed(
                &spl_token::instruction::mint_to(
                    &spl_token::ID,
                    collateral_mint.key,
                    collateral_vault.key,
                    authority.key,
                    &[],
                    minted,
                )?,
                &[
                    collateral_mint.clone(),
                    collateral_vault.clone(),
                    authority.clone(),
                    collateral_token_program.clone(),
                ],
                &[seeds],
            )?;
            (amount, minted)
        }
        Way::Withdraw => {
            {
                let data = obligation.data.borrow();
                check(
                    obligation_reserves(&data).len() == deposit_count(&data),
                    "the double cannot price borrows: repay them first",
                )?;
                check(
                    deposited(&data, reserve.key) >= amount,
                    "withdraws more collateral than the obligation holds",
                )?;
            }
            let paid = u64::try_from(u128::from(amount) * liquidity / collateral_total)
                .map_err(|_| fail("pays beyond u64"))?;
            check(
                paid <= u64_at(&reserve.data.borrow(), reserve::AVAILABLE),
                "not enough liquidity available",
            )?;
            invoke_signed(
                &spl_token::instruction::burn(
                    &spl_token::ID,
                    collateral_vault.key,
                    collateral_mint.key,
                    authority.key,
                    &[],
                    amount,
                )?,
                &[
                    collateral_vault.clone(),
                    collateral_mint.clone(),
                    authority.clone(),
                    collateral_token_program.clone(),
                ],
                &[seeds],
            )?;
            invoke_signed(
                &spl_token::instruction::transfer(
                    &spl_token::ID,
                    liquidity_supply.key,
                    user_liquidity.key,
                    authority.key,
                    &[],
                    paid,
                )?,
                &[
                    liquidity_supply.clone(),
                    user_liquidity.clone(),
                    authority.clone(),
                    liquidity_token_program.clone(),
                ],
                &[seeds],
            )?;
            (paid, amount)
        }
    };
    {
        let mut data = reserve.data.borrow_mut();
        count_against_cap(
            &mut data,
            Cap::Withdrawals,
            liquidity_moved,
            way,
            Clock::get()?.unix_timestamp,
        )?;
        let available = u64_at(&data, reserve::AVAILABLE);
        let total = u64_at(&data, reserve::COLLATERAL_TOTAL);
        let (available, total) = match way {
            Way::Deposit => (
                available.checked_add(liquidity_moved),
                total.checked_add(collateral_moved),
            ),
            Way::Withdraw => (
                available.checked_sub(liquidity_moved),
                total.checked_sub(collateral_moved),
            ),
        };
        let (available, total) = available
            .zip(total)
            .ok_or_else(|| fail("reserve totals out of range"))?;
        put(&mut data, reserve::AVAILABLE, &available.to_le_bytes());
        put(&mut data, reserve::COLLATERAL_TOTAL, &total.to_le_bytes());
        data[reserve::STALE] = 1;
    }
    credit(obligation, reserve.key, collateral_moved, way)
}

fn deposit_count(data: &[u8]) -> usize {
    use obligation::*;
    (0..DEPOSIT_COUNT)
        .filter(|i| key(data, DEPOSITS + i * DEPOSIT_STRIDE) != Pubkey::default())
        .count()
}

/// Adds or takes `collateral` on the obligation's entry for `reserve_key` (a new entry in the
/// first free slot; an emptied entry is cleared), and marks the obligation stale.
fn credit(
    obligation: &AccountInfo,
    reserve_key: &Pubkey,
    collateral: u64,
    way: Way,
) -> ProgramResult {
    use obligation::*;
    let mut data = obligation.data.borrow_mut();
    let slots = (0..DEPOSIT_COUNT).map(|i| DEPOSITS + i * DEPOSIT_STRIDE);
    let at = match slots.clone().find(|at| key(&data, *at) == *reserve_key) {
        Some(at) => at,
        None => {
            check(way == Way::Deposit, "no deposit of this reserve")?;
            let free = slots
                .into_iter()
                .find(|at| key(&data, *at) == Pubkey::default())
                .ok_or_else(|| fail("the obligation has no free deposit slot"))?;
            put(&mut data, free, reserve_key.as_ref());
            free
        }
    };
    let held = u64_at(&data, at + DEPOSITED_AMOUNT);
    let held = match way {
        Way::Deposit => held.checked_add(collateral),
        Way::Withdraw => held.checked_sub(collateral),
    }
    .ok_or_else(|| fail("deposited amount out of range"))?;
    if held == 0 {
        data[at..at + DEPOSIT_STRIDE].fill(0);
    } else {
        put(&mut data, at + DEPOSITED_AMOUNT, &held.to_le_bytes());
    }
    data[STALE] = 1;
    Ok(())
}

/// The reserve and obligation checks a borrow and a repayment share: both of the program,
/// writable, of `market`, refreshed in this slot; the obligation `owner`'s; the reserve's
/// liquidity mint, supply and token program as named; no farm, so both farm accounts absent.
struct DebtAccounts<'a, 'b> {
    owner: &'a AccountInfo<'b>,
    obligation: &'a AccountInfo<'b>,
    market: &'a AccountInfo<'b>,
    reserve: &'a AccountInfo<'b>,
    liquidity_mint: &'a AccountInfo<'b>,
    supply: &'a AccountInfo<'b>,
    token_program: &'a AccountInfo<'b>,
    instructions: &'a AccountInfo<'b>,
    farm_user: &'a AccountInfo<'b>,
    farm_state: &'a AccountInfo<'b>,
    farms: &'a AccountInfo<'b>,
}

impl DebtAccounts<'_, '_> {
    fn check(&self, program_id: &Pubkey) -> ProgramResult {
        check(self.owner.is_signer, "the owner signs")?;
        obligation_checked(program_id, self.obligation)?;
        market_operating(program_id, self.market)?;
        reserve_checked(program_id, self.reserve)?;
        check(self.reserve.is_writable, "reserve writable")?;
        check(self.supply.is_writable, "liquidity supply writable")?;
        check(
            *self.instructions.key == INSTRUCTIONS_SYSVAR,
            "not the instructions sysvar",
        )?;
        check(
            *self.farm_user.key == *program_id && *self.farm_state.key == *program_id,
            "the reserve has no farm: both farm accounts are absent",
        )?;
        check(*self.farms.key == FARMS, "not the farms program")?;
        let now = Clock::get()?.slot;
        let data = self.reserve.data.borrow();
        check(
            key(&data, reserve::LENDING_MARKET) == *self.market.key,
            "not the reserve's market",
        )?;
        check(
            key(&data, reserve::LIQUIDITY_MINT) == *self.liquidity_mint.key,
            "not the reserve's liquidity mint",
        )?;
        check(
            key(&data, reserve::LIQUIDITY_SUPPLY) == *self.supply.key,
            "not the reserve's liquidity supply",
        )?;
        check(
            key(&data, reserve::TOKEN_PROGRAM) == *self.token_program.key,
            "not the reserve's liquidity token program",
        )?;
        check(
            key(&data, reserve::FARM_COLLATERAL) == Pubkey::default(),
            "reserves with farms are not in the double",
        )?;
        check(
            fresh(&data, reserve::LAST_UPDATE_SLOT, reserve::STALE, now),
            "reserve is stale: refresh it in this slot",
        )?;
        let data = self.obligation.data.borrow();
        check(
            key(&data, obligation::OWNER) == *self.owner.key,
            "another wallet's obligation",
        )?;
        check(
            key(&data, obligation::LENDING_MARKET) == *self.market.key,
            "an obligation of another market",
        )?;
        check(
            fresh(&data, obligation::LAST_UPDATE_SLOT, obligation::STALE, now),
            "obligation is stale: refresh it in this slot",
        )
    }
}

/// The obligation's borrow entry for `reserve_key`, if it has one.
fn borrow_entry(data: &[u8], reserve_key: &Pubkey) -> Option<usize> {
    use obligation::*;
    (0..BORROW_COUNT)
        .map(|i| BORROWS + i * BORROW_STRIDE)
        .find(|at| key(data, *at) == *reserve_key)
}

/// The debt of `owner`'s vanilla obligation to `reserve_key` in base units, rounded up (0 when
/// none): as the obligation was last refreshed.
pub fn borrowed(obligation_data: &[u8], reserve_key: &Pubkey) -> u64 {
    borrow_entry(obligation_data, reserve_key).map_or(0, |at| {
        let debt = u128_at(obligation_data, at + obligation::BORROWED_AMOUNT_SF);
        u64::try_from(debt.div_ceil(1u128 << FRACTION_SHIFT)).unwrap_or(u64::MAX)
    })
}

/// `borrow_obligation_liquidity_v2`: lends `amount` from the reserve's supply to the owner's
/// token account against the obligation's collateral, up to [`LOAN_TO_VALUE_PCT`] of its value
/// at the reserves' market prices as of the obligation's refresh in this slot.
fn borrow(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    check(
        accounts.len() == 15 && args.len() == 8,
        "15 accounts and a u64 amount",
    )?;
    let amount = u64::from_le_bytes(args.try_into().unwrap());
    check(amount > 0, "zero amount")?;
    let [owner, obligation, market, authority, reserve, liquidity_mint, supply, fee_receiver, destination, referrer, token_program, instructions, farm_user, farm_state, farms] =
        accounts
    else {
        unreachable!("15 accounts checked above");
    };
    DebtAccounts {
        owner,
        obligation,
        market,
        reserve,
        liquidity_mint,
        supply,
        token_program,
        instructions,
        farm_user,
        farm_state,
        farms,
    }
    .check(program_id)?;
    let (expected_authority, bump) =
        Pubkey::find_program_address(&[b"lma", market.key.as_ref()], program_id);
    check(
        *authority.key == expected_authority,
        "not the market's authority",
    )?;
    check(
        fee_receiver.is_writable && destination.is_writable,
        "the fee receiver and the destination are writable",
    )?;
    check(
        *referrer.key == *program_id,
        "referrers are not in the double",
    )?;
    // `check_borrow_possible` and `check_non_elevation_group_borrowing_enabled`.
    check(
        market.data.borrow()[market::BORROW_DISABLED] == 0,
        "the market lends nothing now",
    )?;
    let in_no_group = {
        let held = obligation.data.borrow();
        same_group(&held, &reserve.data.borrow())?;
        check(
            !outside_groups(&held) || held[obligation::BORROWING_DISABLED] == 0,
            "the obligation's collateral backs borrows only inside an elevation group",
        )?;
        outside_groups(&held)
    };
    let (added, rate) = {
        let data = reserve.data.borrow();
        check(
            key(&data, reserve::FEE_VAULT) == *fee_receiver.key,
            "not the reserve's fee receiver",
        )?;
        check(
            amount <= u64_at(&data, reserve::AVAILABLE),
            "not enough liquidity available",
        )?;
        // `borrow_obligation_liquidity`: the amount and what is lent, against the limit.
        check(
            u128_at(&data, reserve::BORROWED_SF)
                .saturating_add(u128::from(amount) << FRACTION_SHIFT)
                <= u128::from(u64_at(&data, reserve::BORROW_LIMIT)) << FRACTION_SHIFT,
            "the borrow passes the reserve's borrow limit",
        )?;
        (
            usd_sf(&data, u128::from(amount))?,
            u128_at(&data, reserve::CUMULATIVE_BORROW_RATE),
        )
    };
    {
        // The obligation is fresh (checked above), so its values are this slot's.
        let data = obligation.data.borrow();
        let owed = u128_at(&data, obligation::DEBT_VALUE_SF)
            .checked_add(added)
            .ok_or_else(|| fail("value beyond u128"))?;
        check(
            owed <= u128_at(&data, obligation::ALLOWED_BORROW_VALUE_SF),
            "borrows beyond the obligation's loan-to-value",
        )?;
    }
    let seeds: &[&[u8]] = &[b"lma", market.key.as_ref(), &[bump]];
    invoke_signed(
        &spl_token::instruction::transfer(
            &spl_token::ID,
            supply.key,
            destination.key,
            authority.key,
            &[],
            amount,
        )?,
        &[
            supply.clone(),
            destination.clone(),
            authority.clone(),
            token_program.clone(),
        ],
        &[seeds],
    )?;
    let lent = u128::from(amount) << FRACTION_SHIFT;
    {
        let mut data = reserve.data.borrow_mut();
        count_against_cap(
            &mut data,
            Cap::Debt,
            amount,
            Way::Withdraw,
            Clock::get()?.unix_timestamp,
        )?;
        let available = u64_at(&data, reserve::AVAILABLE) - amount;
        let total = u128_at(&data, reserve::BORROWED_SF)
            .checked_add(lent)
            .ok_or_else(|| fail("borrowed beyond u128"))?;
        put(&mut data, reserve::AVAILABLE, &available.to_le_bytes());
        put(&mut data, reserve::BORROWED_SF, &total.to_le_bytes());
        data[reserve::STALE] = 1;
        // `BorrowingAboveUtilizationRateDisabled`: lent at or above the ceiling after it.
        let ceiling = u128::from(data[reserve::UTILIZATION_CEILING_PCT]);
        let supply = (u128::from(available) << FRACTION_SHIFT)
            .checked_add(total)
            .ok_or_else(|| fail("supply beyond u128"))?;
        let beyond = || fail("utilisation beyond u128");
        let lent_pct = total.checked_mul(100).ok_or_else(beyond)?;
        let ceiling_of_supply = ceiling.checked_mul(supply).ok_or_else(beyond)?;
        check(
            ceiling == 0 || lent_pct < ceiling_of_supply,
            "the borrow leaves the reserve lent at or above its utilisation ceiling",
        )?;
        // An obligation in no elevation group is counted against that limit (the trackers
        // inside groups are not in the double).
        if in_no_group {
            let outside = u64_at(&data, reserve::BORROWED_OUTSIDE_ELEVATION_GROUP)
                .checked_add(amount)
                .ok_or_else(|| fail("lent outside groups beyond u64"))?;
            check(
                outside <= u64_at(&data, reserve::BORROW_LIMIT_OUTSIDE_ELEVATION_GROUP),
                "the borrow passes what the reserve lends outside elevation groups",
            )?;
            put(
                &mut data,
                reserve::BORROWED_OUTSIDE_ELEVATION_GROUP,
                &outside.to_le_bytes(),
            );
        }
    }
    let mut data = obligation.data.borrow_mut();
    let at = match borrow_entry(&data, reserve.key) {
        Some(at) => at,
        None => {
            let free = borrow_entry(&data, &Pubkey::default())
                .ok_or_else(|| fail("the obligation has no free borrow slot"))?;
            put(&mut data, free, reserve.key.as_ref());
            put(
                &mut data,
                free + obligation::BORROW_RATE,
                &rate.to_le_bytes(),
            );
            free
        }
    };
    let debt = u128_at(&data, at + obligation::BORROWED_AMOUNT_SF)
        .checked_add(lent)
        .ok_or_else(|| fail("debt beyond u128"))?;
    put(
        &mut data,
        at + obligation::BORROWED_AMOUNT_SF,
        &debt.to_le_bytes(),
    );
    data[obligation::STALE] = 1;
    Ok(())
}

/// `repay_obligation_liquidity_v2`: pays `amount` (`u64::MAX`: all of it) of the obligation's
/// debt to the reserve from the owner's token account; a debt paid in full leaves the
/// obligation.
fn repay(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    check(
        accounts.len() == 13 && args.len() == 8,
        "13 accounts and a u64 amount",
    )?;
    let amount = u64::from_le_bytes(args.try_into().unwrap());
    check(amount > 0, "zero amount")?;
    let [owner, obligation, market, reserve, liquidity_mint, supply, source, token_program, instructions, farm_user, farm_state, authority, farms] =
        accounts
    else {
        unreachable!("13 accounts checked above");
    };
    DebtAccounts {
        owner,
        obligation,
        market,
        reserve,
        liquidity_mint,
        supply,
        token_program,
        instructions,
        farm_user,
        farm_state,
        farms,
    }
    .check(program_id)?;
    check(
        *authority.key
            == Pubkey::find_program_address(&[b"lma", market.key.as_ref()], program_id).0,
        "not the market's authority",
    )?;
    check(source.is_writable, "the source is writable")?;
    let (at, debt, in_no_group) = {
        let data = obligation.data.borrow();
        let at = borrow_entry(&data, reserve.key)
            .ok_or_else(|| fail("the obligation owes this reserve nothing"))?;
        (
            at,
            u128_at(&data, at + obligation::BORROWED_AMOUNT_SF),
            outside_groups(&data),
        )
    };
    let owed = u64::try_from(debt.div_ceil(1u128 << FRACTION_SHIFT))
        .map_err(|_| fail("debt beyond u64"))?;
    let paid = amount.min(owed);
    invoke(
        &spl_token::instruction::transfer(
            &spl_token::ID,
            source.key,
            supply.key,
            owner.key,
            &[],
            paid,
        )?,
        &[
            source.clone(),
            supply.clone(),
            owner.clone(),
            token_program.clone(),
        ],
    )?;
    let settled = (u128::from(paid) << FRACTION_SHIFT).min(debt);
    {
        let mut data = reserve.data.borrow_mut();
        count_against_cap(
            &mut data,
            Cap::Debt,
            paid,
            Way::Deposit,
            Clock::get()?.unix_timestamp,
        )?;
        let available = u64_at(&data, reserve::AVAILABLE)
            .checked_add(paid)
            .ok_or_else(|| fail("available beyond u64"))?;
        let total = u128_at(&data, reserve::BORROWED_SF).saturating_sub(settled);
        put(&mut data, reserve::AVAILABLE, &available.to_le_bytes());
        put(&mut data, reserve::BORROWED_SF, &total.to_le_bytes());
        if in_no_group {
            let outside =
                u64_at(&data, reserve::BORROWED_OUTSIDE_ELEVATION_GROUP).saturating_sub(paid);
            put(
                &mut data,
                reserve::BORROWED_OUTSIDE_ELEVATION_GROUP,
                &outside.to_le_bytes(),
            );
        }
        data[reserve::STALE] = 1;
    }
    let mut data = obligation.data.borrow_mut();
    if paid == owed {
        data[at..at + obligation::BORROW_STRIDE].fill(0);
    } else {
        put(
            &mut data,
            at + obligation::BORROWED_AMOUNT_SF,
            &(debt - settled).to_le_bytes(),
        );
    }
    data[obligation::STALE] = 1;
    Ok(())
}
