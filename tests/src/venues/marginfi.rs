//! marginfi v2 (`p0`, unified margin): the three instructions a margin account's deposit and
//! withdrawal take, with the program's discriminators, account order and flags and its zero-copy
//! account layouts (docs/venues-research.md §6; the IDL is tests/ts/venues/idl/marginfi.json).
//!
//! - `marginfi_account_initialize_pda` creates the authority's margin account at its PDA
//!   (`["marginfi_account", group, authority, account_index u16 LE, third_party_id u16 LE]`),
//!   paid by the fee payer.
//! - `lending_account_deposit` moves the authority's tokens into the bank's liquidity vault and
//!   credits asset shares at the bank's asset share value, rounded down (the vault's favour).
//! - `lending_account_withdraw` pays tokens out of the vault, signed by the bank's liquidity
//!   vault authority PDA, and debits shares rounded up; `withdraw_all` closes the balance. Like
//!   the program's risk engine, it takes as remaining accounts exactly `bank, oracle` for each
//!   balance still active after the withdrawal, banks in descending key order, and refuses a
//!   withdrawal from an account that owes anything (the program would weigh its health; the
//!   double has no oracles to price it).
//!
//! Interest is a test's to apply: [`set_asset_share_value`] moves a bank's share value as the
//! program's accrual would.

use anchor_lang::prelude::{AccountInfo, ProgramError, Pubkey, Rent, SolanaSysvar};
use anchor_lang::solana_program::entrypoint::ProgramResult;
use anchor_lang::solana_program::program::{invoke, invoke_signed};
use anchor_lang::solana_program::system_instruction;
use anchor_spl::token::spl_token;
use solana_program_test::{processor, ProgramTest};
use solana_signer::Signer;

use super::{key, mint_with_decimals, owned_by, put, token_account, u128_at, NATIVE_MINT, RENT};
use crate::harness::{keypair, SOL};

/// marginfi v2's devnet deployment (the api's default for devnet).
pub const MARGINFI: Pubkey = Pubkey::from_str_const("neetcne3Ctrrud7vLdt2ypMm21gZHGN2mCmqWaMVcBQ");
const SYSTEM_PROGRAM: Pubkey = Pubkey::from_str_const("11111111111111111111111111111111");
const INSTRUCTIONS_SYSVAR: Pubkey =
    Pubkey::from_str_const("Sysvar1nstructions1111111111111111111111111");

/// Anchor discriminators as the IDL gives them.
pub mod discriminator {
    pub const GROUP: [u8; 8] = [0xb6, 0x17, 0xad, 0xf0, 0x97, 0xce, 0xb6, 0x43];
    pub const BANK: [u8; 8] = [0x8e, 0x31, 0xa6, 0xf2, 0x32, 0x42, 0x61, 0xbc];
    pub const ACCOUNT: [u8; 8] = [0x43, 0xb2, 0x82, 0x6d, 0x7e, 0x72, 0x1c, 0x2a];
    pub const INITIALIZE_PDA: [u8; 8] = [87, 177, 91, 80, 218, 119, 245, 31];
    pub const DEPOSIT: [u8; 8] = [171, 94, 235, 103, 82, 64, 212, 140];
    pub const WITHDRAW: [u8; 8] = [36, 72, 74, 19, 210, 210, 192, 192];
}

