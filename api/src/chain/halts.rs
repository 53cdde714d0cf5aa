//! Halt flags (spec 4.0 `system_halted`): an operator halts a component, and its writes answer
//! 503 until it is resumed; reads, and replays of what was already recorded, stay open. Every
//! prepare and every confirm of a money flow checks its component here, so one rule decides.

use narrative_store::entities::system_components;
use narrative_store::freshness::Generations;
use sea_orm::{ConnectionTrait, EntityTrait};

use crate::error::ApiError;
use crate::freshness::Memo;
use crate::values::Component;

/// [`ensure_running`] from `halts` when the flag is kept under the current generation `now`.
pub async fn ensure_running_as_of(
    db: &impl ConnectionTrait,
    halts: &Memo<&'static str, bool>,
    now: &Generations,
    component: Component,
) -> Result<(), ApiError> {
    let halted = halts
        .get(now, component.as_str(), || async {
            Ok::<_, ApiError>(
                system_components::Entity::find_by_id(component.as_str().to_owned())
                    .one(db)
                    .await?
                    .is_some_and(|row| row.halted),
            )
        })
        .await?;
    if halted {
        return Err(ApiError::system_halted(component.as_str()));
    }
    Ok(())
}

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
