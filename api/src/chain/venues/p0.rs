//! `p0`, the unified-margin venue: marginfi v2 (Project 0). A wallet holds one margin account
//! per group (a PDA of the group and the wallet, index 0), with a balance per bank: asset shares
//! worth `shares × asset_share_value` of the bank's token, liability shares likewise. The
//! instructions and zero-copy layouts are pinned here as data from the program's published IDL
//! (mrgn-ts `marginfi_0.1.7.json`, in tests/ts/venues/idl/marginfi.json) and its size-asserted
//! type crate (docs/venues-research.md §6); the builders are checked against `@coral-xyz/anchor`
//! in tests/ts.
//!
//! A withdrawal goes through the program's risk engine, which takes as remaining accounts the
//! `bank, oracle` pair of every balance still active after it, banks in descending key order
//! (the order the program keeps balances in, and what mrgn-ts' `composeRemainingAccounts` sends).
//! Staked-collateral banks need more accounts than that; a balance in one is refused here.

use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::system_program;
use narrative_sdk::Pubkey;
use poem::http::StatusCode;

use super::{
    anchor_data, key_at, le_u128, mul_div, read, AssociatedAccount, TokenLeg, Transactions,
    VenueToken, INSTRUCTIONS_SYSVAR,
};
use crate::chain::holdings::TOKEN_PROGRAM;
use crate::chain::ledger::Ledger;
use crate::error::ApiError;
use crate::values::VenueId;

pub const MAINNET_PROGRAM: Pubkey =
    Pubkey::from_str_const("MFv2hWf31Z9kbCa1snEPYctwafyhdvnV7FZnsebVacA");
pub const MAINNET_GROUP: Pubkey =
    Pubkey::from_str_const("4qp6Fx6tnZkY5Wropq9wUYgtFxXKwE6viZxFHg3rdAG8");
/// The main group's SOL and USDC banks (mrgn-ts `packages/tools/scripts/accounts_ref.md`).
pub const MAINNET_SOL_BANK: Pubkey =
    Pubkey::from_str_const("CCKtUs6Cgwo4aaQUmBPmyoApH2gUDErxNZCAntD6LYGh");
pub const MAINNET_USDC_BANK: Pubkey =
    Pubkey::from_str_const("2s37akK2eyBbp8DZgCm7RtsaEz8eJP3Nxd4urLHQv7yB");
pub const DEVNET_PROGRAM: Pubkey =
    Pubkey::from_str_const("neetcne3Ctrrud7vLdt2ypMm21gZHGN2mCmqWaMVcBQ");
pub const DEVNET_GROUP: Pubkey =
    Pubkey::from_str_const("2eophx2kdM71vgKQnZXmA7GGCVZ1voRMxU2F4Gcournb");

/// Instruction names as the IDL spells them (their discriminators are the Anchor hashes; the
/// tests compare them with the IDL's bytes).
mod ix {
    pub const INITIALIZE_PDA: &str = "marginfi_account_initialize_pda";
    pub const DEPOSIT: &str = "lending_account_deposit";
    pub const WITHDRAW: &str = "lending_account_withdraw";
}

/// `Bank` (8 + 1856 bytes).
pub mod bank {
    pub const LEN: usize = 1864;
    pub const MINT: usize = 8;
    pub const MINT_DECIMALS: usize = 40;
    pub const GROUP: usize = 41;
    pub const ASSET_SHARE_VALUE: usize = 80;
    pub const LIABILITY_SHARE_VALUE: usize = 96;
    pub const LIQUIDITY_VAULT: usize = 112;
    pub const ASSET_WEIGHT_MAINT: usize = 312;
    pub const LIABILITY_WEIGHT_MAINT: usize = 344;
    pub const ORACLE_KEYS: usize = 610;
    pub const LENDING_RATE: usize = 1380;
    pub const BORROWING_RATE: usize = 1384;
}

/// `MarginfiAccount` (8 + 2304 bytes).
pub mod account {
    pub const LEN: usize = 2312;
    pub const GROUP: usize = 8;
    pub const AUTHORITY: usize = 40;
    pub const BALANCES: usize = 72;
    pub const BALANCE_STRIDE: usize = 104;
    pub const BALANCE_COUNT: usize = 16;
    /// Within a balance: 1 when it is in use, then its bank.
    pub const ACTIVE: usize = 0;
    pub const BANK: usize = 1;
    pub const ASSET_TAG: usize = 33;
    pub const ASSET_SHARES: usize = 40;
    pub const LIABILITY_SHARES: usize = 56;
}

