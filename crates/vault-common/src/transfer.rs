//! Moving lamports and SPL tokens by CPI, from a signing wallet or out of a PDA vault.
//!
//! Vaults are PDAs, so moving value out of them needs the vault's (or its authority's) seeds;
//! `signer_seeds` is empty when the source is a wallet that signed the transaction. A zero amount
//! is a no-op rather than a CPI, so callers can pass computed shares without special-casing 0.

use anchor_lang::prelude::*;
use anchor_lang::system_program;
use anchor_spl::token;

/// Lamports from `from` (a system-owned account: a signing wallet or a system-owned PDA vault) to
/// `to`.
pub fn transfer_sol<'info>(
    from: AccountInfo<'info>,
    to: AccountInfo<'info>,
    amount: u64,
    signer_seeds: &[&[&[u8]]],
) -> Result<()> {
    if amount == 0 {
        return Ok(());
    }
    system_program::transfer(
        CpiContext::new_with_signer(
            system_program::ID,
            system_program::Transfer { from, to },
            signer_seeds,
        ),
        amount,
    )
}

/// Tokens from `from` to `to` with a decimals check, signed by `authority`.
pub fn transfer_tokens<'info>(
    from: AccountInfo<'info>,
    mint: AccountInfo<'info>,
    to: AccountInfo<'info>,
    authority: AccountInfo<'info>,
    amount: u64,
    decimals: u8,
    signer_seeds: &[&[&[u8]]],
) -> Result<()> {
    if amount == 0 {
        return Ok(());
    }
    token::transfer_checked(
        CpiContext::new_with_signer(
            token::ID,
            token::TransferChecked {
                from,
                mint,
                to,
                authority,
            },
            signer_seeds,
        ),
        amount,
        decimals,
    )
}

/// Lamports a system-owned vault holds above its rent-exempt reserve.
pub fn lamports_above_rent(account: &AccountInfo, rent: &Rent) -> u64 {
    account
        .lamports()
        .saturating_sub(rent.minimum_balance(account.data_len()))
}
