//! Coverage periods as the indexer stored them.

use std::sync::Arc;

use narrative_sdk::shield_vault::constants::{RESOLUTION_DELAY_SECS, RESOLUTION_TIMELOCK_SECS};
use narrative_store::entities::shield_coverages;
use narrative_store::freshness::Generations;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, EntityTrait, FromQueryResult, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};

use crate::error::ApiError;
use crate::state::AppState;
use crate::values::ProtocolId;

/// Whether `coverage` takes backings at `now`: active and inside its period.
pub fn backing_open(coverage: &shield_coverages::Model, now: i64) -> bool {
    coverage.status == "active" && now >= coverage.period_start && now < coverage.period_end
}

/// When `coverage` next opens or closes for backing after `now`, if it still will.
pub fn next_change(coverage: &shield_coverages::Model, now: i64) -> Option<i64> {
    [coverage.period_start, coverage.period_end]
        .into_iter()
        .find(|at| *at > now)
}

/// When `coverage`'s proposed outcome may be finalised (its timelock's end), while it waits.
pub fn finalizes_at(coverage: &shield_coverages::Model) -> Option<i64> {
    (coverage.status == "active" && coverage.outcome.is_some()).then(|| {
        coverage
            .outcome_proposed_at
            .saturating_add(RESOLUTION_TIMELOCK_SECS)
    })
}

/// When anyone may send `coverage` to refund because nobody resolved it (its resolution delay
/// after the period's end), while no outcome is proposed.
pub fn refundable_at(coverage: &shield_coverages::Model) -> Option<i64> {
    (coverage.status == "active" && coverage.outcome.is_none())
        .then(|| coverage.period_end.saturating_add(RESOLUTION_DELAY_SECS))
}

/// One of a resolved coverage's shares that finalisation leaves in the losing vault for the
/// keeper to forward (crucible_pool's seam share, the treasury's, a partnership protocol's):
/// how much, and whether it has left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldShare {
    pub lamports: i64,
    pub forwarded: bool,
}

impl HeldShare {
    /// `pending_forward` while it waits in the losing vault, `forwarded` once it left.
    pub fn stage(self) -> &'static str {
        if self.forwarded {
            "forwarded"
        } else {
            "pending_forward"
        }
    }
}

/// The resolved coverage's share of `lamports`, forwarded or not; `None` before resolution and
/// when the split gave it nothing.
fn held_share(
    coverage: &shield_coverages::Model,
    lamports: i64,
    forwarded: bool,
) -> Option<HeldShare> {
    (coverage.status == "resolved" && lamports > 0).then_some(HeldShare {
        lamports,
        forwarded,
    })
}

/// crucible_pool's part of an exploit's losing principal.
pub fn seam_share(coverage: &shield_coverages::Model) -> Option<HeldShare> {
    held_share(coverage, coverage.seam_payout, coverage.seam_forwarded)
}

/// The treasury's part of the losing principal.
pub fn treasury_share(coverage: &shield_coverages::Model) -> Option<HeldShare> {
    held_share(
        coverage,
        coverage.treasury_payout,
        coverage.treasury_forwarded,
    )
}

/// A partnership protocol's part of the losing principal (a community shield has none).
pub fn protocol_share(coverage: &shield_coverages::Model) -> Option<HeldShare> {
    held_share(
        coverage,
        coverage.protocol_payout,
        coverage.protocol_forwarded,
    )
}

/// A listed coverage with the number of them all (a window count).
#[derive(Debug, FromQueryResult)]
struct Counted {
    #[sea_orm(nested)]
    coverage: shield_coverages::Model,
    total: i64,
}

/// Active coverage periods, newest period first, and how many there are: one query (a page past
/// the end counts them with a second).
pub async fn active(
    state: &AppState,
    limit: u64,
    offset: u64,
) -> Result<(Vec<shield_coverages::Model>, u64), ApiError> {
    let db = state.store.db();
    let query = shield_coverages::Entity::find()
        .filter(shield_coverages::Column::Closed.eq(false))
        .filter(shield_coverages::Column::Status.eq("active"));
    let rows = query
        .clone()
        .column_as(Expr::cust("COUNT(*) OVER ()"), "total")
        .order_by_desc(shield_coverages::Column::PeriodStart)
        .order_by_asc(shield_coverages::Column::ProtocolId)
        .limit(limit)
        .offset(offset)
        .into_model::<Counted>()
        .all(db)
        .await?;
    let total = match rows.first() {
        Some(first) => first.total.max(0) as u64,
        None if offset == 0 => 0,
        None => query.count(db).await?,
    };
    Ok((rows.into_iter().map(|r| r.coverage).collect(), total))
}

/// [`get`], as of generations `now` (from the memo while the shield topic stands).
pub async fn get_as_of(
    state: &AppState,
    now: &Generations,
    id: ProtocolId,
) -> Result<Arc<shield_coverages::Model>, ApiError> {
    state
        .memos
        .coverages
        .get(now, id.to_string(), || async {
            Ok::<_, ApiError>(find(state, id).await?.map(Arc::new))
        })
        .await?
        .ok_or_else(|| ApiError::not_found("protocol"))
}

/// One coverage period (any status); 404 when the index has none.
pub async fn get(state: &AppState, id: ProtocolId) -> Result<shield_coverages::Model, ApiError> {
    find(state, id)
        .await?
        .ok_or_else(|| ApiError::not_found("protocol"))
}

async fn find(
    state: &AppState,
    id: ProtocolId,
) -> Result<Option<shield_coverages::Model>, ApiError> {
    Ok(shield_coverages::Entity::find()
        .filter(shield_coverages::Column::ProtocolId.eq(id.to_string()))
        .filter(shield_coverages::Column::Closed.eq(false))
        .one(state.store.db())
        .await?)
}
