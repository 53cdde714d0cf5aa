//! Coverage periods as the indexer stored them.

use narrative_store::entities::shield_coverages;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::error::ApiError;
use crate::state::AppState;
use crate::values::ProtocolId;

/// Whether `coverage` takes backings at `now`: active and inside its period.
pub fn backing_open(coverage: &shield_coverages::Model, now: i64) -> bool {
    coverage.status == "active" && now >= coverage.period_start && now < coverage.period_end
}

/// Active coverage periods, newest period first, and how many there are.
pub async fn active(
    state: &AppState,
    limit: u64,
    offset: u64,
) -> Result<(Vec<shield_coverages::Model>, u64), ApiError> {
    let db = state.store.db();
    let query = shield_coverages::Entity::find()
        .filter(shield_coverages::Column::Closed.eq(false))
        .filter(shield_coverages::Column::Status.eq("active"));
    let total = query.clone().count(db).await?;
    let rows = query
        .order_by_desc(shield_coverages::Column::PeriodStart)
        .order_by_asc(shield_coverages::Column::ProtocolId)
        .limit(limit)
        .offset(offset)
        .all(db)
        .await?;
    Ok((rows, total))
}

/// One coverage period (any status); 404 when the index has none.
pub async fn get(state: &AppState, id: ProtocolId) -> Result<shield_coverages::Model, ApiError> {
    shield_coverages::Entity::find()
        .filter(shield_coverages::Column::ProtocolId.eq(id.to_string()))
        .filter(shield_coverages::Column::Closed.eq(false))
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::not_found("protocol"))
}
