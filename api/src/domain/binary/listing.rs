//! Binary markets and positions as the indexer stored them.

use narrative_store::entities::{backings, markets};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{MarketRef, Wallet};

/// Live markets, newest first, and how many there are.
pub async fn markets(
    state: &AppState,
    limit: u64,
    offset: u64,
) -> Result<(Vec<markets::Model>, u64), ApiError> {
    let db = state.store.db();
    let query = markets::Entity::find().filter(markets::Column::Closed.eq(false));
    let total = query.clone().count(db).await?;
    let rows = query
        .order_by_desc(markets::Column::CreatedAt)
        .order_by_asc(markets::Column::Address)
        .limit(limit)
        .offset(offset)
        .all(db)
        .await?;
    Ok((rows, total))
}

/// One live market; 404 when the index has none.
pub async fn market(state: &AppState, market: MarketRef) -> Result<markets::Model, ApiError> {
    markets::Entity::find()
        .filter(markets::Column::MarketId.eq(market.hex()))
        .filter(markets::Column::Closed.eq(false))
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::not_found("market"))
}

/// A wallet's live backings (one per market and side), most recently backed first.
pub async fn positions(
    state: &AppState,
    wallet: &Wallet,
) -> Result<Vec<backings::Model>, ApiError> {
    Ok(backings::Entity::find()
        .filter(backings::Column::Backer.eq(wallet.to_string()))
        .filter(backings::Column::Closed.eq(false))
        .order_by_desc(backings::Column::LastBackedAt)
        .all(state.store.db())
        .await?)
}
