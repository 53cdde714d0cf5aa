//! What p0 shows of a wallet, read from its margin account on the ledger and priced by the price
//! feed (USDC at par): every balance with its asset and liability amounts, the account's health,
//! the positions the service recorded with what they earned, and the strategies on offer.
//!
//! Health is the program's maintenance view: each balance's USD value weighted by its bank's
//! maintenance weight (assets below one, debts above), assets over debts; `None` while nothing
//! is owed. A balance in a bank whose token the service cannot price is listed, not counted.

use narrative_sdk::Pubkey;
use narrative_store::entities::p0_positions;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use super::{ensure_core, integration};
use crate::chain::venues::p0::{Bank, MarginAccount, P0};
use crate::chain::venues::NATIVE_MINT;
use crate::domain::borrow::positions::AlertLevel;
use crate::domain::defi::usd_of;
use crate::domain::profiles::conviction::Tier;
use crate::error::ApiError;
use crate::providers::prices::PriceQuote;
use crate::state::AppState;
use crate::values::{TokenSymbol, Wallet};

/// One balance of the margin account now.
pub struct BalanceNow {
    pub bank: Bank,
    /// The bank's token, when the service knows it.
    pub token: Option<TokenSymbol>,
    pub asset_base: u64,
    pub liability_base: u64,
}

impl BalanceNow {
    fn usd(&self, base: u64, sol_usd: f64) -> Option<f64> {
        self.token.map(|t| usd_of(t, base, sol_usd))
    }

    pub fn asset_usd(&self, sol_usd: f64) -> Option<f64> {
        self.usd(self.asset_base, sol_usd)
    }

    pub fn liability_usd(&self, sol_usd: f64) -> Option<f64> {
        self.usd(self.liability_base, sol_usd)
    }
}

/// The wallet's margin account as the ledger shows it now.
pub struct AccountNow {
    pub address: Pubkey,
    pub exists: bool,
    pub balances: Vec<BalanceNow>,
    pub price: PriceQuote,
}

impl AccountNow {
    fn sum(&self, value: impl Fn(&BalanceNow) -> Option<f64>) -> f64 {
        self.balances.iter().filter_map(value).sum()
    }

    pub fn assets_usd(&self) -> f64 {
        self.sum(|b| b.asset_usd(self.price.sol_usd))
    }

    pub fn liabilities_usd(&self) -> f64 {
        self.sum(|b| b.liability_usd(self.price.sol_usd))
    }

    pub fn weighted_assets_usd(&self) -> f64 {
        self.sum(|b| Some(b.asset_usd(self.price.sol_usd)? * b.bank.asset_weight_maint))
    }

    pub fn weighted_liabilities_usd(&self) -> f64 {
        self.sum(|b| Some(b.liability_usd(self.price.sol_usd)? * b.bank.liability_weight_maint))
    }

    /// Weighted assets over weighted debts; None while nothing is owed.
    pub fn health_factor(&self) -> Option<f64> {
        let debts = self.weighted_liabilities_usd();
        (debts > 0.0).then(|| self.weighted_assets_usd() / debts)
    }

    /// The alert level of the health factor (the borrow thresholds: 1.50, 1.20, 1.05).
    pub fn level(&self) -> Option<AlertLevel> {
        self.health_factor().and_then(AlertLevel::of)
    }

    /// Balances in banks whose token the service cannot price.
    pub fn unpriced_banks(&self) -> Vec<Pubkey> {
        self.balances
            .iter()
            .filter(|b| b.token.is_none())
            .map(|b| b.bank.address)
            .collect()
    }

    pub fn balance(&self, bank: &str) -> Option<&BalanceNow> {
        self.balances
            .iter()
            .find(|b| b.bank.address.to_string() == bank)
    }
}

/// The token of a bank's mint, when the service knows it.
fn token_of(state: &AppState, mint: &Pubkey) -> Option<TokenSymbol> {
    if *mint == NATIVE_MINT {
        Some(TokenSymbol::Sol)
    } else if *mint == state.defi.usdc_mint {
        Some(TokenSymbol::Usdc)
    } else {
        None
    }
}