/// Byte offsets in a `Bank` (8 + 1856 bytes).
pub mod bank {
    pub const LEN: usize = 1864;
    pub const MINT: usize = 8;
    pub const MINT_DECIMALS: usize = 40;
    pub const GROUP: usize = 41;
    pub const ASSET_SHARE_VALUE: usize = 80;
    pub const LIABILITY_SHARE_VALUE: usize = 96;
    pub const LIQUIDITY_VAULT: usize = 112;
    pub const LIQUIDITY_VAULT_AUTHORITY_BUMP: usize = 145;
    pub const TOTAL_LIABILITY_SHARES: usize = 256;
    pub const TOTAL_ASSET_SHARES: usize = 272;
    pub const ASSET_WEIGHT_INIT: usize = 296;
    pub const ASSET_WEIGHT_MAINT: usize = 312;
    pub const LIABILITY_WEIGHT_INIT: usize = 328;
    pub const LIABILITY_WEIGHT_MAINT: usize = 344;
    pub const ORACLE_SETUP: usize = 609;
    pub const ORACLE_KEYS: usize = 610;
    pub const LENDING_RATE: usize = 1380;
    pub const BORROWING_RATE: usize = 1384;
}

/// Byte offsets in a `MarginfiAccount` (8 + 2304 bytes).
pub mod account {
    pub const LEN: usize = 2312;
    pub const GROUP: usize = 8;
    pub const AUTHORITY: usize = 40;
    pub const BALANCES: usize = 72;
    pub const BALANCE_STRIDE: usize = 104;
    pub const BALANCE_COUNT: usize = 16;
    pub const ACTIVE: usize = 0;
    pub const BANK: usize = 1;
    pub const ASSET_TAG: usize = 33;
    pub const ASSET_SHARES: usize = 40;
    pub const LIABILITY_SHARES: usize = 56;
}

const GROUP_LEN: usize = 1064;
/// One in I80F48 (48 fractional bits).
pub const ONE: u128 = 1 << 48;

/// The group and its SOL and USDC banks as the harness installs them.
#[derive(Debug, Clone, Copy)]
pub struct MarginfiGroup {
    pub group: Pubkey,
    pub sol_bank: Pubkey,
    pub sol_vault: Pubkey,
    pub sol_oracle: Pubkey,
    pub usdc_mint: Pubkey,
    pub usdc_bank: Pubkey,
    pub usdc_vault: Pubkey,
    pub usdc_oracle: Pubkey,
}

/// The SOL bank's lending rate: 6 % supply APR on the u32 scale where u32::MAX is 1000 %.
pub const SOL_LENDING_RATE: u32 = (u32::MAX as u64 * 6 / 1000) as u32;
/// The USDC bank's: 8 %.
pub const USDC_LENDING_RATE: u32 = (u32::MAX as u64 * 8 / 1000) as u32;
pub const USDC: u64 = 1_000_000;
/// What each vault holds at the start (other lenders' deposits).
pub const SOL_START: u64 = 10_000 * SOL;
pub const USDC_START: u64 = 1_000_000 * USDC;

impl MarginfiGroup {
    pub fn deterministic() -> MarginfiGroup {
        MarginfiGroup {
            group: keypair(9, 0).pubkey(),
            sol_bank: keypair(9, 1).pubkey(),
            sol_vault: keypair(9, 2).pubkey(),
            sol_oracle: keypair(9, 3).pubkey(),
            usdc_mint: keypair(9, 4).pubkey(),
            usdc_bank: keypair(9, 5).pubkey(),
            usdc_vault: keypair(9, 6).pubkey(),
            usdc_oracle: keypair(9, 7).pubkey(),
        }
    }
}

/// The bank's liquidity vault authority, `["liquidity_vault_auth", bank]`.
pub fn vault_authority(bank: &Pubkey) -> (Pubkey, u8) {
    Pubkey::find_program_address(&[b"liquidity_vault_auth", bank.as_ref()], &MARGINFI)
}

