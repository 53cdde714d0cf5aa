//! Halt flags per component (spec 4.0 `system_halted`): an operator halts a component, and its
//! writes answer 503 until it is resumed. Reads stay open.

use narrative_store::entities::system_components;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, DatabaseConnection, EntityTrait};

use crate::error::ApiError;

/// The components that can be halted, in the order the status read lists them.
pub const COMPONENTS: [&str; 5] = ["shield", "binary", "markets", "agents", "narratives"];

pub struct ComponentState {
    pub name: String,
    pub halted: bool,
    pub reason: Option<String>,
    /// Unix seconds of the last change; 0 when never changed.
    pub updated_at: i64,
}

pub async fn status(db: &DatabaseConnection) -> Result<Vec<ComponentState>, ApiError> {
    let rows = system_components::Entity::find().all(db).await?;
    Ok(COMPONENTS
        .iter()
        .map(|name| {
            let row = rows.iter().find(|r| r.name == *name);
            ComponentState {
                name: (*name).to_owned(),
                halted: row.is_some_and(|r| r.halted),
                reason: row.and_then(|r| r.reason.clone()),
                updated_at: row.map_or(0, |r| r.updated_at),
            }
        })
        .collect())
}

/// 503 `system_halted` when `component` is halted.
pub async fn ensure_running(db: &DatabaseConnection, component: &str) -> Result<(), ApiError> {
    let row = system_components::Entity::find_by_id(component.to_owned())
        .one(db)
        .await?;
    match row {
        Some(r) if r.halted => Err(ApiError::system_halted(component)),
        _ => Ok(()),
    }
}

pub async fn set_halted(
    db: &DatabaseConnection,
    component: &str,
    halted: bool,
    reason: Option<String>,
    now: i64,
) -> Result<(), ApiError> {
    if !COMPONENTS.contains(&component) {
        return Err(ApiError::validation(format!(
            "component must be one of {}",
            COMPONENTS.join(", ")
        )));
    }
    let row = system_components::ActiveModel {
        name: Set(component.to_owned()),
        halted: Set(halted),
        reason: Set(reason),
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
        .exec(db)
        .await?;
    Ok(())
}
