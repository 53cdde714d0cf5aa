//! DeFi earn (spec 2.8, 3.3, 4.5, 4.6): routing principal into the venues, deposits and
//! withdrawals through the one prepare → confirm runner, the APY read, allocation, yield and
//! staking. The venues themselves (their interfaces and ledger reads) are in [`venues`].

use crate::error::ApiError;
use crate::state::AppState;
use crate::values::TokenSymbol;

pub mod apys;
pub mod deposit;
pub mod reads;
pub mod withdrawal;

pub use crate::chain::venues;
pub use crate::chain::venues::{unstake_refused, unsupported, Venues};
use venues::ExchangeRate;

/// Spec 8: a generic deposit is at least 0.01 SOL (or its USD value in USDC).
pub const MIN_DEPOSIT_LAMPORTS: u64 = 10_000_000;

/// When a mainnet-targeted venue is expected (the APY read's `coming_at`).
pub const MAINNET_COMING_AT: &str = "mainnet launch";

/// The smallest deposit of `symbol`, in its base units: 0.01 SOL, or its USD value in USDC at
/// `sol_usd` (rounded up, so the minimum is never below 0.01 SOL's worth).
pub fn min_deposit(symbol: TokenSymbol, sol_usd: f64) -> u64 {
    match symbol {
        TokenSymbol::Sol => MIN_DEPOSIT_LAMPORTS,
        // 0.01 SOL × price USD × 10^6 micro-USDC; prices are display-grade, the bound is policy.
        TokenSymbol::Usdc => (sol_usd * 0.01 * 1e6).ceil().max(1.0) as u64,
    }
}

/// The SOL/USD price that amounts of `symbol` need to become lamports: none for SOL, whose
/// amounts are lamports already (0 then, which [`min_deposit`] and [`lamports_of`] do not read
/// for SOL), so SOL's deposits and withdrawals do not wait on the price source.
pub async fn sol_usd_for(state: &AppState, symbol: TokenSymbol) -> Result<f64, ApiError> {
    match symbol {
        TokenSymbol::Sol => Ok(0.0),
        TokenSymbol::Usdc => state.prices.sol_usd().await.map_err(|e| {
            ApiError::provider_unavailable("price_unavailable", "the price source", &e)
        }),
    }
}

/// 400 `amount_below_minimum` for a deposit of `amount_base` of `symbol` below
/// [`min_deposit`] at `sol_usd`.
pub fn ensure_minimum(symbol: TokenSymbol, amount_base: u64, sol_usd: f64) -> Result<(), ApiError> {
    let minimum = min_deposit(symbol, sol_usd);
    if amount_base >= minimum {
        return Ok(());
    }
    Err(ApiError::coded(
        poem::http::StatusCode::BAD_REQUEST,
        "amount_below_minimum",
        format!("a deposit is at least 0.01 SOL or its value ({minimum} base units of {symbol})"),
    ))
}

/// `base` units of `symbol` as lamports of SOL at `sol_usd` (SOL is itself).
pub fn lamports_of(symbol: TokenSymbol, base: u64, sol_usd: f64) -> u64 {
    match symbol {
        TokenSymbol::Sol => base,
        TokenSymbol::Usdc if sol_usd > 0.0 => (base as f64 / 1e6 / sol_usd * 1e9).round() as u64,
        TokenSymbol::Usdc => 0,
    }
}

/// `base` units of `symbol` in USD at `sol_usd` (USDC at par: a dollar stablecoin).
pub fn usd_of(symbol: TokenSymbol, base: u64, sol_usd: f64) -> f64 {
    let units = base as f64 / 10f64.powi(i32::from(symbol.decimals()));
    match symbol {
        TokenSymbol::Sol => units * sol_usd,
        TokenSymbol::Usdc => units,
    }
}

/// A rate kept as decimal strings (it does not fit the store's integers).
pub fn rate_strings(rate: &ExchangeRate) -> (String, String) {
    (rate.liquidity.to_string(), rate.receipt.to_string())
}

pub fn rate_from_strings(liquidity: &str, receipt: &str) -> Result<ExchangeRate, ApiError> {
    Ok(ExchangeRate {
        liquidity: liquidity.parse().map_err(ApiError::internal)?,
        receipt: receipt.parse().map_err(ApiError::internal)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usdc_minimum_is_a_hundredth_of_a_sol_in_dollars() {
        assert_eq!(min_deposit(TokenSymbol::Sol, 150.0), 10_000_000);
        assert_eq!(min_deposit(TokenSymbol::Usdc, 150.0), 1_500_000);
        assert_eq!(min_deposit(TokenSymbol::Usdc, 123.456_7), 1_234_567);
        assert_eq!(lamports_of(TokenSymbol::Usdc, 1_500_000, 150.0), 10_000_000);
        assert_eq!(lamports_of(TokenSymbol::Sol, 42, 150.0), 42);
        assert_eq!(usd_of(TokenSymbol::Sol, 2_500_000_000, 150.0), 375.0);
        assert_eq!(usd_of(TokenSymbol::Usdc, 1_500_000, 150.0), 1.5);
    }
}
