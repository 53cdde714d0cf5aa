//! Creating and loading PDA accounts so that nobody can block their creation.
//!
//! Anchor 1.2's `init` creates an address that already holds lamports with the system
//! instruction `CreateAccountAllowPrefund`, which Agave 3.1's system program does not know: the
//! instruction fails. Every PDA here has a predictable address (a market's from its UUID, an
//! oracle's vote, the next epoch, a claim receipt), so a one-lamport donation would block it for
//! good. These helpers create an empty address with `create_account` and take over a funded one
//! with top-up + `allocate` + `assign`, which every runtime supports.

use anchor_lang::prelude::*;
use anchor_lang::solana_program::program_pack::Pack;
use anchor_lang::system_program;
use anchor_lang::{AccountDeserialize, AccountSerialize, Discriminator, Owner};
use anchor_spl::token;

use crate::transfer::transfer_sol;

/// Creates the PDA `target` (signed for by `signer_seeds`) with `space` bytes owned by `owner`,
/// rent paid by `payer`. Fails with `AccountAlreadyInitialized` if it is already in use.
pub fn create_pda_account<'info>(
    payer: &AccountInfo<'info>,
    target: &AccountInfo<'info>,
    space: usize,
    owner: &Pubkey,
    signer_seeds: &[&[u8]],
) -> Result<()> {
    let in_use = *target.owner != system_program::ID || !target.data_is_empty();
    if in_use {
        return Err(ProgramError::AccountAlreadyInitialized.into());
    }
    let required = Rent::get()?.minimum_balance(space);
    let funded = target.lamports();
    let signer: &[&[&[u8]]] = &[signer_seeds];
    if funded == 0 {
        return system_program::create_account(
            CpiContext::new_with_signer(
                system_program::ID,
                system_program::CreateAccount {
                    from: payer.clone(),
                    to: target.clone(),
                },
                signer,
            ),
            required,
            space as u64,
            owner,
        );
    }
    transfer_sol(
        payer.clone(),
        target.clone(),
        required.saturating_sub(funded),
        &[],
    )?;
    system_program::allocate(
        CpiContext::new_with_signer(
            system_program::ID,
            system_program::Allocate {
                account_to_allocate: target.clone(),
            },
            signer,
        ),
        space as u64,
    )?;
    system_program::assign(
        CpiContext::new_with_signer(
            system_program::ID,
            system_program::Assign {
                account_to_assign: target.clone(),
            },
            signer,
        ),
        owner,
    )
}

/// Creates the program account `target` and writes `value` (with its discriminator) into it.
pub fn init_account<'info, T>(
    payer: &AccountInfo<'info>,
    target: &AccountInfo<'info>,
    signer_seeds: &[&[u8]],
    value: &T,
) -> Result<()>
where
    T: AccountSerialize + Discriminator + Owner + Space,
{
    create_pda_account(
        payer,
        target,
        T::DISCRIMINATOR.len() + T::INIT_SPACE,
        &T::owner(),
        signer_seeds,
    )?;
    write_account(target, value)
}

/// Serialises `value` into the account's data.
pub fn write_account<T: AccountSerialize>(target: &AccountInfo, value: &T) -> Result<()> {
    let mut data = target.try_borrow_mut_data()?;
    value.try_serialize(&mut &mut data[..])
}

/// `T` from an account this program owns, or `None` for an address nobody created yet (a
/// system-owned address with no data, possibly pre-funded).
pub fn load_existing<T: AccountDeserialize + Owner>(info: &AccountInfo) -> Result<Option<T>> {
    if *info.owner == system_program::ID && info.data_is_empty() {
        return Ok(None);
    }
    if *info.owner != T::owner() {
        return Err(Error::from(ErrorCode::AccountOwnedByWrongProgram)
            .with_pubkeys((*info.owner, T::owner())));
    }
    let data = info.try_borrow_data()?;
    T::try_deserialize(&mut &data[..]).map(Some)
}

/// Creates the token account PDA `vault` for `mint` with `authority`, on the classic SPL Token
/// program.
pub fn create_token_vault<'info>(
    payer: &AccountInfo<'info>,
    vault: &AccountInfo<'info>,
    mint: &AccountInfo<'info>,
    authority: &Pubkey,
    signer_seeds: &[&[u8]],
) -> Result<()> {
    create_pda_account(
        payer,
        vault,
        token::spl_token::state::Account::LEN,
        &token::ID,
        signer_seeds,
    )?;
    let ix = token::spl_token::instruction::initialize_account3(
        &token::ID,
        vault.key,
        mint.key,
        authority,
    )?;
    anchor_lang::solana_program::program::invoke(&ix, &[vault.clone(), mint.clone()])
        .map_err(Into::into)
}