/// Registers the double under marginfi's devnet id with a group, a SOL bank and a USDC bank
/// (its own USDC mint). The wrapped-SOL mint is the harness's to install.
pub fn install_marginfi(pt: &mut ProgramTest) -> MarginfiGroup {
    let g = MarginfiGroup::deterministic();
    pt.add_program("marginfi", MARGINFI, processor!(marginfi));
    let mut group = vec![0u8; GROUP_LEN];
    put(&mut group, 0, &discriminator::GROUP);
    pt.add_account(g.group, owned_by(MARGINFI, RENT, group));
    pt.add_account(g.usdc_mint, mint_with_decimals(None, USDC_START, 6));
    for (bank, vault, oracle, mint, decimals, start, rate) in [
        (
            g.sol_bank,
            g.sol_vault,
            g.sol_oracle,
            NATIVE_MINT,
            9,
            SOL_START,
            SOL_LENDING_RATE,
        ),
        (
            g.usdc_bank,
            g.usdc_vault,
            g.usdc_oracle,
            g.usdc_mint,
            6,
            USDC_START,
            USDC_LENDING_RATE,
        ),
    ] {
        let (authority, bump) = vault_authority(&bank);
        pt.add_account(vault, token_account(mint, authority, start));
        pt.add_account(oracle, owned_by(SYSTEM_PROGRAM, RENT, vec![]));
        let mut data = vec![0u8; bank::LEN];
        put(&mut data, 0, &discriminator::BANK);
        put(&mut data, bank::MINT, mint.as_ref());
        data[bank::MINT_DECIMALS] = decimals;
        put(&mut data, bank::GROUP, g.group.as_ref());
        put(&mut data, bank::ASSET_SHARE_VALUE, &ONE.to_le_bytes());
        put(&mut data, bank::LIABILITY_SHARE_VALUE, &ONE.to_le_bytes());
        put(&mut data, bank::LIQUIDITY_VAULT, vault.as_ref());
        data[bank::LIQUIDITY_VAULT_AUTHORITY_BUMP] = bump;
        put(
            &mut data,
            bank::TOTAL_ASSET_SHARES,
            &(u128::from(start) << 48).to_le_bytes(),
        );
        // Weights: assets count 80 % (init) / 90 % (maint), debts 120 % / 110 %.
        for (at, pct) in [
            (bank::ASSET_WEIGHT_INIT, 80u128),
            (bank::ASSET_WEIGHT_MAINT, 90),
            (bank::LIABILITY_WEIGHT_INIT, 120),
            (bank::LIABILITY_WEIGHT_MAINT, 110),
        ] {
            put(&mut data, at, &(ONE * pct / 100).to_le_bytes());
        }
        // Pyth push: one oracle account.
        data[bank::ORACLE_SETUP] = 3;
        put(&mut data, bank::ORACLE_KEYS, oracle.as_ref());
        put(&mut data, bank::LENDING_RATE, &rate.to_le_bytes());
        put(&mut data, bank::BORROWING_RATE, &(rate * 2).to_le_bytes());
        pt.add_account(bank, owned_by(MARGINFI, RENT, data));
    }
    g
}

/// Sets a bank's asset share value (I80F48 raw), as the program's interest accrual moves it
/// (the vault's other deposits pay the difference out in the double).
pub fn set_asset_share_value(bank_data: &mut [u8], value: u128) {
    put(bank_data, bank::ASSET_SHARE_VALUE, &value.to_le_bytes());
}

/// Puts a debt of `liability_shares` (I80F48 raw) of `bank` into an account's balance for it
/// (a borrow made elsewhere, for a test of health and of the withdrawal refusal).
pub fn set_liability(account_data: &mut [u8], bank_key: &Pubkey, liability_shares: u128) {
    let at = slot_of(account_data, bank_key)
        .or_else(|| free_slot(account_data))
        .expect("a free balance slot");
    account_data[at + account::ACTIVE] = 1;
    put(account_data, at + account::BANK, bank_key.as_ref());
    put(
        account_data,
        at + account::LIABILITY_SHARES,
        &liability_shares.to_le_bytes(),
    );
}

/// The margin account of `authority` in `group` (index 0, no third party).
pub fn account_address(group: &Pubkey, authority: &Pubkey) -> Pubkey {
    Pubkey::find_program_address(
        &[
            b"marginfi_account",
            group.as_ref(),
            authority.as_ref(),
            &0u16.to_le_bytes(),
            &0u16.to_le_bytes(),
        ],
        &MARGINFI,
    )
    .0
}