/// A bank's asset tag for staked collateral (its risk accounts are more than `bank, oracle`).
const STAKED_ASSET_TAG: u8 = 2;

/// I80F48's fractional bits; two of them multiplied carry 96.
const FRACTION: u32 = 48;

/// The cache's rates are u32 fractions of 1000 %.
fn rate_pct(raw: u32) -> f64 {
    f64::from(raw) / f64::from(u32::MAX) * 1000.0
}

fn i80f48(data: &[u8], at: usize) -> Option<u128> {
    // Share values, shares and weights are never negative; a negative one is refused.
    let raw = le_u128(data, at)? as i128;
    u128::try_from(raw).ok()
}

fn i80f48_f64(raw: u128) -> f64 {
    raw as f64 / (1u128 << FRACTION) as f64
}

/// A bank as the ledger holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bank {
    pub address: Pubkey,
    pub mint: Pubkey,
    pub decimals: u8,
    pub group: Pubkey,
    pub asset_share_value: u128,
    pub liability_share_value: u128,
    pub liquidity_vault: Pubkey,
    pub asset_weight_maint: f64,
    pub liability_weight_maint: f64,
    pub oracle: Pubkey,
    /// Supply and borrow APR in percent, from the bank's rate cache.
    pub lending_apr_pct: f64,
    pub borrowing_apr_pct: f64,
}

impl Bank {
    pub fn decode(address: Pubkey, data: &[u8]) -> Option<Bank> {
        if data.len() != bank::LEN || data[..8] != super::anchor_discriminator("account:Bank") {
            return None;
        }
        let u32_at = |at: usize| Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?));
        Some(Bank {
            address,
            mint: key_at(data, bank::MINT)?,
            decimals: *data.get(bank::MINT_DECIMALS)?,
            group: key_at(data, bank::GROUP)?,
            asset_share_value: i80f48(data, bank::ASSET_SHARE_VALUE)?,
            liability_share_value: i80f48(data, bank::LIABILITY_SHARE_VALUE)?,
            liquidity_vault: key_at(data, bank::LIQUIDITY_VAULT)?,
            asset_weight_maint: i80f48_f64(i80f48(data, bank::ASSET_WEIGHT_MAINT)?),
            liability_weight_maint: i80f48_f64(i80f48(data, bank::LIABILITY_WEIGHT_MAINT)?),
            oracle: key_at(data, bank::ORACLE_KEYS)?,
            lending_apr_pct: rate_pct(u32_at(bank::LENDING_RATE)?),
            borrowing_apr_pct: rate_pct(u32_at(bank::BORROWING_RATE)?),
        })
    }

    /// Base units `shares` (I80F48 raw) of the bank's assets are worth, rounded down.
    pub fn asset_amount(&self, shares: u128) -> u64 {
        mul_div(shares, self.asset_share_value, 1 << (2 * FRACTION))
    }

    /// Base units `shares` of its liabilities owe, rounded up (what a debt is counted at).
    pub fn liability_amount(&self, shares: u128) -> u64 {
        let floor = mul_div(shares, self.liability_share_value, 1 << (2 * FRACTION));
        let exact = shares
            .checked_mul(self.liability_share_value)
            .is_some_and(|p| p % (1 << (2 * FRACTION)) == 0);
        if exact {
            floor
        } else {
            floor.saturating_add(1)
        }
    }
}

/// One active balance of a margin account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Balance {
    pub bank: Pubkey,
    pub asset_tag: u8,
    pub asset_shares: u128,
    pub liability_shares: u128,
}

/// A wallet's margin account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarginAccount {
    pub address: Pubkey,
    pub group: Pubkey,
    pub authority: Pubkey,
    pub balances: Vec<Balance>,
}

impl MarginAccount {
    pub fn decode(address: Pubkey, data: &[u8]) -> Option<MarginAccount> {
        if data.len() != account::LEN
            || data[..8] != super::anchor_discriminator("account:MarginfiAccount")
        {
            return None;
        }
        let mut balances = Vec::new();
        for i in 0..account::BALANCE_COUNT {
            let at = account::BALANCES + i * account::BALANCE_STRIDE;
            if data[at + account::ACTIVE] != 1 {
                continue;
            }
            balances.push(Balance {
                bank: key_at(data, at + account::BANK)?,
                asset_tag: data[at + account::ASSET_TAG],
                asset_shares: i80f48(data, at + account::ASSET_SHARES)?,
                liability_shares: i80f48(data, at + account::LIABILITY_SHARES)?,
            });
        }
        Some(MarginAccount {
            address,
            group: key_at(data, account::GROUP)?,
            authority: key_at(data, account::AUTHORITY)?,
            balances,
        })
    }

