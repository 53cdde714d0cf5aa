//! Halt flags per component (spec 4.0 `system_halted`): an operator halts a component, and its
//! writes answer 503 until it is resumed. Reads stay open. The check itself is
//! `chain::halts::ensure_running`, shared with the money flows.

use narrative_store::entities::system_components;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, EntityTrait};

pub use crate::chain::halts::ensure_running;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::Component;

pub struct ComponentState {
    pub component: Component,
    pub halted: bool,
    pub reason: Option<String>,
    /// Unix seconds of the last change; `None` when never changed.
    pub updated_at: Option<i64>,
}

/// Every component's flag, in the order of [`Component::ALL`].
pub async fn status(state: &AppState) -> Result<Vec<ComponentState>, ApiError> {
    let rows = system_components::Entity::find()
        .all(state.store.db())
        .await?;
    Ok(Component::ALL
        .iter()
        .map(|component| {
            let row = rows.iter().find(|r| r.name == component.as_str());
            ComponentState {
                component: *component,
                halted: row.is_some_and(|r| r.halted),
                reason: row.and_then(|r| r.reason.clone()),
                updated_at: row.map(|r| r.updated_at).filter(|at| *at > 0),
            }
        })
        .collect())
}

pub async fn set_halted(
    state: &AppState,
    component: Component,
    halted: bool,
    reason: Option<String>,
) -> Result<(), ApiError> {
    let row = system_components::ActiveModel {
        name: Set(component.as_str().to_owned()),
        halted: Set(halted),
        reason: Set(reason),
        updated_at: Set(state.now()),
    };
    system_components::Entity::insert(row)
        .on_conflict(
            OnConflict::column(system_components::Column::Name)
                .update_columns([
                    system_components::Column::Halted,
                    system_components::Column::Reason,
                    system_components::Column::UpdatedAt,
                ])
                .to_owned(),
        )
        .exec(state.store.db())
        .await?;
    tracing::info!(
        component = component.as_str(),
        halted,
        "component halt flag changed"
    );
    Ok(())
}
