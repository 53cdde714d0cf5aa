//! A wallet's holding of the loyalty token (spec 4.8, `holder`), read from the ledger: the
//! balance of its associated token account (SPL Token or Token-2022, whichever owns the mint)
//! and how long it has held at least the minimum, from the account's transaction history.

use narrative_sdk::Pubkey;

use crate::chain::ledger::{Ledger, LedgerError, TokenAccountRef};

pub const TOKEN_PROGRAM: Pubkey =
    Pubkey::from_str_const("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
pub const TOKEN_2022_PROGRAM: Pubkey =
    Pubkey::from_str_const("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");
pub const ASSOCIATED_TOKEN_PROGRAM: Pubkey =
    Pubkey::from_str_const("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL");

/// At most this many transactions of the account are read for one check; a wallet that moved
/// the token more often within the hold period is answered 503 rather than read without end.
pub const HISTORY_LIMIT: usize = 500;

/// The associated token account of `wallet` for `mint` under `token_program`.
pub fn associated_token_account(wallet: &Pubkey, mint: &Pubkey, token_program: &Pubkey) -> Pubkey {
    narrative_sdk::derive::find_program_address(
        &[wallet.as_ref(), token_program.as_ref(), mint.as_ref()],
        &ASSOCIATED_TOKEN_PROGRAM,
    )
    .0
}

/// What the ledger says of a wallet's loyalty tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holding {
    /// Base units in the associated token account now (0 without one).
    pub balance: u64,
    /// Since when it has held at least the minimum without a break (unix seconds): exact when
    /// the history shows the moment, otherwise the time of the last change before the period
    /// asked about (it held at least since then). `None` when it does not hold the minimum.
    pub held_since: Option<i64>,
}

/// The balance of a token account's data: mint (0..32), owner (32..64), amount (64..72), the
/// same in SPL Token and Token-2022 accounts.
pub(crate) fn token_amount(data: &[u8], mint: &Pubkey, wallet: &Pubkey) -> Option<u64> {
    if data.len() < 72 || &data[0..32] != mint.as_ref() || &data[32..64] != wallet.as_ref() {
        return None;
    }
    Some(u64::from_le_bytes(data[64..72].try_into().ok()?))
}

/// How much of `mint` `wallet` holds, and since when it has held at least `minimum`, looking
/// back to `since` (the start of the hold period).
pub async fn holding(
    ledger: &dyn Ledger,
    wallet: &Pubkey,
    mint: &Pubkey,
    minimum: u64,
    since: i64,
) -> Result<Holding, LedgerError> {
    // One read: the mint (its owner says which token program it is under) and the wallet's
    // associated account under each program.
    let classic_address = associated_token_account(wallet, mint, &TOKEN_PROGRAM);
    let extended_address = associated_token_account(wallet, mint, &TOKEN_2022_PROGRAM);
    let (_, accounts) = ledger
        .accounts(&[*mint, classic_address, extended_address])
        .await?;
    let [mint_account, classic, extended] = <[_; 3]>::try_from(accounts)
        .map_err(|_| LedgerError::Malformed("not one account per address asked".into()))?;
    let (token_program, address, account) = match mint_account {
        Some(found) if found.owner == TOKEN_PROGRAM => (TOKEN_PROGRAM, classic_address, classic),
        Some(found) if found.owner == TOKEN_2022_PROGRAM => {
            (TOKEN_2022_PROGRAM, extended_address, extended)
        }
        Some(_) => {
            return Err(LedgerError::Malformed(format!(
                "the loyalty mint {mint} is not a token mint"
            )))
        }
        None => {
            return Err(LedgerError::Malformed(format!(
                "the loyalty mint {mint} does not exist"
            )))
        }
    };
    let balance = account
        .filter(|account| account.owner == token_program)
        .and_then(|account| token_amount(&account.data, mint, wallet))
        .unwrap_or(0);
    if balance < minimum.max(1) {
        return Ok(Holding {
            balance,
            held_since: None,
        });
    }
    let account = TokenAccountRef {
        address,
        mint: *mint,
    };
    // The walk ends where the hold began: nothing older can change when it did.
    let history = ledger
        .token_history(&account, since, minimum, HISTORY_LIMIT)
        .await?;
    Ok(Holding {
        balance,
        held_since: held_since(&history, minimum, since),
    })
}

/// Walking back from now (newest first): the hold began at the latest change that brought the
/// balance up from under `minimum`. A change before `since` with no such change after it means
/// the minimum was held all through the period, at least since that change. A history that
/// ends without either (a node that pruned it, or times it does not know) proves no hold.
fn held_since(
    history: &[crate::chain::ledger::BalanceChange],
    minimum: u64,
    since: i64,
) -> Option<i64> {
    for change in history {
        let time = change.block_time?;
        if change.before < minimum {
            return Some(time);
        }
        if time < since {
            return Some(time);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::ledger::BalanceChange;

    fn change(time: i64, before: u64, after: u64) -> BalanceChange {
        BalanceChange {
            signature: Default::default(),
            block_time: Some(time),
            before,
            after,
        }
    }

    #[test]
    fn the_hold_starts_where_the_balance_last_rose_past_the_minimum() {
        // Bought 100 at t=50, sold down to 60 at t=70, topped up at t=90: with a minimum of
        // 80 the hold began at 90; with 50 it began at 50.
        let history = [change(90, 60, 120), change(70, 100, 60), change(50, 0, 100)];
        assert_eq!(held_since(&history, 80, 0), Some(90));
        assert_eq!(held_since(&history, 50, 0), Some(50));
        // Looking back only to 80, the change at 70 (before the period) ends the walk for 50.
        assert_eq!(held_since(&history, 50, 80), Some(70));
        // A history without its first change or its times proves nothing.
        assert_eq!(held_since(&history[..1], 50, 0), None);
        let untimed = [BalanceChange {
            block_time: None,
            ..change(0, 0, 1)
        }];
        assert_eq!(held_since(&untimed, 1, 0), None);
    }

    #[test]
    fn a_token_account_is_read_only_for_its_mint_and_owner() {
        let (mint, wallet) = (Pubkey::new_unique(), Pubkey::new_unique());
        let mut data = [mint.as_ref(), wallet.as_ref(), &42u64.to_le_bytes()].concat();
        data.extend_from_slice(&[0; 93]);
        assert_eq!(token_amount(&data, &mint, &wallet), Some(42));
        assert_eq!(token_amount(&data, &wallet, &mint), None);
        assert_eq!(token_amount(&data[..71], &mint, &wallet), None);
    }
}