    pub fn balance(&self, bank: &Pubkey) -> Option<&Balance> {
        self.balances.iter().find(|b| b.bank == *bank)
    }
}

/// How much a withdrawal takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithdrawAmount {
    /// These base units.
    Exact(u64),
    /// The whole balance, closing it.
    All,
}

/// A prepared deposit: its transactions (the account's creation first when missing).
pub struct Deposit {
    pub transactions: Transactions,
    pub account: Pubkey,
    pub needs_account_creation: bool,
}

/// A prepared withdrawal: its transaction and what it pays out at the bank's share value now.
pub struct Withdrawal {
    pub transactions: Transactions,
    pub account: Pubkey,
    pub expected_base: u64,
}

/// p0 as configured: the program, the group and its banks per token.
pub struct P0 {
    pub program: Pubkey,
    pub group: Pubkey,
    pub banks: Vec<(VenueToken, Pubkey)>,
}

fn unreadable(what: &str) -> ApiError {
    super::unreadable(VenueId::P0, what)
}

impl P0 {
    /// The wallet's margin account: index 0, no third party.
    pub fn account_address(&self, wallet: &Pubkey) -> Pubkey {
        narrative_sdk::derive::find_program_address(
            &[
                b"marginfi_account",
                self.group.as_ref(),
                wallet.as_ref(),
                &0u16.to_le_bytes(),
                &0u16.to_le_bytes(),
            ],
            &self.program,
        )
        .0
    }

    /// The bank's liquidity vault authority.
    pub fn vault_authority(&self, bank: &Pubkey) -> Pubkey {
        narrative_sdk::derive::find_program_address(
            &[b"liquidity_vault_auth", bank.as_ref()],
            &self.program,
        )
        .0
    }

