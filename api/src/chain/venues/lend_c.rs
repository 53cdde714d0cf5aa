//! `lend_c`: Jupiter Lend Earn (the aggregator's lender), mainnet-targeted; its transactions are
//! versioned (v0) messages. Deposit `assets` for fTokens, `withdraw` an amount of assets.
//!
//! Interface pinned from the published IDL (jup-ag/jupiter-lend `target/idl/lending.json`,
//! committed at tests/ts/venues/idl/jupiter_lending.json; docs/venues-research.md §5). The
//! instruction builders are checked against `@coral-xyz/anchor` in tests/ts. The accounts'
//! derivations are not in the IDL; [`LendingAccounts::derive`] follows the programs' account
//! constraints (docs/venues-research.md §5.2) and reproduces the mainnet USDC market's
//! addresses. The venue still answers `coming_soon` on every cluster: the spec has lend_c's
//! transactions versioned (v0 messages), and the prepare → confirm runner stores and verifies
//! legacy messages only (docs/decisions.md, "DeFi venues").

use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::system_program;
use narrative_sdk::Pubkey;

use super::{anchor_data, Cluster, MarketRead, Transactions, Venue, VenueToken, NATIVE_MINT};
use crate::chain::holdings::{ASSOCIATED_TOKEN_PROGRAM, TOKEN_PROGRAM};
use crate::chain::ledger::Ledger;
use crate::error::ApiError;
use crate::values::{TokenSymbol, VenueId};

pub const MAINNET_PROGRAM: Pubkey =
    Pubkey::from_str_const("jup3YeL8QhtSx1e253b2FDvsMNC87fDrgQZivbrndc9");
pub const MAINNET_LIQUIDITY_PROGRAM: Pubkey =
    Pubkey::from_str_const("jupeiUmn818Jg1ekPURTpr4mFo29p46vygyykFJ3wZC");
/// The lending rewards rate model program.
pub const MAINNET_REWARDS_PROGRAM: Pubkey =
    Pubkey::from_str_const("jup7TthsMgcR9Y3L277b8Eo9uboVSmu1utkuXHNUKar");

/// The accounts of one token's lending market.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LendingAccounts {
    pub program: Pubkey,
    pub liquidity_program: Pubkey,
    pub mint: Pubkey,
    pub lending_admin: Pubkey,
    pub lending: Pubkey,
    pub f_token_mint: Pubkey,
    pub supply_token_reserves_liquidity: Pubkey,
    pub lending_supply_position_on_liquidity: Pubkey,
    pub rate_model: Pubkey,
    pub vault: Pubkey,
    pub liquidity: Pubkey,
    pub rewards_rate_model: Pubkey,
}

impl LendingAccounts {
    /// The accounts of `mint`'s market (an SPL Token mint), as the programs constrain them:
    /// the lending program's admin (global), fToken mint and lending account; the liquidity
    /// program's reserve, the lending's supply position, the rate model, the global liquidity
    /// account and its vault (the liquidity account's associated account of the mint); the
    /// rewards program's rate model.
    pub fn derive(
        program: Pubkey,
        liquidity_program: Pubkey,
        rewards_program: Pubkey,
        mint: Pubkey,
    ) -> LendingAccounts {
        let pda =
            |seeds: &[&[u8]], program: &Pubkey| Pubkey::find_program_address(seeds, program).0;
        let f_token_mint = pda(&[b"f_token_mint", mint.as_ref()], &program);
        let lending = pda(
            &[b"lending", mint.as_ref(), f_token_mint.as_ref()],
            &program,
        );
        let liquidity = pda(&[b"liquidity"], &liquidity_program);
        LendingAccounts {
            program,
            liquidity_program,
            mint,
            lending_admin: pda(&[b"lending_admin"], &program),
            lending,
            f_token_mint,
            supply_token_reserves_liquidity: pda(&[b"reserve", mint.as_ref()], &liquidity_program),
            lending_supply_position_on_liquidity: pda(
                &[b"user_supply_position", mint.as_ref(), lending.as_ref()],
                &liquidity_program,
            ),
            rate_model: pda(&[b"rate_model", mint.as_ref()], &liquidity_program),
            vault: crate::chain::holdings::associated_token_account(
                &liquidity,
                &mint,
                &TOKEN_PROGRAM,
            ),
            liquidity,
            rewards_rate_model: pda(
                &[b"lending_rewards_rate_model", mint.as_ref()],
                &rewards_program,
            ),
        }
    }
}

