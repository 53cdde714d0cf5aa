//! `lend_c`: Jupiter Lend Earn (the aggregator's lender), mainnet-targeted; its transactions are
//! versioned (v0) messages. Deposit `assets` for fTokens, `withdraw` an amount of assets.
//!
//! Interface pinned from the published IDL (jup-ag/jupiter-lend `target/idl/lending.json`,
//! committed at tests/ts/venues/idl/jupiter_lending.json; docs/venues-research.md §5). The
//! instruction builders are checked against `@coral-xyz/anchor` in tests/ts. The accounts'
//! derivations are not in the IDL; [`LendingAccounts::derive`] follows the programs' account
//! constraints (docs/venues-research.md §5.2) and reproduces the mainnet USDC market's
//! addresses. The wallet's transactions are versioned (v0 messages, spec 4.5): the deposit and
//! withdrawal flows ask the runner for them ([`Venue::versioned`]). Mainnet only; on devnet the
//! venue answers `coming_soon`.

use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::system_program;
use narrative_sdk::Pubkey;

use super::{
    anchor_data, anchor_discriminator, key_at, le_u64, not_configured, read, token_balance,
    unreadable, AssociatedAccount, Cluster, Deposit, ExchangeRate, MarketRead, TokenLeg,
    Transactions, Venue, VenueToken,
};
use crate::chain::holdings::{associated_token_account, ASSOCIATED_TOKEN_PROGRAM, TOKEN_PROGRAM};
use crate::chain::ledger::{Ledger, LedgerAccount};
use crate::error::ApiError;
use crate::values::VenueId;

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
        let pda = |seeds: &[&[u8]], program: &Pubkey| {
            narrative_sdk::derive::find_program_address(seeds, program).0
        };
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

/// Exchange prices are fixed point over 1e12 (the liquidity program's
/// `EXCHANGE_PRICES_PRECISION`, which the lending program reuses).
pub const EXCHANGE_PRICES_PRECISION: u128 = 1_000_000_000_000;

/// The `Lending` account (Borsh after its discriminator), the fields the venue reads.
pub mod lending {
    pub const MINT: usize = 8;
    pub const F_TOKEN_MINT: usize = 40;
    pub const REWARDS_RATE_MODEL: usize = 75;
    pub const TOKEN_EXCHANGE_PRICE: usize = 115;
    pub const TOKEN_RESERVES_LIQUIDITY: usize = 131;
    pub const SUPPLY_POSITION_ON_LIQUIDITY: usize = 163;
    pub const MIN_LEN: usize = 196;
}

/// What the venue reads of a `Lending` account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lending {
    pub mint: Pubkey,
    pub f_token_mint: Pubkey,
    pub rewards_rate_model: Pubkey,
    /// Assets per fToken, over [`EXCHANGE_PRICES_PRECISION`] (rewards included).
    pub token_exchange_price: u64,
    pub token_reserves_liquidity: Pubkey,
    pub supply_position_on_liquidity: Pubkey,
}

impl Lending {
    pub fn decode(data: &[u8]) -> Option<Lending> {
        use lending::*;
        if data.len() < MIN_LEN || data[..8] != anchor_discriminator("account:Lending") {
            return None;
        }
        Some(Lending {
            mint: key_at(data, MINT)?,
            f_token_mint: key_at(data, F_TOKEN_MINT)?,
            rewards_rate_model: key_at(data, REWARDS_RATE_MODEL)?,
            token_exchange_price: le_u64(data, TOKEN_EXCHANGE_PRICE)?,
            token_reserves_liquidity: key_at(data, TOKEN_RESERVES_LIQUIDITY)?,
            supply_position_on_liquidity: key_at(data, SUPPLY_POSITION_ON_LIQUIDITY)?,
        })
    }

    /// fTokens against assets.
    pub fn rate(&self) -> ExchangeRate {
        if self.token_exchange_price == 0 {
            return ExchangeRate::PAR;
        }
        ExchangeRate {
            liquidity: u128::from(self.token_exchange_price),
            receipt: EXCHANGE_PRICES_PRECISION,
        }
    }

    /// Whether the account is the one the derivations name, pointing where they point (the
    /// program checks the deposit's accounts against these stored fields).
    fn matches(&self, m: &LendingAccounts) -> bool {
        self.mint == m.mint
            && self.f_token_mint == m.f_token_mint
            && self.rewards_rate_model == m.rewards_rate_model
            && self.token_reserves_liquidity == m.supply_token_reserves_liquidity
            && self.supply_position_on_liquidity == m.lending_supply_position_on_liquidity
    }
}

