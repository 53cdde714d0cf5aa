//! Test doubles of the outside venues, which cannot run here: native programs registered under
//! the venues' real program ids that accept exactly the instructions and accounts of their
//! published interfaces, and move real tokens. They are stand-ins, not the venues: they share
//! the interface (tags or discriminators, account order and flags, account layouts), not the
//! venues' code.
//!
//! - [`token_lending`]: SPL token-lending (`lend_a`).
//! - [`klend`]: Kamino Lending (`lend_b`).
//! - [`marginfi`]: marginfi v2 (`p0`).

pub mod klend;
pub mod marginfi;
pub mod token_lending;

pub use token_lending::{
    install_token_lending, reserve_account, stranger, LendingMarket, START_AVAILABLE,
    START_BORROWED, START_COLLATERAL, TOKEN_LENDING,
};

use anchor_lang::prelude::{ProgramError, Pubkey};
use anchor_lang::solana_program::msg;
use anchor_lang::solana_program::program_pack::Pack;
use anchor_spl::token::spl_token;
use solana_account::Account;
use solana_program_test::ProgramTest;

use crate::harness::SOL;

pub const NATIVE_MINT: Pubkey =
    Pubkey::from_str_const("So11111111111111111111111111111111111111112");
pub(crate) const CLOCK_ID: Pubkey = crate::harness::CLOCK_SYSVAR;
/// More than any installed account's rent-exempt minimum.
pub(crate) const RENT: u64 = 10 * SOL / 1_000;

pub(crate) fn key(data: &[u8], offset: usize) -> Pubkey {
    Pubkey::new_from_array(data[offset..offset + 32].try_into().unwrap())
}
pub(crate) fn u64_at(data: &[u8], offset: usize) -> u64 {
    u64::from_le_bytes(data[offset..offset + 8].try_into().unwrap())
}
pub(crate) fn u128_at(data: &[u8], offset: usize) -> u128 {
    u128::from_le_bytes(data[offset..offset + 16].try_into().unwrap())
}
pub(crate) fn put(data: &mut [u8], offset: usize, bytes: &[u8]) {
    data[offset..offset + bytes.len()].copy_from_slice(bytes);
}

pub(crate) fn packed<T: Pack>(value: T) -> Vec<u8> {
    let mut data = vec![0u8; T::LEN];
    value.pack_into_slice(&mut data);
    data
}

pub(crate) fn owned_by(owner: Pubkey, lamports: u64, data: Vec<u8>) -> Account {
    Account {
        lamports,
        data,
        owner,
        executable: false,
        rent_epoch: 0,
    }
}

/// A rejection, logged with the double's name so a failing transaction says why.
pub(crate) fn fail(double: &str, why: &str) -> ProgramError {
    msg!("{} double: {}", double, why);
    ProgramError::InvalidArgument
}

/// A program account of one type, for the double named `double`: owned by the program, `len`
/// bytes, starting with the type's Anchor `discriminator`.
pub(crate) fn typed(
    double: &str,
    program_id: &Pubkey,
    info: &anchor_lang::prelude::AccountInfo,
    len: usize,
    discriminator: [u8; 8],
    what: &str,
) -> Result<(), ProgramError> {
    let data = info.data.borrow();
    if info.owner == program_id && data.len() == len && data[..8] == discriminator {
        Ok(())
    } else {
        Err(fail(double, what))
    }
}

/// An SPL token account of `mint` owned by `owner` holding `amount` (wrapped SOL when the mint
/// is the native one).
pub fn token_account(mint: Pubkey, owner: Pubkey, amount: u64) -> Account {
    let native = mint == NATIVE_MINT;
    owned_by(
        spl_token::ID,
        RENT + if native { amount } else { 0 },
        packed(spl_token::state::Account {
            mint,
            owner,
            amount,
            delegate: None.into(),
            state: spl_token::state::AccountState::Initialized,
            is_native: if native { Some(RENT) } else { None }.into(),
            delegated_amount: 0,
            close_authority: None.into(),
        }),
    )
}

/// An SPL mint with `authority` minting, `supply` out, 9 decimals.
pub(crate) fn mint_account(authority: Option<Pubkey>, supply: u64) -> Account {
    mint_with_decimals(authority, supply, 9)
}

/// A mint of `decimals` decimals.
pub(crate) fn mint_with_decimals(authority: Option<Pubkey>, supply: u64, decimals: u8) -> Account {
    owned_by(
        spl_token::ID,
        RENT,
        packed(spl_token::state::Mint {
            mint_authority: authority.into(),
            supply,
            decimals,
            is_initialized: true,
            freeze_authority: None.into(),
        }),
    )
}

/// The wrapped-SOL mint, which program-test's genesis lacks; installed once whichever doubles
/// are on.
pub fn install_native_mint(pt: &mut ProgramTest) {
    pt.add_account(NATIVE_MINT, mint_account(None, 0));
}
