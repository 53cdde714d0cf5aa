//! SPL token-lending (`lend_a`): `RefreshReserve` (3) accrues interest on what is lent out,
//! `DepositReserveLiquidity` (4) takes liquidity and mints collateral, `RedeemReserveCollateral`
//! (5) burns collateral and pays liquidity, both at the reserve's exchange rate and only right
//! after a refresh in the same slot, as the program requires. Interest accrues at the reserve's
//! optimal borrow rate (the real program follows its whole curve; the double keeps one point,
//! which is enough to make the rate grow), and the reserve's cumulative borrow rate grows with
//! it.
//!
//! Borrowing goes through an obligation, as the program's instructions 6 to 11 define it:
//! `InitObligation` on an account the wallet created for the program (916 bytes),
//! `DepositObligationCollateral` moves collateral tokens into the reserve's collateral supply
//! and credits the obligation, `RefreshObligation` values its deposits and debts at the
//! reserves' market prices (the debts grown by the reserves' cumulative borrow rates) and sets
//! what it may borrow at each reserve's loan-to-value ratio, `BorrowObligationLiquidity` lends
//! within that, `RepayObligationLiquidity` pays a debt back (all of it for `u64::MAX`) and
//! `WithdrawObligationCollateral` gives collateral back while what stays covers the debts. Each
//! needs its reserves (and the obligation, where the program says so) refreshed in the slot.
//! The double has no oracles: a reserve's market price is what its data holds
//! ([`set_price`]).

use anchor_lang::prelude::{AccountInfo, ProgramError, Pubkey};
use anchor_lang::prelude::{Clock, SolanaSysvar};
use anchor_lang::solana_program::entrypoint::ProgramResult;
use anchor_lang::solana_program::program::{invoke, invoke_signed};
use anchor_spl::token::spl_token;
use solana_account::Account;
use solana_keypair::Keypair;
use solana_program_test::{processor, ProgramTest};
use solana_signer::Signer;

use super::{
    key, mint_account, mint_with_decimals, owned_by, put, token_account, u128_at, u64_at, CLOCK_ID,
    NATIVE_MINT, RENT,
};
use crate::harness::{keypair, SOL};

/// SPL token-lending's devnet program id (`token-lending/program/src/lib.rs`).
pub const TOKEN_LENDING: Pubkey =
    Pubkey::from_str_const("6TvznH3B2e3p2mbhufNBpgSrLx6UkgvxtVQvopEZ2kuH");
pub const RESERVE_LEN: usize = 571;
pub const WAD: u128 = 1_000_000_000_000_000_000;
pub const SLOTS_PER_YEAR: u128 = 78_840_000;

/// The offsets of the reserve's fields (the program's packed layout).
mod at {
    pub const LAST_UPDATE_SLOT: usize = 1;
    pub const STALE: usize = 9;
    pub const LENDING_MARKET: usize = 10;
    pub const LIQUIDITY_MINT: usize = 42;
    pub const LIQUIDITY_DECIMALS: usize = 74;
    pub const LIQUIDITY_SUPPLY: usize = 75;
    pub const FEE_RECEIVER: usize = 107;
    pub const ORACLE: usize = 139;
    pub const AVAILABLE: usize = 171;
    pub const BORROWED_WADS: usize = 179;
    pub const CUMULATIVE_BORROW_RATE: usize = 195;
    pub const MARKET_PRICE: usize = 211;
    pub const COLLATERAL_MINT: usize = 227;
    pub const COLLATERAL_SUPPLY: usize = 259;
    pub const COLLATERAL_SUPPLY_ACCOUNT: usize = 267;
    pub const OPTIMAL_UTILIZATION: usize = 299;
    pub const LOAN_TO_VALUE: usize = 300;
    pub const OPTIMAL_BORROW_RATE: usize = 304;
    pub const MAX_BORROW_RATE: usize = 305;
}

/// The obligation's packed layout (`OBLIGATION_LEN` 916): header, then the deposits (56 bytes
/// each) and the borrows (80 bytes each) one after the other.
pub mod obligation {
    pub const LEN: usize = 916;
    pub const VERSION: usize = 0;
    pub const LAST_UPDATE_SLOT: usize = 1;
    pub const STALE: usize = 9;
    pub const LENDING_MARKET: usize = 10;
    pub const OWNER: usize = 42;
    pub const DEPOSITED_VALUE: usize = 74;
    pub const BORROWED_VALUE: usize = 90;
    pub const ALLOWED_BORROW_VALUE: usize = 106;
    pub const DEPOSITS_LEN: usize = 138;
    pub const BORROWS_LEN: usize = 139;
    pub const DATA: usize = 140;
    pub const DEPOSIT_LEN: usize = 56;
    pub const BORROW_LEN: usize = 80;
    pub const MAX_RESERVES: usize = 10;
}

/// The market, its authority and its SOL and USDC reserves, as the harness installs them.
#[derive(Debug, Clone, Copy)]
pub struct LendingMarket {
    pub market: Pubkey,
    pub authority: Pubkey,
    pub sol_reserve: Pubkey,
    pub oracle: Pubkey,
    pub liquidity_supply: Pubkey,
    pub collateral_mint: Pubkey,
    /// Where collateral deposited into obligations is kept, and where borrow fees would go.
    pub collateral_supply: Pubkey,
    pub fee_receiver: Pubkey,
    /// A USDC reserve beside the SOL one, on a USDC mint of the double's own.
    pub usdc_mint: Pubkey,
    pub usdc_reserve: Pubkey,
    pub usdc_oracle: Pubkey,
    pub usdc_supply: Pubkey,
    pub usdc_collateral_mint: Pubkey,
    pub usdc_collateral_supply: Pubkey,
    pub usdc_fee_receiver: Pubkey,
}

