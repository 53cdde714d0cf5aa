//! The shield gate's blocks (spec 5 rule 6): an address (an IPv6 /64, as the rate limits count
//! callers) whose terms acknowledgements were
//! refused `SHIELD_GATE_MAX_FAILURES` times within ten minutes (forged or mismatched
//! signatures, malformed requests: what probing the gate looks like) is blocked from the
//! shield's wallet-facing writes (403 `ip_blocked`) until an operator lifts the block. Counting
//! starts again after a lift (from the log entry it was lifted at, not from a time, which a
//! second can blur). Failures are read from the gate's own log (`shield_probe_log`).
//!
//! Blocks are kept in memory under the `terms` generation, which every write to
//! `shield_blocked_ips` bumps: the gate asks the database nothing per request while no block
//! changed. A block or a lift made here is seen by this process's next request (the writer
//! observes the generations after its write); another process sees it at its next probe or
//! notification, and a refusal is always checked on fresh generations.

use std::net::IpAddr;

use narrative_store::entities::{shield_blocked_ips, shield_probe_log};
use narrative_store::freshness::{generations, Generations};
use poem::http::StatusCode;
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use serde_json::json;

use crate::domain::admin::{log, Operator};
use crate::error::ApiError;
use crate::limits::client::{limit_key, Subject};
use crate::state::AppState;

/// The window refused attempts are counted over.
pub const WINDOW_SECS: i64 = 600;
/// The outcome the gate logs for an acknowledgement it accepted.
pub const ACCEPTED: &str = "acknowledged";
/// The outcome (and error code) of an attempt from a blocked address.
pub const BLOCKED: &str = "ip_blocked";

/// What the gate logs, counts and blocks a caller at `ip` as: the address as the rate limits
/// count callers, an IPv6 caller's /64 (one host holds it whole, so stepping through it does
/// not start the count again).
pub fn caller(ip: IpAddr) -> String {
    Subject::of(ip).as_str().to_owned()
}

pub fn ip_blocked() -> ApiError {
    ApiError::coded(
        StatusCode::FORBIDDEN,
        BLOCKED,
        "this address is blocked from the shield after repeated refused attempts; contact the operators",
    )
}

/// Whether `ip` is blocked: from memory under the newest generations known, and when that says
/// blocked, again under generations read now (a refusal answers data as new as the request).
pub async fn is_blocked(state: &AppState, ip: IpAddr) -> Result<bool, ApiError> {
    let freshness = &state.freshness;
    let guess = match freshness.latest() {
        Some(known) => known,
        None => freshness.current().await.map_err(ApiError::internal)?,
    };
    if !blocked_as_of(state, ip, &guess).await? {
        return Ok(false);
    }
    let now = freshness.current().await.map_err(ApiError::internal)?;
    blocked_as_of(state, ip, &now).await
}

async fn blocked_as_of(state: &AppState, ip: IpAddr, at: &Generations) -> Result<bool, ApiError> {
    state
        .memos
        .blocked_ips
        .get(at, limit_key(ip), || async {
            Ok::<_, ApiError>(
                shield_blocked_ips::Entity::find_by_id(caller(ip))
                    .filter(shield_blocked_ips::Column::LiftedAt.is_null())
                    .one(state.store.db())
                    .await?
                    .is_some(),
            )
        })
        .await
}

/// Makes this process see its own write to the blocks at once.
async fn observe_write(state: &AppState) -> Result<(), ApiError> {
    let seen = generations(state.store.db()).await?;
    state.freshness.observe(&seen);
    Ok(())
}

