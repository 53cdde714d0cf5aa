//! The shield gate's access log (`shield_probe_log`): who knocked, on which route, with what
//! outcome. Losing a log line must not fail the request it describes.

use narrative_store::entities::shield_probe_log;
use sea_orm::{
    ActiveValue::Set, DatabaseConnection, EntityTrait, NotSet, PaginatorTrait, QueryOrder,
    QuerySelect,
};

use crate::error::ApiError;
use crate::time::now;

pub async fn record(
    db: &DatabaseConnection,
    ip: Option<String>,
    route: &str,
    wallet: Option<String>,
    outcome: &str,
) {
    let row = shield_probe_log::ActiveModel {
        id: NotSet,
        ip: Set(ip),
        route: Set(route.to_owned()),
        wallet: Set(wallet.filter(|w| !w.is_empty())),
        outcome: Set(outcome.to_owned()),
        created_at: Set(now()),
    };
    if let Err(e) = shield_probe_log::Entity::insert(row).exec(db).await {
        tracing::warn!(error = %e, route, "probe log entry lost");
    }
}

pub async fn page(
    db: &DatabaseConnection,
    limit: u64,
    offset: u64,
) -> Result<(Vec<shield_probe_log::Model>, u64), ApiError> {
    let total = shield_probe_log::Entity::find().count(db).await?;
    let rows = shield_probe_log::Entity::find()
        .order_by_desc(shield_probe_log::Column::Id)
        .limit(limit)
        .offset(offset)
        .all(db)
        .await?;
    Ok((rows, total))
}
