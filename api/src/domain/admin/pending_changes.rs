//! The programs' admin changes waiting for their timelock, as indexed: what the operators'
//! dashboard lists, so that a change is seen before it applies and applied before it expires.

use narrative_sdk::vault_common::APPLY_WINDOW_SECS;
use narrative_sdk::{binary_vault, crucible_pool, shield_vault};
use narrative_store::entities::{binary_configs, crucible_states, shield_programs};
use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QuerySelect};
use serde_json::Value;

use crate::error::ApiError;

/// One program's pending change.
pub struct PendingAdminChange {
    /// `binary_vault`, `shield_vault` or `crucible_pool`.
    pub program: &'static str,
    /// The change as the indexer stored it.
    pub change: Value,
    pub proposed_at: i64,
    /// From when the admin may apply it.
    pub applies_at: i64,
    /// From when it can no longer be applied and must be proposed again.
    pub expires_at: i64,
}

/// Every program's pending change, binary_vault first.
pub async fn pending(db: &DatabaseConnection) -> Result<Vec<PendingAdminChange>, ApiError> {
    let programs = [
        (
            "binary_vault",
            binary_vault::constants::ADMIN_ACTION_TIMELOCK_SECS,
            stored::<binary_configs::Entity>(
                db,
                binary_configs::Column::PendingChange,
                binary_configs::Column::Closed,
            )
            .await?,
        ),
        (
            "shield_vault",
            shield_vault::constants::ADMIN_ACTION_TIMELOCK_SECS,
            stored::<shield_programs::Entity>(
                db,
                shield_programs::Column::PendingChange,
                shield_programs::Column::Closed,
            )
            .await?,
        ),
        (
            "crucible_pool",
            crucible_pool::constants::ADMIN_ACTION_TIMELOCK_SECS,
            stored::<crucible_states::Entity>(
                db,
                crucible_states::Column::PendingChange,
                crucible_states::Column::Closed,
            )
            .await?,
        ),
    ];
    Ok(programs
        .into_iter()
        .flat_map(|(program, timelock, changes)| {
            changes.into_iter().map(move |change| {
                // Every stored change carries the time it was proposed.
                let proposed_at = change["proposed_at"].as_i64().unwrap_or(0);
                let applies_at = proposed_at.saturating_add(timelock);
                PendingAdminChange {
                    program,
                    change,
                    proposed_at,
                    applies_at,
                    expires_at: applies_at.saturating_add(APPLY_WINDOW_SECS),
                }
            })
        })
        .collect())
}

/// The pending changes stored in `change` of the open accounts of `E`.
async fn stored<E: EntityTrait>(
    db: &DatabaseConnection,
    change: E::Column,
    closed: E::Column,
) -> Result<Vec<Value>, DbErr> {
    E::find()
        .select_only()
        .column(change)
        .filter(closed.eq(false))
        .filter(change.is_not_null())
        .into_tuple::<Value>()
        .all(db)
        .await
}
