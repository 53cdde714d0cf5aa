//! Inbound NFT webhooks (spec 4.12): each call is kept as received, for the tier re-derivation.

use narrative_store::entities::webhook_events;
use sea_orm::{ActiveValue::NotSet, ActiveValue::Set, EntityTrait};
use serde_json::Value;

use crate::error::ApiError;
use crate::state::AppState;

/// Stores a payload from `source`; its id.
pub async fn record(state: &AppState, source: &str, payload: Value) -> Result<i64, ApiError> {
    let inserted = webhook_events::Entity::insert(webhook_events::ActiveModel {
        id: NotSet,
        source: Set(source.to_owned()),
        payload: Set(payload),
        received_at: Set(state.now()),
    })
    .exec(state.store.db())
    .await?;
    Ok(inserted.last_insert_id)
}
