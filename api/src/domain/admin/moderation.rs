//! Narrative moderation (spec 9.2, `/admin/narratives/…`): hide a narrative from every public
//! read (feed, hero, counts, single read, groups, the agents' feed) and restore it to the status
//! it had, or force a verdict, which takes the agents' verdict path
//! (`crate::domain::agents::resolve::record`): the status moves, the oracle audit log names the
//! operator, and settlement on chain is queued.

use narrative_store::entities::{admin_actions, narratives};
use poem::http::StatusCode;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use serde_json::json;

use crate::domain::admin::{log, Operator};
use crate::domain::agents::resolve::{self, Resolver, Verdict};
use crate::domain::narratives::feed::HIDDEN;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{Confidence, NarrativeId, NarrativeSide, OracleStatus};

async fn find(state: &AppState, id: &NarrativeId) -> Result<narratives::Model, ApiError> {
    narratives::Entity::find_by_id(id.to_string())
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::not_found("narrative"))
}

fn conflict(code: &str, message: &str) -> ApiError {
    ApiError::coded(StatusCode::CONFLICT, code, message.to_owned())
}

/// Hides narrative `id`; its status before is kept in the log for [`restore`].
pub async fn hide(
    state: &AppState,
    operator: &Operator,
    id: NarrativeId,
    reason: Option<String>,
) -> Result<narratives::Model, ApiError> {
    let narrative = find(state, &id).await?;
    let now = state.now();
    let txn = state.store.begin_write().await?;
    // Conditional: of two hides, one records the status before.
    let updated = narratives::Entity::update_many()
        .col_expr(narratives::Column::Status, HIDDEN.into())
        .filter(narratives::Column::Id.eq(id.to_string()))
        .filter(narratives::Column::Status.ne(HIDDEN))
        .exec(&txn)
        .await?;
    if updated.rows_affected != 1 {
        return Err(conflict(
            "already_hidden",
            "this narrative is hidden already",
        ));
    }
    log(
        &txn,
        operator,
        "narrative.hide",
        &id.to_string(),
        json!({"previous_status": narrative.status, "reason": reason}),
        now,
    )
    .await?;
    txn.commit().await?;
    find(state, &id).await
}

/// Restores hidden narrative `id` to the status its hiding recorded.
pub async fn restore(
    state: &AppState,
    operator: &Operator,
    id: NarrativeId,
) -> Result<narratives::Model, ApiError> {
    find(state, &id).await?;
    let db = state.store.db();
    let hidden = admin_actions::Entity::find()
        .filter(admin_actions::Column::Subject.eq(id.to_string()))
        .filter(admin_actions::Column::Action.eq("narrative.hide"))
        .order_by_desc(admin_actions::Column::Id)
        .one(db)
        .await?;
    let previous = hidden
        .as_ref()
        .and_then(|h| h.detail["previous_status"].as_str().map(str::to_owned));
    let now = state.now();
    let txn = state.store.begin_write().await?;
    let updated = match &previous {
        Some(previous) => {
            narratives::Entity::update_many()
                .col_expr(narratives::Column::Status, previous.as_str().into())
                .filter(narratives::Column::Id.eq(id.to_string()))
                .filter(narratives::Column::Status.eq(HIDDEN))
                .exec(&txn)
                .await?
                .rows_affected
        }
        None => 0,
    };
    if updated != 1 {
        return Err(conflict("not_hidden", "this narrative is not hidden"));
    }
    log(
        &txn,
        operator,
        "narrative.restore",
        &id.to_string(),
        json!({"status": previous}),
        now,
    )
    .await?;
    txn.commit().await?;
    find(state, &id).await
}

/// Forces `outcome` on narrative `id` as the operator: 409 `not_open_for_resolution` when it
/// was resolved already (or is not eligible).
pub async fn force_verdict(
    state: &AppState,
    operator: &Operator,
    id: NarrativeId,
    outcome: NarrativeSide,
    evidence: Option<String>,
) -> Result<OracleStatus, ApiError> {
    find(state, &id).await?;
    let verdict = Verdict {
        narrative_id: id,
        outcome,
        evidence,
        // An operator's verdict is certain: the program's confidence bound's top.
        confidence: Confidence::FULL,
    };
    // The verdict goes into the oracle audit log and the operators' log in one transaction.
    let status = resolve::record(state, Resolver::Operator(operator), verdict)
        .await?
        .ok_or_else(|| {
            conflict(
                "not_open_for_resolution",
                "this narrative is resolved already or not open for resolution",
            )
        })?;
    Ok(status)
}
