//! A wallet's borrow capacity (spec 2.9, 4.7): the USD value now of its lending positions
//! (`lend_a`, `lend_b`; liquid staking and the protocol's own token do not count) times its
//! tier's max LTV, less what it has borrowed through the service.

use narrative_store::entities::borrow_positions;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use super::{borrowing_tier, bps_fraction, max_ltv_bps, LENDING_VENUES};
use crate::domain::defi::reads;
use crate::domain::nft::held_tier;
use crate::domain::profiles::conviction::{wallet_score, Tier};
use crate::error::ApiError;
pub use crate::providers::prices::PriceQuote;
use crate::state::AppState;
use crate::values::Wallet;

/// What a wallet may borrow now.
#[derive(Debug, Clone)]
pub struct Capacity {
    pub tier: Tier,
    /// `None` below `ember`: no borrowing.
    pub max_ltv_bps: Option<u32>,
    /// Its lending positions' value now, in USD.
    pub collateral_usd: f64,
    /// `collateral_usd` × max LTV.
    pub capacity_usd: f64,
    /// The principal of its open borrows, in USD when borrowed.
    pub total_borrowed_usd: f64,
    pub open_positions: u64,
    /// The price the collateral was valued at.
    pub price: PriceQuote,
}

impl Capacity {
    pub fn max_ltv(&self) -> f64 {
        self.max_ltv_bps.map_or(0.0, bps_fraction)
    }

    /// What is left to borrow (never below 0).
    pub fn available_usd(&self) -> f64 {
        (self.capacity_usd - self.total_borrowed_usd).max(0.0)
    }
}

/// Until when a capacity read at `now` stands without a write: the venues' exchange rates it
/// valued the positions at are kept this long (and the price feed's longer).
pub fn valued_until(now: i64) -> i64 {
    now + crate::domain::defi::apys::RATE_CACHE_SECS
}

/// The SOL/USD price, or 503 `price_unavailable`.
pub async fn price(state: &AppState) -> Result<PriceQuote, ApiError> {
    state
        .prices
        .quote()
        .await
        .map_err(|e| ApiError::provider_unavailable("price_unavailable", "the price source", &e))
}

/// The tier `wallet` borrows at (its score's, raised to `ember` by a held tier NFT), kept while
/// the `markets` generation stands: scoring a wallet reads all its resolved backings.
pub async fn tier(state: &AppState, wallet: &Wallet) -> Result<Tier, ApiError> {
    let now = state
        .freshness
        .current()
        .await
        .map_err(ApiError::internal)?;
    let name = state
        .memos
        .borrow_tiers
        .get(&now, wallet.to_string(), || async {
            let db = state.store.db();
            let score = wallet_score(db, wallet).await?;
            let tier = borrowing_tier(score.tier, held_tier(db, wallet).await?);
            Ok::<_, ApiError>(tier.name())
        })
        .await?;
    Tier::named(name).ok_or_else(|| ApiError::internal("a kept tier without its name"))
}

pub async fn capacity(state: &AppState, wallet: &Wallet) -> Result<Capacity, ApiError> {
    let price = price(state).await?;
    let tier = tier(state, wallet).await?;
    let collateral_usd: f64 = reads::positions_at(state, wallet, price.sol_usd)
        .await?
        .iter()
        .filter(|p| LENDING_VENUES.contains(&p.protocol))
        .map(|p| p.value_usd)
        .sum();
    let open = borrow_positions::Entity::find()
        .filter(borrow_positions::Column::Wallet.eq(wallet.to_string()))
        .filter(borrow_positions::Column::Status.eq("open"))
        .all(state.store.db())
        .await?;
    let total_borrowed_usd = open.iter().map(|p| p.amount_usd_micros as f64 / 1e6).sum();
    let max_ltv_bps = max_ltv_bps(tier);
    Ok(Capacity {
        tier,
        max_ltv_bps,
        collateral_usd,
        capacity_usd: collateral_usd * max_ltv_bps.map_or(0.0, bps_fraction),
        total_borrowed_usd,
        open_positions: open.len() as u64,
        price,
    })
}