/// Liquidity the reserve starts with: 1,000 SOL available, 3,000 lent out, 3,800 collateral
/// tokens outstanding (so a collateral token is worth 4,000 / 3,800 SOL), utilisation 75 %.
pub const START_AVAILABLE: u64 = 1_000 * SOL;
pub const START_BORROWED: u64 = 3_000 * SOL;
pub const START_COLLATERAL: u64 = 3_800 * SOL;
/// SOL's market price in the reserve (USD), and the loan-to-value ratio of both reserves (%).
pub const SOL_PRICE_USD: u128 = 150;
pub const LOAN_TO_VALUE_PCT: u8 = 75;
pub const USDC: u64 = 1_000_000;
/// The USDC reserve's liquidity: 1,000,000 USDC, none lent.
pub const USDC_START_AVAILABLE: u64 = 1_000_000 * USDC;

impl LendingMarket {
    pub fn deterministic() -> LendingMarket {
        let market = keypair(7, 0).pubkey();
        LendingMarket {
            market,
            authority: Pubkey::find_program_address(&[market.as_ref()], &TOKEN_LENDING).0,
            sol_reserve: keypair(7, 1).pubkey(),
            oracle: keypair(7, 2).pubkey(),
            liquidity_supply: keypair(7, 3).pubkey(),
            collateral_mint: keypair(7, 4).pubkey(),
            collateral_supply: keypair(7, 5).pubkey(),
            fee_receiver: keypair(7, 6).pubkey(),
            usdc_mint: keypair(7, 7).pubkey(),
            usdc_reserve: keypair(7, 8).pubkey(),
            usdc_oracle: keypair(7, 9).pubkey(),
            usdc_supply: keypair(7, 10).pubkey(),
            usdc_collateral_mint: keypair(7, 11).pubkey(),
            usdc_collateral_supply: keypair(7, 12).pubkey(),
            usdc_fee_receiver: keypair(7, 13).pubkey(),
        }
    }
}

/// Registers the token-lending double under its real id with a market holding a SOL reserve.
/// The wrapped-SOL mint is the harness's to install (`super::install_native_mint`).
pub fn install_token_lending(pt: &mut ProgramTest) -> LendingMarket {
    let m = LendingMarket::deterministic();
    pt.add_program(
        "spl_token_lending",
        TOKEN_LENDING,
        processor!(token_lending),
    );
    pt.add_account(m.market, owned_by(TOKEN_LENDING, RENT, vec![1; 258]));
    pt.add_account(m.oracle, owned_by(Pubkey::default(), RENT, vec![]));
    pt.add_account(
        m.liquidity_supply,
        token_account(NATIVE_MINT, m.authority, START_AVAILABLE),
    );
    pt.add_account(
        m.collateral_mint,
        mint_account(Some(m.authority), START_COLLATERAL),
    );
    pt.add_account(
        m.collateral_supply,
        token_account(m.collateral_mint, m.authority, 0),
    );
    pt.add_account(m.fee_receiver, token_account(NATIVE_MINT, m.authority, 0));
    pt.add_account(m.sol_reserve, reserve_account(&m, RENT));
    pt.add_account(m.usdc_oracle, owned_by(Pubkey::default(), RENT, vec![]));
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
        m.usdc_collateral_supply,
        token_account(m.usdc_collateral_mint, m.authority, 0),
    );
    pt.add_account(
        m.usdc_fee_receiver,
        token_account(m.usdc_mint, m.authority, 0),
    );
    let mut usdc = reserve_data(
        &m,
        &ReserveSetup {
            mint: m.usdc_mint,
            decimals: 6,
            supply: m.usdc_supply,
            fee_receiver: m.usdc_fee_receiver,
            oracle: m.usdc_oracle,
            available: USDC_START_AVAILABLE,
            borrowed: 0,
            collateral_mint: m.usdc_collateral_mint,
            collateral: 0,
            collateral_supply: m.usdc_collateral_supply,
            price_usd: 1,
        },
    );
    usdc[at::OPTIMAL_BORROW_RATE] = 10;
    pt.add_account(m.usdc_reserve, owned_by(TOKEN_LENDING, RENT, usdc));
    m
}

/// A reserve's accounts and starting state, for [`reserve_data`].
struct ReserveSetup {
    mint: Pubkey,
    decimals: u8,
    supply: Pubkey,
    fee_receiver: Pubkey,
    oracle: Pubkey,
    available: u64,
    borrowed: u64,
    collateral_mint: Pubkey,
    collateral: u64,
    collateral_supply: Pubkey,
    price_usd: u128,
}

/// The SOL reserve as installed: its starting liquidity and the rate curve's points (also what
/// the api's benchmark serves from its JSON-RPC stand-in).
pub fn reserve_account(m: &LendingMarket, lamports: u64) -> Account {
    let setup = ReserveSetup {
        mint: NATIVE_MINT,
        decimals: 9,
        supply: m.liquidity_supply,
        fee_receiver: m.fee_receiver,
        oracle: m.oracle,
        available: START_AVAILABLE,
        borrowed: START_BORROWED,
        collateral_mint: m.collateral_mint,
        collateral: START_COLLATERAL,
        collateral_supply: m.collateral_supply,
        price_usd: SOL_PRICE_USD,
    };
    owned_by(TOKEN_LENDING, lamports, reserve_data(m, &setup))
}

