//! The programs' admin changes waiting for their timelock, as indexed: what the operators'
//! dashboard lists, so that a change is seen before it applies and applied before it expires.

use narrative_sdk::vault_common::APPLY_WINDOW_SECS;
use narrative_sdk::{binary_vault, crucible_pool, shield_vault};
use narrative_store::entities::{binary_configs, crucible_states, shield_programs};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
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
    let binary = binary_configs::Entity::find()
        .filter(binary_configs::Column::Closed.eq(false))
        .all(db)
        .await?
        .into_iter()
        .filter_map(|c| c.pending_change)
        .map(|c| {
            (
                "binary_vault",
                binary_vault::constants::ADMIN_ACTION_TIMELOCK_SECS,
                c,
            )
        });
    let shield = shield_programs::Entity::find()
        .filter(shield_programs::Column::Closed.eq(false))
        .all(db)
        .await?
        .into_iter()
        .filter_map(|s| s.pending_change)
        .map(|c| {
            (
                "shield_vault",
                shield_vault::constants::ADMIN_ACTION_TIMELOCK_SECS,
                c,
            )
        });
    let crucible = crucible_states::Entity::find()
        .filter(crucible_states::Column::Closed.eq(false))
        .all(db)
        .await?
        .into_iter()
        .filter_map(|s| s.pending_change)
        .map(|c| {
            (
                "crucible_pool",
                crucible_pool::constants::ADMIN_ACTION_TIMELOCK_SECS,
                c,
            )
        });
    Ok(binary
        .chain(shield)
        .chain(crucible)
        .map(|(program, timelock, change)| {
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
        .collect())
}