/// The asset shares (I80F48 raw) an account's balance holds of `bank` (0 when none).
pub fn asset_shares(account_data: &[u8], bank_key: &Pubkey) -> u128 {
    slot_of(account_data, bank_key)
        .map_or(0, |at| u128_at(account_data, at + account::ASSET_SHARES))
}

fn slot_of(data: &[u8], bank_key: &Pubkey) -> Option<usize> {
    (0..account::BALANCE_COUNT)
        .map(|i| account::BALANCES + i * account::BALANCE_STRIDE)
        .find(|at| data[at + account::ACTIVE] == 1 && key(data, at + account::BANK) == *bank_key)
}

fn free_slot(data: &[u8]) -> Option<usize> {
    (0..account::BALANCE_COUNT)
        .map(|i| account::BALANCES + i * account::BALANCE_STRIDE)
        .find(|at| data[at + account::ACTIVE] == 0)
}

fn fail(why: &str) -> ProgramError {
    super::fail("marginfi", why)
}

fn check(condition: bool, why: &str) -> ProgramResult {
    if condition {
        Ok(())
    } else {
        Err(fail(why))
    }
}

/// `shares × value` of two I80F48 raws, in whole base units, rounded down: `(a·2^48 + b)·v /
/// 2^96` as `(a·v + ⌊b·v / 2^48⌋) / 2^48`, exact for shares below 2^112 and values below 2^64.
fn amount_of(shares: u128, value: u128) -> Result<u128, ProgramError> {
    let (whole, frac) = (shares >> 48, shares & (ONE - 1));
    let high = whole
        .checked_mul(value)
        .ok_or_else(|| fail("amount beyond u128"))?;
    let low = frac
        .checked_mul(value)
        .ok_or_else(|| fail("amount beyond u128"))?
        >> 48;
    Ok(high
        .checked_add(low)
        .ok_or_else(|| fail("amount beyond u128"))?
        >> 48)
}

/// The I80F48 shares `amount` base units buy at `value` (raw), rounded down, or up when `up`:
/// `amount·2^96 / v` in two steps of 2^48, exact for values below 2^80.
fn shares_for(amount: u64, value: u128, up: bool) -> Result<u128, ProgramError> {
    check(
        value > 0 && value < 1 << 80,
        "share value out of the double's range",
    )?;
    let scaled = u128::from(amount) << 48;
    let (q1, r1) = (scaled / value, scaled % value);
    let (q2, r2) = ((r1 << 48) / value, (r1 << 48) % value);
    let shares = (q1 << 48) + q2;
    Ok(if up && r2 > 0 { shares + 1 } else { shares })
}

fn marginfi(program_id: &Pubkey, accounts: &[AccountInfo], data: &[u8]) -> ProgramResult {
    check(data.len() >= 8, "no discriminator")?;
    let (tag, args) = data.split_at(8);
    let tag: [u8; 8] = tag.try_into().unwrap();
    match tag {
        discriminator::INITIALIZE_PDA => initialize_pda(program_id, accounts, args),
        discriminator::DEPOSIT => deposit(program_id, accounts, args),
        discriminator::WITHDRAW => withdraw(program_id, accounts, args),
        _ => Err(fail("instruction not in the double")),
    }
}

fn typed(
    program_id: &Pubkey,
    info: &AccountInfo,
    len: usize,
    d: [u8; 8],
    what: &str,
) -> ProgramResult {
    super::typed("marginfi", program_id, info, len, d, what)
}