/// Reads the wallet's margin account and the banks of its balances, and the price.
pub async fn account_now(
    state: &AppState,
    p0: &P0,
    wallet: &Wallet,
) -> Result<AccountNow, ApiError> {
    let ledger = state.chain.ledger.as_ref();
    let price = crate::domain::borrow::capacity::price(state).await?;
    let address = p0.account_address(&wallet.pubkey());
    let Some(account) = p0.account(ledger, &wallet.pubkey()).await? else {
        return Ok(AccountNow {
            address,
            exists: false,
            balances: vec![],
            price,
        });
    };
    let balances = balances_of(state, p0, &account).await?;
    Ok(AccountNow {
        address,
        exists: true,
        balances,
        price,
    })
}

async fn balances_of(
    state: &AppState,
    p0: &P0,
    account: &MarginAccount,
) -> Result<Vec<BalanceNow>, ApiError> {
    let keys: Vec<Pubkey> = account.balances.iter().map(|b| b.bank).collect();
    let banks = p0.banks(state.chain.ledger.as_ref(), &keys).await?;
    Ok(account
        .balances
        .iter()
        .zip(banks)
        .map(|(balance, bank)| BalanceNow {
            token: token_of(state, &bank.mint),
            asset_base: bank.asset_amount(balance.asset_shares),
            liability_base: bank.liability_amount(balance.liability_shares),
            bank,
        })
        .collect())
}

/// The wallet's health: its account now (503 `p0_disabled` when off).
pub async fn health(state: &AppState, wallet: &Wallet) -> Result<AccountNow, ApiError> {
    let p0 = integration(state)?;
    account_now(state, &p0, wallet).await
}

/// A recorded position with its balance now.
pub struct PositionNow {
    pub row: p0_positions::Model,
    /// What the balance holds now (principal and interest), base units; 0 once closed.
    pub balance_base: u64,
    pub supply_apr_pct: Option<f64>,
}

impl PositionNow {
    pub fn principal_base(&self) -> u64 {
        u64::try_from(self.row.principal_base).unwrap_or(0)
    }

    /// What it earned: the balance beyond the principal.
    pub fn yield_base(&self) -> u64 {
        self.balance_base.saturating_sub(self.principal_base())
    }
}

/// The wallet's open positions with their balances now, and the account.
pub async fn positions(
    state: &AppState,
    wallet: &Wallet,
) -> Result<(AccountNow, Vec<PositionNow>), ApiError> {
    let p0 = integration(state)?;
    let rows = p0_positions::Entity::find()
        .filter(p0_positions::Column::Wallet.eq(wallet.to_string()))
        .filter(p0_positions::Column::Status.eq("open"))
        .order_by_asc(p0_positions::Column::CreatedAt)
        .all(state.store.db())
        .await?;
    let account = account_now(state, &p0, wallet).await?;
    let positions = rows
        .into_iter()
        .map(|row| {
            let now = account.balance(&row.bank);
            PositionNow {
                balance_base: now.map_or(0, |b| b.asset_base),
                supply_apr_pct: now.map(|b| b.bank.lending_apr_pct),
                row,
            }
        })
        .collect();
    Ok((account, positions))
}

/// The account summary, for a `core` wallet only.
pub async fn account(state: &AppState, wallet: &Wallet) -> Result<(Tier, AccountNow), ApiError> {
    let p0 = integration(state)?;
    let tier = ensure_core(state, wallet).await?;
    Ok((tier, account_now(state, &p0, wallet).await?))
}

/// A strategy p0 offers: supplying one bank's token, at its rate now.
pub struct Strategy {
    pub id: String,
    pub asset: TokenSymbol,
    pub mint: Pubkey,
    pub bank: Pubkey,
    pub supply_apr_pct: f64,
    pub borrow_apr_pct: f64,
}

/// The strategies of the configured banks; for a `wallet`, only when it is `core`.
pub async fn strategies(
    state: &AppState,
    wallet: Option<&Wallet>,
) -> Result<Vec<Strategy>, ApiError> {
    let p0 = integration(state)?;
    if let Some(wallet) = wallet {
        ensure_core(state, wallet).await?;
    }
    let keys: Vec<Pubkey> = p0.banks.iter().map(|(_, bank)| *bank).collect();
    let banks = p0.banks(state.chain.ledger.as_ref(), &keys).await?;
    Ok(p0
        .banks
        .iter()
        .zip(banks)
        .map(|((token, _), bank)| Strategy {
            id: format!("supply_{}", token.symbol.as_str().to_lowercase()),
            asset: token.symbol,
            mint: token.mint,
            bank: bank.address,
            supply_apr_pct: bank.lending_apr_pct,
            borrow_apr_pct: bank.borrowing_apr_pct,
        })
        .collect())
}
