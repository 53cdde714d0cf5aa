//! `lend_c`: Jupiter Lend Earn (the aggregator's lender), mainnet-targeted; its transactions are
//! versioned (v0) messages. Deposit `assets` for fTokens, `withdraw` an amount of assets.
//!
//! Interface pinned from the published IDL (jup-ag/jupiter-lend `target/idl/lending.json`,
//! committed at tests/ts/venues/idl/jupiter_lending.json; docs/venues-research.md §5). The
//! instruction builders are checked against `@coral-xyz/anchor` in tests/ts. How the program
//! derives `lending_admin`, `rate_model`, `vault` and `liquidity` is not in the IDL, so the venue
//! does not build for wallets yet: it answers `coming_soon` on every cluster
//! (docs/decisions.md, "DeFi venues").

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