/// An optional `bool` or `u16` argument (Borsh: 0, or 1 then the value).
fn option<'a>(
    args: &'a [u8],
    size: usize,
    what: &str,
) -> Result<(Option<&'a [u8]>, usize), ProgramError> {
    match args.first() {
        Some(0) => Ok((None, 1)),
        Some(1) if args.len() > size => Ok((Some(&args[1..1 + size]), 1 + size)),
        _ => Err(fail(what)),
    }
}

fn initialize_pda(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    let [group, account, authority, payer, instructions, system] = accounts else {
        return Err(fail(
            "initialize_pda takes 6 accounts and (u16, Option<u16>)",
        ));
    };
    check(
        args.len() >= 3,
        "initialize_pda takes 6 accounts and (u16, Option<u16>)",
    )?;
    typed(
        program_id,
        group,
        GROUP_LEN,
        discriminator::GROUP,
        "not a group of the program",
    )?;
    check(account.is_writable, "the account is writable")?;
    check(authority.is_signer, "the authority signs")?;
    check(payer.is_signer && payer.is_writable, "the fee payer signs")?;
    check(
        *instructions.key == INSTRUCTIONS_SYSVAR,
        "not the instructions sysvar",
    )?;
    check(*system.key == SYSTEM_PROGRAM, "not the system program")?;
    let index: [u8; 2] = args[..2].try_into().unwrap();
    let (third_party, used) = option(&args[2..], 2, "third_party_id is an Option<u16>")?;
    check(args.len() == 2 + used, "trailing argument bytes")?;
    let third_party: [u8; 2] = third_party.map_or([0, 0], |b| b.try_into().unwrap());
    let seeds: [&[u8]; 5] = [
        b"marginfi_account",
        group.key.as_ref(),
        authority.key.as_ref(),
        &index,
        &third_party,
    ];
    let (expected, bump) = Pubkey::find_program_address(&seeds, program_id);
    check(*account.key == expected, "not the authority's account PDA")?;
    check(account.lamports() == 0, "account already exists")?;
    let lamports = Rent::get()?.minimum_balance(account::LEN);
    let bump = [bump];
    let signer: [&[u8]; 6] = [seeds[0], seeds[1], seeds[2], seeds[3], seeds[4], &bump];
    invoke_signed(
        &system_instruction::create_account(
            payer.key,
            account.key,
            lamports,
            account::LEN as u64,
            program_id,
        ),
        &[payer.clone(), account.clone(), system.clone()],
        &[&signer],
    )?;
    let mut data = account.data.borrow_mut();
    put(&mut data, 0, &discriminator::ACCOUNT);
    put(&mut data, account::GROUP, group.key.as_ref());
    put(&mut data, account::AUTHORITY, authority.key.as_ref());
    Ok(())
}

/// The checks deposit and withdraw share: the group, the authority's account in it, the group's
/// bank and its vault.
fn margin_checked(
    program_id: &Pubkey,
    group: &AccountInfo,
    account: &AccountInfo,
    authority: &AccountInfo,
    bank_info: &AccountInfo,
    vault: &AccountInfo,
    token_program: &AccountInfo,
) -> ProgramResult {
    typed(
        program_id,
        group,
        GROUP_LEN,
        discriminator::GROUP,
        "not a group of the program",
    )?;
    typed(
        program_id,
        account,
        account::LEN,
        discriminator::ACCOUNT,
        "not a margin account",
    )?;
    typed(
        program_id,
        bank_info,
        bank::LEN,
        discriminator::BANK,
        "not a bank",
    )?;
    check(
        account.is_writable && bank_info.is_writable,
        "account and bank writable",
    )?;
    check(authority.is_signer, "the authority signs")?;
    check(vault.is_writable, "the vault is writable")?;
    check(*token_program.key == spl_token::ID, "not the token program")?;
    let a = account.data.borrow();
    check(
        key(&a, account::GROUP) == *group.key,
        "the account is in another group",
    )?;
    check(
        key(&a, account::AUTHORITY) == *authority.key,
        "another authority's account",
    )?;
    let b = bank_info.data.borrow();
    check(
        key(&b, bank::GROUP) == *group.key,
        "the bank is in another group",
    )?;
    check(
        key(&b, bank::LIQUIDITY_VAULT) == *vault.key,
        "not the bank's liquidity vault",
    )
}

