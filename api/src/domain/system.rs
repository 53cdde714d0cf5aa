//! Halt flags per component (spec 4.0 `system_halted`): an operator halts a component, and its
//! writes answer 503 until it is resumed. Reads stay open. The check itself is
//! `chain::halts::ensure_running`, shared with the money flows.

use narrative_store::entities::system_components;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, EntityTrait};
use serde_json::json;

pub use crate::chain::halts::ensure_running;
use crate::domain::admin::{self, Operator};
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

/// Halts or resumes `component` for `operator`, the change in the operators' log in the same
/// transaction (the row keeps only the latest reason; the log keeps who did what, and when).
pub async fn set_halted(
    state: &AppState,
    operator: &Operator,
    component: Component,
    halted: bool,
    reason: Option<String>,
) -> Result<(), ApiError> {
    let now = state.now();
    let txn = state.store.begin_write().await?;
    let row = system_components::ActiveModel {
        name: Set(component.as_str().to_owned()),
        halted: Set(halted),
        reason: Set(reason.clone()),
        updated_at: Set(now),
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
        .exec(&txn)
        .await?;
    admin::log(
        &txn,
        operator,
        if halted {
            "system.halt"
        } else {
            "system.resume"
        },
        component.as_str(),
        json!({"reason": reason}),
        now,
    )
    .await?;
    txn.commit().await?;
    tracing::info!(
        component = component.as_str(),
        halted,
        operator = %operator.0,
        "component halt flag changed"
    );
    Ok(())
}