    /// The configured token whose mint is `mint` and its bank (400 `unsupported_asset`).
    pub fn token_of_mint(&self, mint: &Pubkey) -> Result<(VenueToken, Pubkey), ApiError> {
        self.banks
            .iter()
            .find(|(t, _)| t.mint == *mint)
            .copied()
            .ok_or_else(|| {
                ApiError::coded(
                    StatusCode::BAD_REQUEST,
                    "unsupported_asset",
                    format!(
                        "p0 has no bank for the mint {mint} configured (its banks: {})",
                        self.banks
                            .iter()
                            .map(|(t, _)| t.symbol.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })
    }

    /// `marginfi_account_initialize_pda` of the wallet's account, the wallet paying.
    pub fn initialize_account(&self, wallet: &Pubkey) -> Instruction {
        // account_index 0, third_party_id None.
        Instruction {
            program_id: self.program,
            accounts: vec![
                AccountMeta::new_readonly(self.group, false),
                AccountMeta::new(self.account_address(wallet), false),
                AccountMeta::new_readonly(*wallet, true),
                AccountMeta::new(*wallet, true),
                AccountMeta::new_readonly(INSTRUCTIONS_SYSVAR, false),
                AccountMeta::new_readonly(system_program::ID, false),
            ],
            data: anchor_data(ix::INITIALIZE_PDA, &[0, 0, 0]),
        }
    }

    /// `lending_account_deposit` of `amount` from `source` (`deposit_up_to_limit` None).
    pub fn deposit_instruction(
        &self,
        wallet: &Pubkey,
        bank: &Bank,
        source: &Pubkey,
        amount: u64,
    ) -> Instruction {
        let mut args = amount.to_le_bytes().to_vec();
        args.push(0);
        Instruction {
            program_id: self.program,
            accounts: vec![
                AccountMeta::new_readonly(self.group, false),
                AccountMeta::new(self.account_address(wallet), false),
                AccountMeta::new_readonly(*wallet, true),
                AccountMeta::new(bank.address, false),
                AccountMeta::new(*source, false),
                AccountMeta::new(bank.liquidity_vault, false),
                AccountMeta::new_readonly(TOKEN_PROGRAM, false),
            ],
            data: anchor_data(ix::DEPOSIT, &args),
        }
    }

    /// `lending_account_withdraw` to `destination`, with the risk engine's `bank, oracle` pairs
    /// (`risk`, already ordered).
    pub fn withdraw_instruction(
        &self,
        wallet: &Pubkey,
        bank: &Bank,
        destination: &Pubkey,
        amount: WithdrawAmount,
        risk: &[(Pubkey, Pubkey)],
    ) -> Instruction {
        let (amount, all) = match amount {
            WithdrawAmount::Exact(amount) => (amount, None),
            WithdrawAmount::All => (0, Some(true)),
        };
        let mut args = amount.to_le_bytes().to_vec();
        match all {
            None => args.push(0),
            Some(all) => args.extend_from_slice(&[1, u8::from(all)]),
        }
        let mut accounts = vec![
            AccountMeta::new(self.group, false),
            AccountMeta::new(self.account_address(wallet), false),
            AccountMeta::new_readonly(*wallet, true),
            AccountMeta::new(bank.address, false),
            AccountMeta::new(*destination, false),
            AccountMeta::new_readonly(self.vault_authority(&bank.address), false),
            AccountMeta::new(bank.liquidity_vault, false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
        ];
        for (bank, oracle) in risk {
            accounts.push(AccountMeta::new_readonly(*bank, false));
            accounts.push(AccountMeta::new_readonly(*oracle, false));
        }
        Instruction {
            program_id: self.program,
            accounts,
            data: anchor_data(ix::WITHDRAW, &args),
        }
    }

    fn decode_bank(&self, address: Pubkey, found: Option<&[u8]>) -> Result<Bank, ApiError> {
        let bank = found
            .and_then(|data| Bank::decode(address, data))
            .ok_or_else(|| unreadable("bank"))?;
        if bank.group != self.group {
            return Err(unreadable("bank (of another group)"));
        }
        Ok(bank)
    }

    fn decode_account(&self, address: Pubkey, data: &[u8]) -> Result<MarginAccount, ApiError> {
        MarginAccount::decode(address, data)
            .filter(|a| a.group == self.group)
            .ok_or_else(|| unreadable("margin account"))
    }

    /// The banks at `addresses`, in one read.
    pub async fn banks(
        &self,
        ledger: &dyn Ledger,
        addresses: &[Pubkey],
    ) -> Result<Vec<Bank>, ApiError> {
        let found = read(ledger, addresses).await?;
        addresses
            .iter()
            .zip(&found)
            .map(|(address, account)| {
                self.decode_bank(*address, account.as_ref().map(|a| a.data.as_slice()))
            })
            .collect()
    }

    /// The wallet's margin account, None when it has none.
    pub async fn account(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
    ) -> Result<Option<MarginAccount>, ApiError> {
        let address = self.account_address(wallet);
        match read(ledger, &[address]).await?.remove(0) {
            None => Ok(None),
            Some(found) => self.decode_account(address, &found.data).map(Some),
        }
    }

    /// The transactions depositing `amount` of `token` into `bank`: the account's creation
    /// first when it has none (its own transaction: it moves no money and cannot be undone by
    /// a deposit that fails), then the deposit, SOL wrapped around it.
    pub async fn deposit(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
        bank: &Pubkey,
        amount: u64,
    ) -> Result<Deposit, ApiError> {
        let address = self.account_address(wallet);
        let source = AssociatedAccount::of(wallet, &token.mint, &TOKEN_PROGRAM);
        let found = read(ledger, &[address, *bank, source.address]).await?;
        let bank = self.decode_bank(*bank, found[1].as_ref().map(|a| a.data.as_slice()))?;
        if bank.mint != token.mint {
            return Err(unreadable("bank (of another mint)"));
        }
        if let Some(existing) = &found[0] {
            let account = self.decode_account(address, &existing.data)?;
            if account.authority != *wallet {
                return Err(unreadable("margin account (of another authority)"));
            }
        }
        let needs_account_creation = found[0].is_none();
        let leg = TokenLeg::source_as_read(wallet, token, amount, &source, &found[2])?;
        let mut transactions = Vec::new();
        if needs_account_creation {
            transactions.push(vec![self.initialize_account(wallet)]);
        }
        let mut ixs = leg.before;
        ixs.push(self.deposit_instruction(wallet, &bank, &leg.account, amount));
        ixs.extend(leg.after);
        transactions.push(ixs);
        Ok(Deposit {
            transactions,
            account: address,
            needs_account_creation,
        })
    }

    /// The transaction withdrawing from the wallet's balance in `bank`: 404 without an account
    /// or a balance there, 400 `insufficient_balance` beyond it.
    pub async fn withdraw(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
        bank: &Pubkey,
        amount: WithdrawAmount,
    ) -> Result<Withdrawal, ApiError> {
        let account = self
            .account(ledger, wallet)
            .await?
            .ok_or_else(|| ApiError::not_found("p0 margin account"))?;
        let balance = account
            .balance(bank)
            .filter(|b| b.asset_shares > 0)
            .ok_or_else(|| ApiError::not_found("p0 balance in that bank"))?;
        if account
            .balances
            .iter()
            .any(|b| b.asset_tag == STAKED_ASSET_TAG)
        {
            return Err(super::unsupported(
                VenueId::P0,
                "withdrawals from an account with staked collateral",
            ));
        }
        // After the withdrawal: every active balance, less this one when it closes.
        let mut still: Vec<Pubkey> = account
            .balances
            .iter()
            .filter(|b| !(amount == WithdrawAmount::All && b.bank == *bank))
            .map(|b| b.bank)
            .collect();
        still.sort_by(|a, b| b.as_ref().cmp(a.as_ref()));
        let mut addresses = vec![*bank];
        addresses.extend(still.iter().filter(|b| *b != bank));
        let banks = self.banks(ledger, &addresses).await?;
        let this = &banks[0];
        let held = this.asset_amount(balance.asset_shares);
        let expected_base = match amount {
            WithdrawAmount::All => held,
            WithdrawAmount::Exact(amount) if amount <= held => amount,
            WithdrawAmount::Exact(_) => {
                return Err(ApiError::coded(
                    StatusCode::BAD_REQUEST,
                    "insufficient_balance",
                    format!(
                        "the p0 balance holds {held} base units of {}; withdraw_all takes it all",
                        token.symbol
                    ),
                )
                .with("available_base", held))
            }
        };
        let risk: Vec<(Pubkey, Pubkey)> = still
            .iter()
            .map(|key| {
                let bank = banks
                    .iter()
                    .find(|b| b.address == *key)
                    .expect("read above");
                (bank.address, bank.oracle)
            })
            .collect();
        let destination = TokenLeg::destination(ledger, wallet, token).await?;
        let mut ixs = destination.before;
        ixs.push(self.withdraw_instruction(wallet, this, &destination.account, amount, &risk));
        ixs.extend(destination.after);
        Ok(Withdrawal {
            transactions: vec![ixs],
            account: account.address,
            expected_base,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bank_with(asset_value: u128, liability_value: u128) -> Bank {
        Bank {
            address: Pubkey::new_unique(),
            mint: Pubkey::new_unique(),
            decimals: 9,
            group: Pubkey::new_unique(),
            asset_share_value: asset_value,
            liability_share_value: liability_value,
            liquidity_vault: Pubkey::new_unique(),
            asset_weight_maint: 0.9,
            liability_weight_maint: 1.1,
            oracle: Pubkey::new_unique(),
            lending_apr_pct: 0.0,
            borrowing_apr_pct: 0.0,
        }
    }

    #[test]
    fn discriminators_are_the_idls() {
        // tests/ts/venues/idl/marginfi.json and docs/venues-research.md §6.
        let hex = |name: &str| hex::encode(&anchor_data(name, &[])[..8]);
        assert_eq!(hex(ix::INITIALIZE_PDA), "57b15b50da77f51f");
        assert_eq!(hex(ix::DEPOSIT), "ab5eeb675240d48c");
        assert_eq!(hex(ix::WITHDRAW), "24484a13d2d2c0c0");
        assert_eq!(
            hex::encode(super::super::anchor_discriminator("account:Bank")),
            "8e31a6f2324261bc"
        );
        assert_eq!(
            hex::encode(super::super::anchor_discriminator(
                "account:MarginfiAccount"
            )),
            "43b2826d7e721c2a"
        );
    }

    #[test]
    fn shares_are_worth_their_value_rounded_toward_the_bank() {
        let one = 1u128 << 48;
        let bank = bank_with(one * 3 / 2, one * 3 / 2 + 1);
        assert_eq!(bank.asset_amount(10 * one), 15);
        assert_eq!(bank.asset_amount(one / 3), 0);
        // A debt a hair above 15 units counts as 16.
        assert_eq!(bank.liability_amount(10 * one), 16);
        let par = bank_with(one, one);
        assert_eq!(par.liability_amount(7 * one), 7);
        assert_eq!(par.asset_amount(u128::from(u64::MAX) << 48), u64::MAX);
    }

    #[test]
    fn rates_are_fractions_of_a_thousand_percent() {
        assert!((rate_pct(u32::MAX) - 1000.0).abs() < 1e-9);
        assert!((rate_pct((u64::from(u32::MAX) * 6 / 1000) as u32) - 6.0).abs() < 1e-6);
    }
}