fn reserve_data(m: &LendingMarket, r: &ReserveSetup) -> Vec<u8> {
    let mut reserve = vec![0u8; RESERVE_LEN];
    reserve[0] = 1;
    put(&mut reserve, at::LENDING_MARKET, m.market.as_ref());
    put(&mut reserve, at::LIQUIDITY_MINT, r.mint.as_ref());
    reserve[at::LIQUIDITY_DECIMALS] = r.decimals;
    put(&mut reserve, at::LIQUIDITY_SUPPLY, r.supply.as_ref());
    put(&mut reserve, at::FEE_RECEIVER, r.fee_receiver.as_ref());
    put(&mut reserve, at::ORACLE, r.oracle.as_ref());
    put(&mut reserve, at::AVAILABLE, &r.available.to_le_bytes());
    put(
        &mut reserve,
        at::BORROWED_WADS,
        &(r.borrowed as u128 * WAD).to_le_bytes(),
    );
    put(&mut reserve, at::CUMULATIVE_BORROW_RATE, &WAD.to_le_bytes());
    put(
        &mut reserve,
        at::MARKET_PRICE,
        &(r.price_usd * WAD).to_le_bytes(),
    );
    put(
        &mut reserve,
        at::COLLATERAL_MINT,
        r.collateral_mint.as_ref(),
    );
    put(
        &mut reserve,
        at::COLLATERAL_SUPPLY,
        &r.collateral.to_le_bytes(),
    );
    put(
        &mut reserve,
        at::COLLATERAL_SUPPLY_ACCOUNT,
        r.collateral_supply.as_ref(),
    );
    reserve[at::OPTIMAL_UTILIZATION] = 80;
    reserve[at::LOAN_TO_VALUE] = LOAN_TO_VALUE_PCT;
    reserve[at::OPTIMAL_BORROW_RATE] = 8;
    reserve[at::MAX_BORROW_RATE] = 100;
    reserve
}

/// Sets a reserve's market price (USD in wads per whole token), as its oracle would at the
/// next refresh.
pub fn set_price(reserve_data: &mut [u8], price_wads: u128) {
    put(reserve_data, at::MARKET_PRICE, &price_wads.to_le_bytes());
}

/// Sets a reserve's available (unlent) liquidity in its data, as borrowers taking the rest
/// would leave it.
pub fn set_available(reserve_data: &mut [u8], amount: u64) {
    put(reserve_data, at::AVAILABLE, &amount.to_le_bytes());
}

/// The collateral tokens an obligation holds of `reserve` (0 when none).
pub fn deposited(obligation_data: &[u8], reserve: &Pubkey) -> u64 {
    Obligation::read(obligation_data)
        .deposits
        .iter()
        .find(|d| d.reserve == *reserve)
        .map_or(0, |d| d.amount)
}

/// What an obligation owes of `reserve` in wads, as last refreshed (0 when nothing).
pub fn borrowed_wads(obligation_data: &[u8], reserve: &Pubkey) -> u128 {
    Obligation::read(obligation_data)
        .borrows
        .iter()
        .find(|b| b.reserve == *reserve)
        .map_or(0, |b| b.borrowed_wads)
}

fn fail(why: &str) -> ProgramError {
    super::fail("token-lending", why)
}

fn check(condition: bool, why: &str) -> ProgramResult {
    if condition {
        Ok(())
    } else {
        Err(fail(why))
    }
}

/// (liquidity, collateral) of a reserve in billionths of a base unit: the exchange rate, with
/// products of an amount that fit a u128.
fn rate(data: &[u8]) -> (u128, u128) {
    const NANO: u128 = 1_000_000_000;
    let liquidity = u64_at(data, at::AVAILABLE) as u128 * NANO
        + u128_at(data, at::BORROWED_WADS) / (WAD / NANO);
    let collateral = u64_at(data, at::COLLATERAL_SUPPLY) as u128 * NANO;
    if liquidity == 0 || collateral == 0 {
        (1, 1)
    } else {
        (liquidity, collateral)
    }
}

fn token_lending(program_id: &Pubkey, accounts: &[AccountInfo], data: &[u8]) -> ProgramResult {
    let (&tag, args) = data.split_first().ok_or_else(|| fail("no instruction"))?;
    match tag {
        3 => refresh_reserve(program_id, accounts, args),
        4 | 5 => move_liquidity(program_id, accounts, tag, args),
        6 => init_obligation(program_id, accounts, args),
        7 => refresh_obligation(program_id, accounts, args),
        8 => deposit_collateral(program_id, accounts, args),
        9 => withdraw_collateral(program_id, accounts, args),
        10 => borrow(program_id, accounts, args),
        11 => repay(program_id, accounts, args),
        _ => Err(fail("instruction not in the double")),
    }
}

fn reserve_checked<'a>(program_id: &Pubkey, info: &AccountInfo<'a>) -> ProgramResult {
    check(info.owner == program_id, "reserve not owned by the program")?;
    check(info.is_writable, "reserve not writable")?;
    check(info.data_len() == RESERVE_LEN, "reserve of another length")?;
    check(info.data.borrow()[0] == 1, "reserve of another version")
}

