//! A wallet's DeFi positions (spec 2.8, 4.5, 4.6): allocation, yield and staking. A position's
//! value now is its receipt at the venue's current exchange rate (kept for
//! [`super::apys::RATE_CACHE_SECS`]); its yield is that value less the principal, never below 0
//! (the receipt is rounded down when bought, so a fresh position would otherwise show a loss of
//! a base unit). Values in other tokens are shown in SOL at the price feed's SOL/USD.

use narrative_store::entities::defi_positions;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use super::venues::{ExchangeRate, Withdrawals};
use super::{apys, rate_from_strings};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{sol_u64, PreparedId, TokenSymbol, VenueId, Wallet};

/// A position as the reads show it.
#[derive(Debug, Clone)]
pub struct Position {
    pub backing_id: String,
    pub protocol: VenueId,
    pub token_symbol: TokenSymbol,
    pub narrative_id: Option<String>,
    pub amount_sol: f64,
    pub value_sol: f64,
    /// Its value now in USD (USDC at par).
    pub value_usd: f64,
    pub yield_earned_sol: f64,
    pub status: String,
    pub can_withdraw: bool,
}

/// The wallet's open positions, valued now.
pub async fn positions(state: &AppState, wallet: &Wallet) -> Result<Vec<Position>, ApiError> {
    let rows = open_rows(state, wallet).await?;
    if rows.is_empty() {
        return Ok(vec![]);
    }
    let sol_usd =
        state.prices.sol_usd().await.map_err(|e| {
            ApiError::provider_unavailable("price_unavailable", "the price source", &e)
        })?;
    valued(state, rows, sol_usd).await
}

/// The yield of the wallet's open backing `backing_id` in SOL (0 when it has none open by that
/// id): that one position valued, and priced only when it is not SOL, so a withdrawal's answer
/// does not wait on the wallet's other venues or on the price source.
pub async fn yield_of(
    state: &AppState,
    wallet: &Wallet,
    backing_id: PreparedId,
) -> Result<f64, ApiError> {
    let Some(row) = defi_positions::Entity::find_by_id(backing_id.to_string())
        .filter(defi_positions::Column::Wallet.eq(wallet.to_string()))
        .filter(defi_positions::Column::Status.eq("confirmed"))
        .one(state.store.db())
        .await?
    else {
        return Ok(0.0);
    };
    let symbol: TokenSymbol = row.token_symbol.parse().map_err(ApiError::internal)?;
    // The USD value `valued` also makes is not read here.
    let sol_usd = super::sol_usd_for(state, symbol).await?;
    Ok(valued(state, vec![row], sol_usd)
        .await?
        .pop()
        .map_or(0.0, |p| p.yield_earned_sol))
}

/// The wallet's open positions, valued now at `sol_usd`.
pub async fn positions_at(
    state: &AppState,
    wallet: &Wallet,
    sol_usd: f64,
) -> Result<Vec<Position>, ApiError> {
    valued(state, open_rows(state, wallet).await?, sol_usd).await
}

async fn open_rows(
    state: &AppState,
    wallet: &Wallet,
) -> Result<Vec<defi_positions::Model>, ApiError> {
    Ok(defi_positions::Entity::find()
        .filter(defi_positions::Column::Wallet.eq(wallet.to_string()))
        .filter(defi_positions::Column::Status.eq("confirmed"))
        .order_by_asc(defi_positions::Column::CreatedAt)
        .all(state.store.db())
        .await?)
}

async fn valued(
    state: &AppState,
    rows: Vec<defi_positions::Model>,
    sol_usd: f64,
) -> Result<Vec<Position>, ApiError> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let protocol: VenueId = row.protocol.parse().map_err(ApiError::internal)?;
        let symbol: TokenSymbol = row.token_symbol.parse().map_err(ApiError::internal)?;
        let principal = u64::try_from(row.amount_base).map_err(ApiError::internal)?;
        let receipt = u64::try_from(row.receipt_amount).map_err(ApiError::internal)?;
        let at_deposit = rate_from_strings(&row.rate_liquidity, &row.rate_receipt)?;
        let (now_rate, can_withdraw) = match state.defi.get(protocol) {
            Some(venue) if state.defi.is_live(venue) => {
                let token = state.defi.token(venue, symbol)?;
                let read = apys::market(state, venue, &token).await?;
                (read.rate, venue.withdrawals() == Withdrawals::Supported)
            }
            // A venue no longer live is valued at its rate when deposited.
            _ => (at_deposit, false),
        };
        let value = value_now(receipt, principal, &at_deposit, &now_rate);
        let to_sol = |base: u64| sol_u64(super::lamports_of(symbol, base, sol_usd));
        out.push(Position {
            backing_id: row.id,
            protocol,
            token_symbol: symbol,
            narrative_id: row.narrative_id,
            amount_sol: sol_u64(u64::try_from(row.amount_lamports).map_err(ApiError::internal)?),
            value_sol: to_sol(value),
            value_usd: super::usd_of(symbol, value, sol_usd),
            yield_earned_sol: to_sol(value.saturating_sub(principal)),
            status: row.status,
            can_withdraw,
        });
    }
    Ok(out)
}

/// What a position's receipt is worth at `now`; the principal while the venue's rate has not
/// moved since the deposit (the receipt's rounding is not a loss).
fn value_now(receipt: u64, principal: u64, at_deposit: &ExchangeRate, now: &ExchangeRate) -> u64 {
    if now == at_deposit {
        principal
    } else {
        now.value_of(receipt)
    }
}

/// Yield split (docs/decisions.md, "DeFi yield"): yield of deposits directed to a narrative is
/// `narrative_yield_sol`; yield of standalone earn deposits is `echo_pool_sol`, the part that
/// counts toward the wallet's Echo Pool share.
pub fn split_yield(positions: &[Position]) -> (f64, f64, f64) {
    let narrative: f64 = positions
        .iter()
        .filter(|p| p.narrative_id.is_some())
        .map(|p| p.yield_earned_sol)
        .sum();
    let echo: f64 = positions
        .iter()
        .filter(|p| p.narrative_id.is_none())
        .map(|p| p.yield_earned_sol)
        .sum();
    (narrative + echo, narrative, echo)
}

/// The wallet's liquid-staking positions and its conviction tier (spec 4.6).
pub async fn staking(
    state: &AppState,
    wallet: &Wallet,
) -> Result<(Vec<Position>, &'static str), ApiError> {
    let staked = positions(state, wallet)
        .await?
        .into_iter()
        .filter(|p| matches!(p.protocol, VenueId::StakeA | VenueId::StakeB))
        .collect();
    let score = crate::domain::profiles::conviction::wallet_score(state.store.db(), wallet).await?;
    Ok((staked, score.tier.name()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_follows_the_rate_but_rounding_is_no_loss() {
        let then = ExchangeRate {
            liquidity: 1_000,
            receipt: 990,
        };
        let receipt = then.receipt_for(1_000_000);
        assert_eq!(value_now(receipt, 1_000_000, &then, &then), 1_000_000);
        let later = ExchangeRate {
            liquidity: 1_100,
            receipt: 990,
        };
        assert_eq!(value_now(receipt, 1_000_000, &then, &later), 1_100_000);
    }
}