/// `deposit` of `assets` from `depositor_token_account`, fTokens to `recipient_token_account`.
pub fn deposit(
    m: &LendingAccounts,
    signer: &Pubkey,
    depositor_token_account: &Pubkey,
    recipient_token_account: &Pubkey,
    assets: u64,
) -> Instruction {
    Instruction {
        program_id: m.program,
        accounts: vec![
            AccountMeta::new(*signer, true),
            AccountMeta::new(*depositor_token_account, false),
            AccountMeta::new(*recipient_token_account, false),
            AccountMeta::new_readonly(m.mint, false),
            AccountMeta::new_readonly(m.lending_admin, false),
            AccountMeta::new(m.lending, false),
            AccountMeta::new(m.f_token_mint, false),
            AccountMeta::new(m.supply_token_reserves_liquidity, false),
            AccountMeta::new(m.lending_supply_position_on_liquidity, false),
            AccountMeta::new_readonly(m.rate_model, false),
            AccountMeta::new(m.vault, false),
            AccountMeta::new(m.liquidity, false),
            AccountMeta::new_readonly(m.liquidity_program, false),
            AccountMeta::new_readonly(m.rewards_rate_model, false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
            AccountMeta::new_readonly(ASSOCIATED_TOKEN_PROGRAM, false),
            AccountMeta::new_readonly(system_program::ID, false),
        ],
        data: anchor_data("deposit", &assets.to_le_bytes()),
    }
}

/// `withdraw` of `amount` of assets, burning fTokens from `owner_token_account`.
pub fn withdraw(
    m: &LendingAccounts,
    signer: &Pubkey,
    owner_token_account: &Pubkey,
    recipient_token_account: &Pubkey,
    claim_account: Option<Pubkey>,
    amount: u64,
) -> Instruction {
    let claim = match claim_account {
        Some(key) => AccountMeta::new(key, false),
        // An absent optional account is the program's id (Anchor's convention).
        None => AccountMeta::new_readonly(m.program, false),
    };
    Instruction {
        program_id: m.program,
        accounts: vec![
            AccountMeta::new(*signer, true),
            AccountMeta::new(*owner_token_account, false),
            AccountMeta::new(*recipient_token_account, false),
            AccountMeta::new_readonly(m.lending_admin, false),
            AccountMeta::new(m.lending, false),
            AccountMeta::new_readonly(m.mint, false),
            AccountMeta::new(m.f_token_mint, false),
            AccountMeta::new(m.supply_token_reserves_liquidity, false),
            AccountMeta::new(m.lending_supply_position_on_liquidity, false),
            AccountMeta::new_readonly(m.rate_model, false),
            AccountMeta::new(m.vault, false),
            claim,
            AccountMeta::new(m.liquidity, false),
            AccountMeta::new_readonly(m.liquidity_program, false),
            AccountMeta::new_readonly(m.rewards_rate_model, false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
            AccountMeta::new_readonly(ASSOCIATED_TOKEN_PROGRAM, false),
            AccountMeta::new_readonly(system_program::ID, false),
        ],
        data: anchor_data("withdraw", &amount.to_le_bytes()),
    }
}

pub struct LendC;

fn unverified() -> ApiError {
    ApiError::coming_soon("lend_c (its account derivations are not verified yet)")
}

#[async_trait::async_trait]
impl Venue for LendC {
    fn id(&self) -> VenueId {
        VenueId::LendC
    }

    fn label(&self) -> &'static str {
        "Jupiter Lend"
    }

    fn tokens(&self) -> Vec<VenueToken> {
        vec![VenueToken {
            symbol: TokenSymbol::Sol,
            mint: NATIVE_MINT,
            decimals: 9,
        }]
    }

    fn live_on(&self) -> &'static [Cluster] {
        &[]
    }

    async fn market(&self, _: &dyn Ledger, _: &VenueToken) -> Result<MarketRead, ApiError> {
        Err(unverified())
    }

    async fn deposit(
        &self,
        _: &dyn Ledger,
        _: &Pubkey,
        _: &VenueToken,
        _: u64,
    ) -> Result<Transactions, ApiError> {
        Err(unverified())
    }

    async fn withdraw(
        &self,
        _: &dyn Ledger,
        _: &Pubkey,
        _: &VenueToken,
        _: u64,
    ) -> Result<Transactions, ApiError> {
        Err(unverified())
    }

    async fn receipt_balance(
        &self,
        _: &dyn Ledger,
        _: &Pubkey,
        _: &VenueToken,
    ) -> Result<u64, ApiError> {
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivations_reproduce_the_mainnet_usdc_market() {
        // jlUSDC is Jupiter's published fToken mint; the other addresses were read from
        // mainnet's USDC market (docs/venues-research.md §5.2).
        let usdc = Pubkey::from_str_const("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");
        let m = LendingAccounts::derive(
            MAINNET_PROGRAM,
            MAINNET_LIQUIDITY_PROGRAM,
            MAINNET_REWARDS_PROGRAM,
            usdc,
        );
        let expected = [
            (
                m.f_token_mint,
                "9BEcn9aPEmhSPbPQeFGjidRiEKki46fVQDyPpSQXPA2D",
            ),
            (
                m.lending_admin,
                "5nmGjA4s7ATzpBQXC5RNceRpaJ7pYw2wKsNBWyuSAZV6",
            ),
            (m.lending, "2vVYHYM8VYnvZqQWpTJSj8o8DBf1wM8pVs3bsTgYZiqJ"),
            (
                m.supply_token_reserves_liquidity,
                "94vK29npVbyRHXH63rRcTiSr26SFhrQTzbpNJuhQEDu",
            ),
            (
                m.lending_supply_position_on_liquidity,
                "Hf9gtkM4dpVBahVSzEXSVCAPpKzBsBcns3s8As3z77oF",
            ),
            (m.rate_model, "5pjzT5dFTsXcwixoab1QDLvZQvpYJxJeBphkyfHGn688"),
            (m.liquidity, "7s1da8DduuBFqGra5bJBjpnvL5E9mGzCuMk1Qkh4or2Z"),
            (m.vault, "BmkUoKMFYBxNSzWXyUjyMJjMAaVz4d8ZnxwwmhDCUXFB"),
            (
                m.rewards_rate_model,
                "5xSPBiD3TibamAnwHDhZABdB4z4F9dcj5PnbteroBTTd",
            ),
        ];
        for (derived, published) in expected {
            assert_eq!(derived.to_string(), published);
        }
    }
}