fn refresh_reserve(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    check(
        args.is_empty() && accounts.len() == 3,
        "RefreshReserve takes 3 accounts, no data",
    )?;
    let (reserve, oracle, clock) = (&accounts[0], &accounts[1], &accounts[2]);
    reserve_checked(program_id, reserve)?;
    check(*clock.key == CLOCK_ID, "not the clock")?;
    let now = Clock::get()?.slot;
    let mut data = reserve.data.borrow_mut();
    check(
        key(&data, at::ORACLE) == *oracle.key,
        "not the reserve's oracle",
    )?;
    let last = u64_at(&data, at::LAST_UPDATE_SLOT);
    let borrowed = u128_at(&data, at::BORROWED_WADS);
    let slots = u128::from(now.saturating_sub(last));
    let rate_pct = u128::from(data[at::OPTIMAL_BORROW_RATE]);
    let interest = borrowed * rate_pct / 100 * slots / SLOTS_PER_YEAR;
    data[at::BORROWED_WADS..][..16].copy_from_slice(&(borrowed + interest).to_le_bytes());
    // The cumulative rate grows by the same factor, so each obligation's debt does too.
    let cumulative = u128_at(&data, at::CUMULATIVE_BORROW_RATE);
    let grown = cumulative + cumulative * rate_pct / 100 * slots / SLOTS_PER_YEAR;
    put(&mut data, at::CUMULATIVE_BORROW_RATE, &grown.to_le_bytes());
    data[at::LAST_UPDATE_SLOT..][..8].copy_from_slice(&now.to_le_bytes());
    data[at::STALE] = 0;
    Ok(())
}

fn move_liquidity(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    tag: u8,
    args: &[u8],
) -> ProgramResult {
    check(
        args.len() == 8 && accounts.len() == 10,
        "10 accounts and a u64 amount",
    )?;
    let amount = u64::from_le_bytes(args.try_into().unwrap());
    check(amount > 0, "zero amount")?;
    let deposit = tag == 4;
    let (source, destination, reserve) = (&accounts[0], &accounts[1], &accounts[2]);
    // Deposit: 3 liquidity supply, 4 collateral mint; redeem: 3 collateral mint, 4 supply.
    let (supply, collateral_mint) = if deposit {
        (&accounts[3], &accounts[4])
    } else {
        (&accounts[4], &accounts[3])
    };
    let (market, authority, owner, clock, token_program) = (
        &accounts[5],
        &accounts[6],
        &accounts[7],
        &accounts[8],
        &accounts[9],
    );
    reserve_checked(program_id, reserve)?;
    check(
        source.is_writable && destination.is_writable,
        "source and destination writable",
    )?;
    check(
        supply.is_writable && collateral_mint.is_writable,
        "supply and mint writable",
    )?;
    check(owner.is_signer, "the user transfer authority signs")?;
    check(*clock.key == CLOCK_ID, "not the clock")?;
    check(*token_program.key == spl_token::ID, "not the token program")?;
    let (expected_authority, bump) =
        Pubkey::find_program_address(&[market.key.as_ref()], program_id);
    check(
        *authority.key == expected_authority,
        "not the market's authority",
    )?;
    let now = Clock::get()?.slot;
    let (liquidity_wads, collateral_wads) = {
        let data = reserve.data.borrow();
        check(
            key(&data, at::LENDING_MARKET) == *market.key,
            "not the reserve's market",
        )?;
        check(
            key(&data, at::LIQUIDITY_SUPPLY) == *supply.key,
            "not the reserve's supply",
        )?;
        check(
            key(&data, at::COLLATERAL_MINT) == *collateral_mint.key,
            "not the reserve's mint",
        )?;
        check(
            data[at::STALE] == 0 && u64_at(&data, at::LAST_UPDATE_SLOT) == now,
            "reserve is stale: refresh it in this slot",
        )?;
        rate(&data)
    };
    let seeds: &[&[u8]] = &[market.key.as_ref(), &[bump]];
    let (available_after, collateral_after) = {
        let data = reserve.data.borrow();
        (
            u64_at(&data, at::AVAILABLE),
            u64_at(&data, at::COLLATERAL_SUPPLY),
        )
    };
    let (available_after, collateral_after) = if deposit {
        let minted = u64::try_from(amount as u128 * collateral_wads / liquidity_wads)
            .map_err(|_| fail("mints beyond u64"))?;
        check(minted > 0, "deposit too small for one collateral unit")?;
        invoke(
            &spl_token::instruction::transfer(
                &spl_token::ID,
                source.key,
                supply.key,
                owner.key,
                &[],
                amount,
            )?,
            &[
                source.clone(),
                supply.clone(),
                owner.clone(),
                token_program.clone(),
            ],
        )?;
        invoke_signed(
            &spl_token::instruction::mint_to(
                &spl_token::ID,
                collateral_mint.key,
                destination.key,
                authority.key,
                &[],
                minted,
            )?,
            &[
                collateral_mint.clone(),
                destination.clone(),
                authority.clone(),
                token_program.clone(),
            ],
            &[seeds],
        )?;
        (available_after + amount, collateral_after + minted)
    } else {
        let paid = u64::try_from(amount as u128 * liquidity_wads / collateral_wads)
            .map_err(|_| fail("pays beyond u64"))?;
        check(paid <= available_after, "not enough liquidity available")?;
        invoke(
            &spl_token::instruction::burn(
                &spl_token::ID,
                source.key,
                collateral_mint.key,
                owner.key,
                &[],
                amount,
            )?,
            &[
                source.clone(),
                collateral_mint.clone(),
                owner.clone(),
                token_program.clone(),
            ],
        )?;
        invoke_signed(
            &spl_token::instruction::transfer(
                &spl_token::ID,
                supply.key,
                destination.key,
                authority.key,
                &[],
                paid,
            )?,
            &[
                supply.clone(),
                destination.clone(),
                authority.clone(),
                token_program.clone(),
            ],
            &[seeds],
        )?;
        (
            available_after - paid,
            collateral_after
                .checked_sub(amount)
                .ok_or_else(|| fail("burns more than minted"))?,
        )
    };
    let mut data = reserve.data.borrow_mut();
    data[at::AVAILABLE..][..8].copy_from_slice(&available_after.to_le_bytes());
    data[at::COLLATERAL_SUPPLY..][..8].copy_from_slice(&collateral_after.to_le_bytes());
    Ok(())
}

