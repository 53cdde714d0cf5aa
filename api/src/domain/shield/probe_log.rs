//! The shield gate's access log (`shield_probe_log`): who knocked, on which route, with what
//! outcome. Losing a log line must not fail the request it describes.

use narrative_store::entities::shield_probe_log;
use sea_orm::{ActiveValue::Set, EntityTrait, NotSet, PaginatorTrait, QueryOrder, QuerySelect};

use crate::error::ApiError;
use crate::state::AppState;

/// One knock: the caller's address, the route, the wallet it named (as given) and the outcome.
pub struct Knock {
    pub ip: Option<String>,
    pub route: String,
    pub wallet: Option<String>,
    pub outcome: String,
    /// Refused for what the caller sent (4xx), which the gate counts; the service's own
    /// failures (a halt's 503, a 500) are not.
    pub refused: bool,
}

pub async fn record(state: &AppState, knock: Knock) {
    let row = shield_probe_log::ActiveModel {
        id: NotSet,
        ip: Set(knock.ip),
        route: Set(knock.route.clone()),
        wallet: Set(knock.wallet.filter(|w| !w.is_empty())),
        outcome: Set(knock.outcome),
        created_at: Set(state.now()),
        refused: Set(knock.refused),
    };
    if let Err(e) = shield_probe_log::Entity::insert(row)
        .exec(state.store.db())
        .await
    {
        tracing::warn!(error = %e, route = knock.route, "probe log entry lost");
    }
}

/// A page of the log, newest first, and the total.
pub async fn page(
    state: &AppState,
    limit: u64,
    offset: u64,
) -> Result<(Vec<shield_probe_log::Model>, u64), ApiError> {
    let db = state.store.db();
    let total = shield_probe_log::Entity::find().count(db).await?;
    let rows = shield_probe_log::Entity::find()
        .order_by_desc(shield_probe_log::Column::Id)
        .limit(limit)
        .offset(offset)
        .all(db)
        .await?;
    Ok((rows, total))
}
