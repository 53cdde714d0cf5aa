//! SPL token-lending (`lend_a`): `RefreshReserve` (3) accrues interest on what is lent out,
//! `DepositReserveLiquidity` (4) takes liquidity and mints collateral, `RedeemReserveCollateral`
//! (5) burns collateral and pays liquidity, both at the reserve's exchange rate and only right
//! after a refresh in the same slot, as the program requires. Interest accrues at the reserve's
//! optimal borrow rate (the real program follows its whole curve; the double keeps one point,
//! which is enough to make the rate grow).

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
    key, mint_account, owned_by, token_account, u128_at, u64_at, CLOCK_ID, NATIVE_MINT, RENT,
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
    pub const ORACLE: usize = 139;
    pub const AVAILABLE: usize = 171;
    pub const BORROWED_WADS: usize = 179;
    pub const COLLATERAL_MINT: usize = 227;
    pub const COLLATERAL_SUPPLY: usize = 259;
    pub const OPTIMAL_UTILIZATION: usize = 299;
    pub const OPTIMAL_BORROW_RATE: usize = 304;
    pub const MAX_BORROW_RATE: usize = 305;
}

/// The market, its authority and a SOL reserve of the double, as the harness installs them.
#[derive(Debug, Clone, Copy)]
pub struct LendingMarket {
    pub market: Pubkey,
    pub authority: Pubkey,
    pub sol_reserve: Pubkey,
    pub oracle: Pubkey,
    pub liquidity_supply: Pubkey,
    pub collateral_mint: Pubkey,
}

/// Liquidity the reserve starts with: 1,000 SOL available, 3,000 lent out, 3,800 collateral
/// tokens outstanding (so a collateral token is worth 4,000 / 3,800 SOL), utilisation 75 %.
pub const START_AVAILABLE: u64 = 1_000 * SOL;
pub const START_BORROWED: u64 = 3_000 * SOL;
pub const START_COLLATERAL: u64 = 3_800 * SOL;

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
    pt.add_account(m.sol_reserve, reserve_account(&m, RENT));
    m
}

/// The SOL reserve as installed: its starting liquidity and the rate curve's points (also what
/// the api's benchmark serves from its JSON-RPC stand-in).
pub fn reserve_account(m: &LendingMarket, lamports: u64) -> Account {
    let mut reserve = vec![0u8; RESERVE_LEN];
    reserve[0] = 1;
    reserve[at::LENDING_MARKET..][..32].copy_from_slice(m.market.as_ref());
    reserve[at::LIQUIDITY_MINT..][..32].copy_from_slice(NATIVE_MINT.as_ref());
    reserve[at::LIQUIDITY_DECIMALS] = 9;
    reserve[at::LIQUIDITY_SUPPLY..][..32].copy_from_slice(m.liquidity_supply.as_ref());
    reserve[at::ORACLE..][..32].copy_from_slice(m.oracle.as_ref());
    reserve[at::AVAILABLE..][..8].copy_from_slice(&START_AVAILABLE.to_le_bytes());
    reserve[at::BORROWED_WADS..][..16]
        .copy_from_slice(&(START_BORROWED as u128 * WAD).to_le_bytes());
    reserve[at::COLLATERAL_MINT..][..32].copy_from_slice(m.collateral_mint.as_ref());
    reserve[at::COLLATERAL_SUPPLY..][..8].copy_from_slice(&START_COLLATERAL.to_le_bytes());
    reserve[at::OPTIMAL_UTILIZATION] = 80;
    reserve[at::OPTIMAL_BORROW_RATE] = 8;
    reserve[at::MAX_BORROW_RATE] = 100;
    owned_by(TOKEN_LENDING, lamports, reserve)
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