fn deposit(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    let [group, account, authority, bank_info, source, vault, token_program] = accounts else {
        return Err(fail("deposit takes 7 accounts and (u64, Option<bool>)"));
    };
    check(
        args.len() >= 9,
        "deposit takes 7 accounts and (u64, Option<bool>)",
    )?;
    check(!group.is_writable, "deposit takes the group read-only")?;
    margin_checked(
        program_id,
        group,
        account,
        authority,
        bank_info,
        vault,
        token_program,
    )?;
    check(source.is_writable, "the source is writable")?;
    let amount = u64::from_le_bytes(args[..8].try_into().unwrap());
    let (_, used) = option(&args[8..], 1, "deposit_up_to_limit is an Option<bool>")?;
    check(args.len() == 8 + used, "trailing argument bytes")?;
    check(amount > 0, "nothing to deposit")?;
    let value = u128_at(&bank_info.data.borrow(), bank::ASSET_SHARE_VALUE);
    let shares = shares_for(amount, value, false)?;
    check(shares > 0, "deposit too small for a share")?;
    invoke(
        &spl_token::instruction::transfer(
            &spl_token::ID,
            source.key,
            vault.key,
            authority.key,
            &[],
            amount,
        )?,
        &[
            source.clone(),
            vault.clone(),
            authority.clone(),
            token_program.clone(),
        ],
    )?;
    let mut a = account.data.borrow_mut();
    let at = slot_of(&a, bank_info.key)
        .or_else(|| free_slot(&a))
        .ok_or_else(|| fail("no free balance slot"))?;
    if a[at + account::ACTIVE] == 0 {
        a[at + account::ACTIVE] = 1;
        put(&mut a, at + account::BANK, bank_info.key.as_ref());
    }
    let held = u128_at(&a, at + account::ASSET_SHARES);
    put(
        &mut a,
        at + account::ASSET_SHARES,
        &(held + shares).to_le_bytes(),
    );
    let mut b = bank_info.data.borrow_mut();
    let total = u128_at(&b, bank::TOTAL_ASSET_SHARES);
    put(
        &mut b,
        bank::TOTAL_ASSET_SHARES,
        &(total + shares).to_le_bytes(),
    );
    Ok(())
}