/// A keypair the stand-in's tests use for a second wallet (deterministic).
pub fn stranger() -> Keypair {
    keypair(7, 99)
}

// ---- obligations -------------------------------------------------------------------------

const RENT_SYSVAR: Pubkey = Pubkey::from_str_const("SysvarRent111111111111111111111111111111111");

/// One deposit of an obligation: collateral tokens of a reserve.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Deposit {
    reserve: Pubkey,
    amount: u64,
    market_value: u128,
}

/// One debt: wads of the reserve's liquidity, as of the cumulative rate it was last grown to.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Borrow {
    reserve: Pubkey,
    cumulative_rate: u128,
    borrowed_wads: u128,
    market_value: u128,
}

/// An obligation's deposits and debts, read from and written back to its packed data.
struct Obligation {
    deposits: Vec<Deposit>,
    borrows: Vec<Borrow>,
}

impl Obligation {
    fn read(data: &[u8]) -> Obligation {
        use obligation::*;
        let mut at = DATA;
        let deposits = (0..data[DEPOSITS_LEN] as usize)
            .map(|_| {
                let d = Deposit {
                    reserve: key(data, at),
                    amount: u64_at(data, at + 32),
                    market_value: u128_at(data, at + 40),
                };
                at += DEPOSIT_LEN;
                d
            })
            .collect();
        let borrows = (0..data[BORROWS_LEN] as usize)
            .map(|_| {
                let b = Borrow {
                    reserve: key(data, at),
                    cumulative_rate: u128_at(data, at + 32),
                    borrowed_wads: u128_at(data, at + 48),
                    market_value: u128_at(data, at + 64),
                };
                at += BORROW_LEN;
                b
            })
            .collect();
        Obligation { deposits, borrows }
    }

    fn write(&self, data: &mut [u8]) -> ProgramResult {
        use obligation::*;
        check(
            self.deposits.len() + self.borrows.len() <= MAX_RESERVES,
            "obligation reserve limit",
        )?;
        data[DATA..].fill(0);
        data[DEPOSITS_LEN] = self.deposits.len() as u8;
        data[BORROWS_LEN] = self.borrows.len() as u8;
        let mut at = DATA;
        for d in &self.deposits {
            put(data, at, d.reserve.as_ref());
            put(data, at + 32, &d.amount.to_le_bytes());
            put(data, at + 40, &d.market_value.to_le_bytes());
            at += DEPOSIT_LEN;
        }
        for b in &self.borrows {
            put(data, at, b.reserve.as_ref());
            put(data, at + 32, &b.cumulative_rate.to_le_bytes());
            put(data, at + 48, &b.borrowed_wads.to_le_bytes());
            put(data, at + 64, &b.market_value.to_le_bytes());
            at += BORROW_LEN;
        }
        Ok(())
    }
}

/// The obligation, checked: the program's, initialised, of `market` and (when given) `owner`.
fn obligation_checked(
    program_id: &Pubkey,
    info: &AccountInfo,
    market: &Pubkey,
    owner: Option<&Pubkey>,
) -> ProgramResult {
    check(
        info.owner == program_id,
        "obligation not owned by the program",
    )?;
    check(info.is_writable, "obligation not writable")?;
    let data = info.data.borrow();
    check(
        data.len() == obligation::LEN,
        "obligation of another length",
    )?;
    check(data[obligation::VERSION] == 1, "obligation not initialised")?;
    check(
        key(&data, obligation::LENDING_MARKET) == *market,
        "obligation of another market",
    )?;
    if let Some(owner) = owner {
        check(
            key(&data, obligation::OWNER) == *owner,
            "another owner's obligation",
        )?;
    }
    Ok(())
}

/// The reserve refreshed in this slot, of `market`.
fn fresh_reserve(
    program_id: &Pubkey,
    info: &AccountInfo,
    market: &Pubkey,
    now: u64,
) -> ProgramResult {
    check(info.owner == program_id, "reserve not owned by the program")?;
    let data = info.data.borrow();
    check(data.len() == RESERVE_LEN && data[0] == 1, "not a reserve")?;
    check(
        key(&data, at::LENDING_MARKET) == *market,
        "reserve of another market",
    )?;
    check(
        data[at::STALE] == 0 && u64_at(&data, at::LAST_UPDATE_SLOT) == now,
        "reserve is stale: refresh it in this slot",
    )
}

fn fresh_obligation(info: &AccountInfo, now: u64) -> ProgramResult {
    let data = info.data.borrow();
    check(
        data[obligation::STALE] == 0 && u64_at(&data, obligation::LAST_UPDATE_SLOT) == now,
        "obligation is stale: refresh it in this slot",
    )
}

fn mark_stale(info: &AccountInfo) {
    info.data.borrow_mut()[obligation::STALE] = 1;
}

/// A debt of `wads` grown from cumulative rate `then` to `now`, rounded up: the factor
/// `now / then` in wads, applied to the whole units and the fraction apart so no product
/// passes 128 bits.
fn grown(wads: u128, now: u128, then: u128) -> Result<u128, ProgramError> {
    let factor = now
        .checked_mul(WAD)
        .map(|p| p.div_ceil(then.max(1)))
        .ok_or_else(|| fail("rate beyond u128"))?;
    let (units, fraction) = (wads / WAD, wads % WAD);
    units
        .checked_mul(factor)
        .and_then(|whole| whole.checked_add((fraction * factor).div_ceil(WAD)))
        .ok_or_else(|| fail("debt beyond u128"))
}