/// After a refused attempt from `ip`: blocks it once its refusals within the window (and logged
/// after its last lift, if any) reach the limit.
pub async fn count_refusal(state: &AppState, ip: &str) -> Result<(), ApiError> {
    let db = state.store.db();
    let now = state.now();
    let lifted_after = shield_blocked_ips::Entity::find_by_id(ip.to_owned())
        .one(db)
        .await?
        .and_then(|b| b.lifted_after_probe)
        .unwrap_or(0);
    let refused = shield_probe_log::Entity::find()
        .filter(shield_probe_log::Column::Ip.eq(ip))
        .filter(shield_probe_log::Column::Id.gt(lifted_after))
        .filter(shield_probe_log::Column::CreatedAt.gte(now - WINDOW_SECS))
        .filter(shield_probe_log::Column::Refused.eq(true))
        .count(db)
        .await?;
    let limit = u64::from(state.shield_gate_max_failures);
    if refused < limit {
        return Ok(());
    }
    let failures = i32::try_from(refused).unwrap_or(i32::MAX);
    shield_blocked_ips::Entity::insert(shield_blocked_ips::ActiveModel {
        ip: Set(ip.to_owned()),
        failures: Set(failures),
        reason: Set(format!(
            "{refused} refused shield terms acknowledgements within {} minutes",
            WINDOW_SECS / 60
        )),
        blocked_at: Set(now),
        lifted_at: Set(None),
        lifted_by: Set(None),
        lifted_after_probe: Set(None),
    })
    .on_conflict(
        OnConflict::column(shield_blocked_ips::Column::Ip)
            .update_columns([
                shield_blocked_ips::Column::Failures,
                shield_blocked_ips::Column::Reason,
                shield_blocked_ips::Column::BlockedAt,
                shield_blocked_ips::Column::LiftedAt,
                shield_blocked_ips::Column::LiftedBy,
                shield_blocked_ips::Column::LiftedAfterProbe,
            ])
            .to_owned(),
    )
    .exec_without_returning(db)
    .await?;
    observe_write(state).await?;
    tracing::warn!(ip, failures, "shield gate: address blocked");
    Ok(())
}

/// The addresses blocked now, most recent first.
pub async fn blocked(state: &AppState) -> Result<Vec<shield_blocked_ips::Model>, ApiError> {
    Ok(shield_blocked_ips::Entity::find()
        .filter(shield_blocked_ips::Column::LiftedAt.is_null())
        .order_by_desc(shield_blocked_ips::Column::BlockedAt)
        .order_by_asc(shield_blocked_ips::Column::Ip)
        .all(state.store.db())
        .await?)
}

/// Lifts the block of `ip`: 404 when it is not blocked.
pub async fn unblock(
    state: &AppState,
    operator: &Operator,
    ip: IpAddr,
) -> Result<shield_blocked_ips::Model, ApiError> {
    // Written as the gate writes it, whatever form the operator typed (any address of an
    // IPv6 /64 lifts the /64's block).
    let ip = caller(ip);
    let ip = ip.as_str();
    let now = state.now();
    let txn = state.store.begin_write().await?;
    let last_probe: Option<i64> = shield_probe_log::Entity::find()
        .select_only()
        .column_as(shield_probe_log::Column::Id.max(), "last")
        .into_tuple()
        .one(&txn)
        .await?
        .flatten();
    let lifted = shield_blocked_ips::Entity::update_many()
        .col_expr(shield_blocked_ips::Column::LiftedAt, Some(now).into())
        .col_expr(
            shield_blocked_ips::Column::LiftedAfterProbe,
            Some(last_probe.unwrap_or(0)).into(),
        )
        .col_expr(
            shield_blocked_ips::Column::LiftedBy,
            Some(operator.0.clone()).into(),
        )
        .filter(shield_blocked_ips::Column::Ip.eq(ip))
        .filter(shield_blocked_ips::Column::LiftedAt.is_null())
        .exec(&txn)
        .await?;
    if lifted.rows_affected != 1 {
        return Err(ApiError::not_found("blocked address"));
    }
    log(&txn, operator, "shield.unblock", ip, json!({}), now).await?;
    txn.commit().await?;
    observe_write(state).await?;
    shield_blocked_ips::Entity::find_by_id(ip.to_owned())
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::internal("a lifted block vanished"))
}
