//! The operators' surface (spec 5.6, 9.2), behind the admin header pair: the dashboard, the job
//! queue monitor, narrative moderation, Classic market review and score recalculation. Every
//! action is written to the append-only `admin_actions` log, in the transaction of what it
//! changed, with the operator's wallet.

pub mod dashboard;
pub mod moderation;
pub mod pending_changes;
pub mod queue_monitor;
pub mod rescore;
pub mod review;

use narrative_store::entities::admin_actions;
use sea_orm::{ActiveValue::NotSet, ActiveValue::Set, ConnectionTrait, DbErr, EntityTrait};
use serde_json::Value;

/// Who acted: the operator's wallet, as its credentials named it.
#[derive(Debug, Clone)]
pub struct Operator(pub String);

/// Appends `action` on `subject` by `operator` to the log, inside `db` (the caller's
/// transaction, so the log holds what happened and nothing that did not).
pub async fn log(
    db: &impl ConnectionTrait,
    operator: &Operator,
    action: &str,
    subject: &str,
    detail: Value,
    now: i64,
) -> Result<(), DbErr> {
    admin_actions::Entity::insert(admin_actions::ActiveModel {
        id: NotSet,
        action: Set(action.to_owned()),
        subject: Set(subject.to_owned()),
        detail: Set(detail),
        actor: Set(operator.0.clone()),
        created_at: Set(now),
    })
    .exec_without_returning(db)
    .await?;
    Ok(())
}