fn withdraw(program_id: &Pubkey, accounts: &[AccountInfo], args: &[u8]) -> ProgramResult {
    let [group, account, authority, bank_info, destination, vault_authority_info, vault, token_program, remaining @ ..] =
        accounts
    else {
        return Err(fail("withdraw takes 8 accounts and the risk accounts"));
    };
    check(args.len() >= 9, "withdraw takes (u64, Option<bool>)")?;
    check(group.is_writable, "withdraw takes the group writable")?;
    margin_checked(
        program_id,
        group,
        account,
        authority,
        bank_info,
        vault,
        token_program,
    )?;
    check(destination.is_writable, "the destination is writable")?;
    let (expected_authority, bump) = vault_authority(bank_info.key);
    check(
        *vault_authority_info.key == expected_authority,
        "not the bank's vault authority",
    )?;
    let amount = u64::from_le_bytes(args[..8].try_into().unwrap());
    let (all, used) = option(&args[8..], 1, "withdraw_all is an Option<bool>")?;
    check(args.len() == 8 + used, "trailing argument bytes")?;
    let all = all.is_some_and(|b| b[0] == 1);
    let value = u128_at(&bank_info.data.borrow(), bank::ASSET_SHARE_VALUE);

    let (paid, shares) = {
        let mut a = account.data.borrow_mut();
        let at = slot_of(&a, bank_info.key).ok_or_else(|| fail("no balance in this bank"))?;
        let held = u128_at(&a, at + account::ASSET_SHARES);
        let (paid, shares) = if all {
            let paid = u64::try_from(amount_of(held, value)?).map_err(|_| fail("beyond u64"))?;
            (paid, held)
        } else {
            (amount, shares_for(amount, value, true)?)
        };
        check(paid > 0 && shares <= held, "withdrawal beyond the balance")?;
        let left = held - shares;
        put(&mut a, at + account::ASSET_SHARES, &left.to_le_bytes());
        if all || (left == 0 && u128_at(&a, at + account::LIABILITY_SHARES) == 0) {
            a[at..at + account::BALANCE_STRIDE].fill(0);
        }
        // The risk engine: `bank, oracle` per balance still active, banks in descending order.
        let mut active: Vec<Pubkey> = (0..account::BALANCE_COUNT)
            .map(|i| account::BALANCES + i * account::BALANCE_STRIDE)
            .filter(|at| a[at + account::ACTIVE] == 1)
            .map(|at| {
                check(
                    u128_at(&a, at + account::LIABILITY_SHARES) == 0,
                    "the account owes: health not priced by the double",
                )
                .map(|_| key(&a, at + account::BANK))
            })
            .collect::<Result<_, _>>()?;
        active.sort_by(|x, y| y.as_ref().cmp(x.as_ref()));
        check(
            remaining.len() == active.len() * 2,
            "risk accounts: one bank and its oracle per active balance",
        )?;
        for (pair, bank_key) in remaining.chunks(2).zip(&active) {
            check(
                *pair[0].key == *bank_key,
                "risk accounts: banks in descending order",
            )?;
            let oracle = if *pair[0].key == *bank_info.key {
                key(&bank_info.data.borrow(), bank::ORACLE_KEYS)
            } else {
                typed(
                    program_id,
                    &pair[0],
                    bank::LEN,
                    discriminator::BANK,
                    "risk accounts: not a bank",
                )?;
                key(&pair[0].data.borrow(), bank::ORACLE_KEYS)
            };
            check(
                *pair[1].key == oracle,
                "risk accounts: not the bank's oracle",
            )?;
        }
        (paid, shares)
    };
    let mut b = bank_info.data.borrow_mut();
    let total = u128_at(&b, bank::TOTAL_ASSET_SHARES);
    put(
        &mut b,
        bank::TOTAL_ASSET_SHARES,
        &total
            .checked_sub(shares)
            .ok_or_else(|| fail("bank shares underflow"))?
            .to_le_bytes(),
    );
    drop(b);
    let bump = [bump];
    let seeds: &[&[u8]] = &[b"liquidity_vault_auth", bank_info.key.as_ref(), &bump];
    invoke_signed(
        &spl_token::instruction::transfer(
            &spl_token::ID,
            vault.key,
            destination.key,
            vault_authority_info.key,
            &[],
            paid,
        )?,
        &[
            vault.clone(),
            destination.clone(),
            vault_authority_info.clone(),
            token_program.clone(),
        ],
        &[seeds],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_and_amounts_round_toward_the_vault() {
        assert_eq!(shares_for(1_000, ONE, false).unwrap(), 1_000 << 48);
        // At 1.05, 1,000 units buy 952.38… shares: down on deposit, up on withdrawal.
        let value = ONE * 105 / 100;
        let down = shares_for(1_000, value, false).unwrap();
        let up = shares_for(1_000, value, true).unwrap();
        assert_eq!(up, down + 1);
        assert!(amount_of(down, value).unwrap() <= 1_000);
        assert!(amount_of(up, value).unwrap() >= 999);
        assert_eq!(amount_of(10 << 48, ONE * 3 / 2).unwrap(), 15);
        assert_eq!(
            amount_of(u128::from(u64::MAX) << 48, ONE).unwrap(),
            u128::from(u64::MAX)
        );
    }
}