/// The venue: one derived market per token (Jupiter Lend Earn lists SOL and USDC among others).
pub struct LendC {
    pub markets: Vec<(VenueToken, LendingAccounts)>,
}

impl LendC {
    /// Mainnet's markets for `tokens`.
    pub fn mainnet(tokens: &[VenueToken]) -> LendC {
        LendC {
            markets: tokens
                .iter()
                .map(|t| {
                    let m = LendingAccounts::derive(
                        MAINNET_PROGRAM,
                        MAINNET_LIQUIDITY_PROGRAM,
                        MAINNET_REWARDS_PROGRAM,
                        t.mint,
                    );
                    (*t, m)
                })
                .collect(),
        }
    }

    fn market_of(&self, token: &VenueToken) -> Result<&LendingAccounts, ApiError> {
        self.markets
            .iter()
            .find(|(t, _)| t.symbol == token.symbol)
            .map(|(_, m)| m)
            .ok_or_else(|| not_configured(VenueId::LendC, token.symbol))
    }
}

fn decode_lending(
    account: &Option<LedgerAccount>,
    m: &LendingAccounts,
) -> Result<Lending, ApiError> {
    account
        .as_ref()
        .filter(|a| a.owner == m.program)
        .and_then(|a| Lending::decode(&a.data))
        .filter(|l| l.matches(m))
        .ok_or_else(|| unreadable(VenueId::LendC, "lending account"))
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
        self.markets.iter().map(|(t, _)| *t).collect()
    }

    fn live_on(&self) -> &'static [Cluster] {
        &[Cluster::Mainnet]
    }

    fn versioned(&self) -> bool {
        true
    }

    async fn market(
        &self,
        ledger: &dyn Ledger,
        token: &VenueToken,
    ) -> Result<MarketRead, ApiError> {
        let m = self.market_of(token)?;
        let lending = decode_lending(&read(ledger, &[m.lending]).await?[0], m)?;
        Ok(MarketRead {
            rate: lending.rate(),
            // The supply rate lives in the liquidity program's reserve; the APY read takes
            // the configured value.
            supply_apy_pct: None,
            borrow_apr_pct: None,
            // The liquidity sits in the liquidity program's reserve, which is not read here.
            available: None,
        })
    }

    async fn deposit(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
        amount: u64,
    ) -> Result<Deposit, ApiError> {
        let m = self.market_of(token)?;
        let source_account = AssociatedAccount::of(wallet, &token.mint, &TOKEN_PROGRAM);
        let receipt = AssociatedAccount::of(wallet, &m.f_token_mint, &TOKEN_PROGRAM);
        let found = read(
            ledger,
            &[m.lending, source_account.address, receipt.address],
        )
        .await?;
        decode_lending(&found[0], m)?;
        let source = TokenLeg::source_as_read(wallet, token, amount, &source_account, &found[1])?;
        let mut ixs = source.before;
        if found[2].is_none() {
            ixs.push(receipt.create(wallet));
        }
        ixs.push(deposit(
            m,
            wallet,
            &source.account,
            &receipt.address,
            amount,
        ));
        ixs.extend(source.after);
        Ok(Deposit {
            transactions: vec![ixs],
            receipt_account: receipt.address,
        })
    }

    async fn withdraw(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
        receipt: u64,
    ) -> Result<Transactions, ApiError> {
        let m = self.market_of(token)?;
        let lending = decode_lending(&read(ledger, &[m.lending]).await?[0], m)?;
        // `withdraw` takes assets and burns fTokens rounded up: the assets the receipt is worth,
        // rounded down, never burn more than the receipt.
        let assets = lending.rate().value_of(receipt);
        // The program pays only into the signer's associated account of the mint.
        let destination = TokenLeg::destination(ledger, wallet, token).await?;
        let f_tokens = associated_token_account(wallet, &m.f_token_mint, &TOKEN_PROGRAM);
        let mut ixs = destination.before;
        ixs.push(withdraw(
            m,
            wallet,
            &f_tokens,
            &destination.account,
            None,
            assets,
        ));
        ixs.extend(destination.after);
        Ok(vec![ixs])
    }

    async fn receipt_balance(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
    ) -> Result<u64, ApiError> {
        let m = self.market_of(token)?;
        let f_tokens = associated_token_account(wallet, &m.f_token_mint, &TOKEN_PROGRAM);
        Ok(token_balance(&read(ledger, &[f_tokens]).await?[0]))
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