/// USD in wads of `amount` base units of the reserve's liquidity at its market price.
fn liquidity_value(reserve: &[u8], amount: u128) -> Result<u128, ProgramError> {
    let decimals = u32::from(reserve[at::LIQUIDITY_DECIMALS]);
    amount
        .checked_mul(u128_at(reserve, at::MARKET_PRICE))
        .map(|v| v / 10u128.pow(decimals))
        .ok_or_else(|| fail("value beyond u128"))
}

/// Liquidity base units `collateral` tokens of the reserve redeem for (rounded down).
fn collateral_liquidity(reserve: &[u8], collateral: u64) -> u128 {
    let (liquidity, collateral_units) = rate(reserve);
    collateral as u128 * liquidity / collateral_units
}

/// The lending market's authority and its bump.
fn authority_of(program_id: &Pubkey, market: &Pubkey) -> (Pubkey, u8) {
    Pubkey::find_program_address(&[market.as_ref()], program_id)
}

fn amount_arg(args: &[u8]) -> Result<u64, ProgramError> {
    check(args.len() >= 8, "a u64 amount")?;
    Ok(u64::from_le_bytes(args[..8].try_into().unwrap()))
}

fn init_obligation(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    let [info, market, owner, clock, rent, token_program] = accounts else {
        return Err(fail("InitObligation takes 6 accounts, no data"));
    };
    check(args.is_empty(), "InitObligation takes 6 accounts, no data")?;
    check(
        info.owner == program_id,
        "obligation not owned by the program",
    )?;
    check(info.is_writable, "obligation not writable")?;
    check(market.owner == program_id, "not a market of the program")?;
    check(owner.is_signer, "the obligation owner signs")?;
    check(*clock.key == CLOCK_ID, "not the clock")?;
    check(*rent.key == RENT_SYSVAR, "not the rent sysvar")?;
    check(*token_program.key == spl_token::ID, "not the token program")?;
    let mut data = info.data.borrow_mut();
    check(
        data.len() == obligation::LEN,
        "obligation of another length",
    )?;
    check(
        data[obligation::VERSION] == 0,
        "obligation already initialised",
    )?;
    data[obligation::VERSION] = 1;
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

fn refresh_obligation(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    check(
        args.is_empty() && accounts.len() >= 2,
        "RefreshObligation takes the obligation, the clock and its reserves",
    )?;
    let (info, clock) = (&accounts[0], &accounts[1]);
    check(*clock.key == CLOCK_ID, "not the clock")?;
    let market = key(&info.data.borrow(), obligation::LENDING_MARKET);
    obligation_checked(program_id, info, &market, None)?;
    let now = Clock::get()?.slot;
    let mut o = Obligation::read(&info.data.borrow());
    let reserves = &accounts[2..];
    check(
        reserves.len() == o.deposits.len() + o.borrows.len(),
        "every deposit reserve, then every borrow reserve, in order",
    )?;
    let (mut deposited, mut allowed, mut borrowed) = (0u128, 0u128, 0u128);
    for (d, reserve) in o.deposits.iter_mut().zip(reserves) {
        check(*reserve.key == d.reserve, "deposit reserves out of order")?;
        fresh_reserve(program_id, reserve, &market, now)?;
        let data = reserve.data.borrow();
        d.market_value = liquidity_value(&data, collateral_liquidity(&data, d.amount))?;
        deposited += d.market_value;
        allowed += d.market_value * u128::from(data[at::LOAN_TO_VALUE]) / 100;
    }
    for (b, reserve) in o.borrows.iter_mut().zip(&reserves[o.deposits.len()..]) {
        check(*reserve.key == b.reserve, "borrow reserves out of order")?;
        fresh_reserve(program_id, reserve, &market, now)?;
        let data = reserve.data.borrow();
        let cumulative = u128_at(&data, at::CUMULATIVE_BORROW_RATE);
        // Grown by the reserve's rate since it was last grown, rounded up (the debt's favour
        // is the reserve's).
        b.borrowed_wads = grown(b.borrowed_wads, cumulative, b.cumulative_rate)?;
        b.cumulative_rate = cumulative;
        b.market_value = liquidity_value(&data, b.borrowed_wads.div_ceil(WAD))?;
        borrowed += b.market_value;
    }
    let mut data = info.data.borrow_mut();
    o.write(&mut data)?;
    put(
        &mut data,
        obligation::DEPOSITED_VALUE,
        &deposited.to_le_bytes(),
    );
    put(
        &mut data,
        obligation::BORROWED_VALUE,
        &borrowed.to_le_bytes(),
    );
    put(
        &mut data,
        obligation::ALLOWED_BORROW_VALUE,
        &allowed.to_le_bytes(),
    );
    put(&mut data, obligation::LAST_UPDATE_SLOT, &now.to_le_bytes());
    data[obligation::STALE] = 0;
    Ok(())
}

/// The clock and the token program, as every obligation instruction names them.
fn sysvars_checked(clock: &AccountInfo, token_program: &AccountInfo) -> ProgramResult {
    check(*clock.key == CLOCK_ID, "not the clock")?;
    check(*token_program.key == spl_token::ID, "not the token program")
}

/// The market's authority as given, and its bump.
fn market_authority_checked(
    program_id: &Pubkey,
    market: &Pubkey,
    given: &AccountInfo,
) -> Result<u8, ProgramError> {
    let (expected, bump) = authority_of(program_id, market);
    check(*given.key == expected, "not the market's authority")?;
    Ok(bump)
}

/// The reserve refreshed in this slot, and the obligation of `market` (and of `owner` when
/// given), refreshed in this slot too when `fresh` (the program asks it of every obligation
/// instruction but the collateral deposit).
fn loan_checked(
    program_id: &Pubkey,
    reserve: &AccountInfo,
    obligation_info: &AccountInfo,
    market: &Pubkey,
    owner: Option<&Pubkey>,
    fresh: bool,
) -> ProgramResult {
    let now = Clock::get()?.slot;
    fresh_reserve(program_id, reserve, market, now)?;
    obligation_checked(program_id, obligation_info, market, owner)?;
    if fresh {
        fresh_obligation(obligation_info, now)?;
    }
    Ok(())
}

fn deposit_collateral(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    let [source, destination, reserve, info, market, owner, authority, clock, token_program] =
        accounts
    else {
        return Err(fail(
            "DepositObligationCollateral takes 9 accounts and a u64",
        ));
    };
    check(
        args.len() == 8,
        "DepositObligationCollateral takes 9 accounts and a u64",
    )?;
    let amount = amount_arg(args)?;
    check(amount > 0, "zero amount")?;
    check(
        source.is_writable && destination.is_writable,
        "source and destination writable",
    )?;
    check(
        owner.is_signer && authority.is_signer,
        "the owner and the transfer authority sign",
    )?;
    sysvars_checked(clock, token_program)?;
    loan_checked(
        program_id,
        reserve,
        info,
        market.key,
        Some(owner.key),
        false,
    )?;
    check(
        key(&reserve.data.borrow(), at::COLLATERAL_SUPPLY_ACCOUNT) == *destination.key,
        "not the reserve's collateral supply",
    )?;
    invoke(
        &spl_token::instruction::transfer(
            &spl_token::ID,
            source.key,
            destination.key,
            authority.key,
            &[],
            amount,
        )?,
        &[
            source.clone(),
            destination.clone(),
            authority.clone(),
            token_program.clone(),
        ],
    )?;
    let mut o = Obligation::read(&info.data.borrow());
    match o.deposits.iter_mut().find(|d| d.reserve == *reserve.key) {
        Some(d) => d.amount += amount,
        None => o.deposits.push(Deposit {
            reserve: *reserve.key,
            amount,
            market_value: 0,
        }),
    }
    o.write(&mut info.data.borrow_mut())?;
    mark_stale(info);
    Ok(())
}

fn withdraw_collateral(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    args: &[u8],
) -> ProgramResult {
    let [source, destination, reserve, info, market, market_authority, owner, clock, token_program] =
        accounts
    else {
        return Err(fail(
            "WithdrawObligationCollateral takes 9 accounts and a u64",
        ));
    };
    check(
        args.len() == 8,
        "WithdrawObligationCollateral takes 9 accounts and a u64",
    )?;
    check(
        source.is_writable && destination.is_writable,
        "source and destination writable",
    )?;
    check(owner.is_signer, "the obligation owner signs")?;
    sysvars_checked(clock, token_program)?;
    let bump = market_authority_checked(program_id, market.key, market_authority)?;
    loan_checked(program_id, reserve, info, market.key, Some(owner.key), true)?;
    let reserve_data = reserve.data.borrow();
    check(
        key(&reserve_data, at::COLLATERAL_SUPPLY_ACCOUNT) == *source.key,
        "not the reserve's collateral supply",
    )?;
    let mut o = Obligation::read(&info.data.borrow());
    let index = o
        .deposits
        .iter()
        .position(|d| d.reserve == *reserve.key)
        .ok_or_else(|| fail("no deposit of this reserve"))?;
    let held = o.deposits[index].amount;
    let amount = if amount_arg(args)? == u64::MAX {
        held
    } else {
        amount_arg(args)?
    };
    check(amount > 0 && amount <= held, "withdraws beyond the deposit")?;
    // What stays must still cover the debts at its loan-to-value ratio.
    let header = info.data.borrow();
    let (allowed, borrowed) = (
        u128_at(&header, obligation::ALLOWED_BORROW_VALUE),
        u128_at(&header, obligation::BORROWED_VALUE),
    );
    drop(header);
    let leaving = liquidity_value(&reserve_data, collateral_liquidity(&reserve_data, amount))?
        * u128::from(reserve_data[at::LOAN_TO_VALUE])
        / 100;
    check(
        allowed.saturating_sub(leaving) >= borrowed,
        "what stays would not cover the debts",
    )?;
    drop(reserve_data);
    let seeds: &[&[u8]] = &[market.key.as_ref(), &[bump]];
    invoke_signed(
        &spl_token::instruction::transfer(
            &spl_token::ID,
            source.key,
            destination.key,
            market_authority.key,
            &[],
            amount,
        )?,
        &[
            source.clone(),
            destination.clone(),
            market_authority.clone(),
            token_program.clone(),
        ],
        &[seeds],
    )?;
    if amount == held {
        o.deposits.remove(index);
    } else {
        o.deposits[index].amount -= amount;
    }
    o.write(&mut info.data.borrow_mut())?;
    mark_stale(info);
    Ok(())
}

fn borrow(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    let [supply, destination, reserve, fee_receiver, info, market, market_authority, owner, clock, token_program, host_fee @ ..] =
        accounts
    else {
        return Err(fail(
            "BorrowObligationLiquidity takes 10 accounts (11 with a host fee receiver)",
        ));
    };
    check(
        host_fee.len() <= 1 && args.len() == 16,
        "BorrowObligationLiquidity takes 10 accounts (11 with a host fee receiver) and two u64s",
    )?;
    let amount = amount_arg(args)?;
    check(
        amount > 0 && amount != u64::MAX,
        "an amount (the double does not borrow 100 % of power)",
    )?;
    check(
        supply.is_writable && destination.is_writable && reserve.is_writable,
        "supply, destination and reserve writable",
    )?;
    check(fee_receiver.is_writable, "fee receiver writable")?;
    check(owner.is_signer, "the obligation owner signs")?;
    sysvars_checked(clock, token_program)?;
    let bump = market_authority_checked(program_id, market.key, market_authority)?;
    loan_checked(program_id, reserve, info, market.key, Some(owner.key), true)?;
    let (value, cumulative) = {
        let r = reserve.data.borrow();
        check(
            key(&r, at::LIQUIDITY_SUPPLY) == *supply.key,
            "not the reserve's supply",
        )?;
        check(
            key(&r, at::FEE_RECEIVER) == *fee_receiver.key,
            "not the reserve's fee receiver",
        )?;
        check(
            u64_at(&r, at::AVAILABLE) >= amount,
            "not enough liquidity available",
        )?;
        (
            liquidity_value(&r, u128::from(amount))?,
            u128_at(&r, at::CUMULATIVE_BORROW_RATE),
        )
    };
    {
        let header = info.data.borrow();
        check(
            !Obligation::read(&header).deposits.is_empty(),
            "the obligation has no collateral",
        )?;
        let allowed = u128_at(&header, obligation::ALLOWED_BORROW_VALUE);
        let borrowed = u128_at(&header, obligation::BORROWED_VALUE);
        check(
            borrowed + value <= allowed,
            "beyond the obligation's borrowing power",
        )?;
    }
    let seeds: &[&[u8]] = &[market.key.as_ref(), &[bump]];
    invoke_signed(
        &spl_token::instruction::transfer(
            &spl_token::ID,
            supply.key,
            destination.key,
            market_authority.key,
            &[],
            amount,
        )?,
        &[
            supply.clone(),
            destination.clone(),
            market_authority.clone(),
            token_program.clone(),
        ],
        &[seeds],
    )?;
    {
        let mut r = reserve.data.borrow_mut();
        let available = u64_at(&r, at::AVAILABLE) - amount;
        let lent = u128_at(&r, at::BORROWED_WADS) + u128::from(amount) * WAD;
        put(&mut r, at::AVAILABLE, &available.to_le_bytes());
        put(&mut r, at::BORROWED_WADS, &lent.to_le_bytes());
    }
    let mut o = Obligation::read(&info.data.borrow());
    let wads = u128::from(amount) * WAD;
    match o.borrows.iter_mut().find(|b| b.reserve == *reserve.key) {
        Some(b) => b.borrowed_wads += wads,
        None => o.borrows.push(Borrow {
            reserve: *reserve.key,
            cumulative_rate: cumulative,
            borrowed_wads: wads,
            market_value: value,
        }),
    }
    o.write(&mut info.data.borrow_mut())?;
    mark_stale(info);
    Ok(())
}

fn repay(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    let [source, supply, reserve, info, market, authority, clock, token_program] = accounts else {
        return Err(fail("RepayObligationLiquidity takes 8 accounts and a u64"));
    };
    check(
        args.len() == 8,
        "RepayObligationLiquidity takes 8 accounts and a u64",
    )?;
    check(
        source.is_writable && supply.is_writable && reserve.is_writable,
        "source, supply and reserve writable",
    )?;
    check(authority.is_signer, "the transfer authority signs")?;
    sysvars_checked(clock, token_program)?;
    loan_checked(program_id, reserve, info, market.key, None, true)?;
    check(
        key(&reserve.data.borrow(), at::LIQUIDITY_SUPPLY) == *supply.key,
        "not the reserve's supply",
    )?;
    let mut o = Obligation::read(&info.data.borrow());
    let index = o
        .borrows
        .iter()
        .position(|b| b.reserve == *reserve.key)
        .ok_or_else(|| fail("no debt in this reserve"))?;
    let owed_wads = o.borrows[index].borrowed_wads;
    let owed = u64::try_from(owed_wads.div_ceil(WAD)).map_err(|_| fail("debt beyond u64"))?;
    let paid = amount_arg(args)?.min(owed);
    check(paid > 0, "nothing to repay")?;
    invoke(
        &spl_token::instruction::transfer(
            &spl_token::ID,
            source.key,
            supply.key,
            authority.key,
            &[],
            paid,
        )?,
        &[
            source.clone(),
            supply.clone(),
            authority.clone(),
            token_program.clone(),
        ],
    )?;
    let settled = u128::from(paid) * WAD;
    if paid == owed {
        o.borrows.remove(index);
    } else {
        o.borrows[index].borrowed_wads = owed_wads - settled;
    }
    o.write(&mut info.data.borrow_mut())?;
    mark_stale(info);
    let mut r = reserve.data.borrow_mut();
    let available = u64_at(&r, at::AVAILABLE) + paid;
    let lent = u128_at(&r, at::BORROWED_WADS).saturating_sub(settled.min(owed_wads));
    put(&mut r, at::AVAILABLE, &available.to_le_bytes());
    put(&mut r, at::BORROWED_WADS, &lent.to_le_bytes());
    Ok(())
}
