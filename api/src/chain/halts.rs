//! Halt flags (spec 4.0 `system_halted`): an operator halts a component, and its writes answer
//! 503 until it is resumed; reads, and replays of what was already recorded, stay open. Every
//! prepare and every confirm of a money flow checks its component here, so one rule decides.

use narrative_store::entities::system_components;
use sea_orm::{ConnectionTrait, EntityTrait};

use crate::error::ApiError;
use crate::values::Component;

/// 503 `system_halted` when `component` is halted.
pub async fn ensure_running(
    db: &impl ConnectionTrait,
    component: Component,
) -> Result<(), ApiError> {
    let row = system_components::Entity::find_by_id(component.as_str().to_owned())
        .one(db)
        .await?;
    match row {
        Some(r) if r.halted => Err(ApiError::system_halted(component.as_str())),
        _ => Ok(()),
    }
}
