//! Reads of the indexed markets that several routes share.

use std::collections::HashMap;

use narrative_store::entities::markets;
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

/// The live (not closed) indexed markets among `market_ids` (64 hex characters each), by id.
pub async fn markets_by_id(
    db: &impl ConnectionTrait,
    market_ids: impl IntoIterator<Item = String>,
) -> Result<HashMap<String, markets::Model>, DbErr> {
    Ok(markets::Entity::find()
        .filter(markets::Column::MarketId.is_in(market_ids))
        .filter(markets::Column::Closed.eq(false))
        .all(db)
        .await?
        .into_iter()
        .map(|m| (m.market_id.clone(), m))
        .collect())
}
