//! Who may give verdicts: oracle authority is an operator's explicit grant to an agent
//! (`POST /v1/admin/agents/{agent_id}/oracle`), revoked the same way (`DELETE`), each written to
//! the operators' log in the transaction that changes it. It is never inferred from the wallet an
//! agent names: a wallet given at registration without its signature is a label.
//!
//! `ORACLE_AGENT_WALLETS` is only a bootstrap, for a deployment's first oracle before any
//! operator acts: an agent counts as granted when its wallet is listed *and* was proven by the
//! wallet's signature at registration. A revocation overrides it (until a new grant).

use narrative_store::entities::agents;
use sea_orm::sea_query::{Condition, Expr};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::json;

use crate::domain::admin::{self, Operator};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::AgentId;

/// Why an agent may resolve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authority {
    /// An operator's grant.
    Granted,
    /// Its proven wallet is listed in `ORACLE_AGENT_WALLETS`.
    Bootstrap,
}

impl Authority {
    pub fn as_str(self) -> &'static str {
        match self {
            Authority::Granted => "grant",
            Authority::Bootstrap => "bootstrap",
        }
    }
}

/// The authority `agent` holds now, if any: a revocation refuses it, a grant gives it, and
/// otherwise a proven wallet listed in `ORACLE_AGENT_WALLETS` does.
pub fn authority(state: &AppState, agent: &agents::Model) -> Option<Authority> {
    if agent.oracle_revoked_at.is_some() {
        return None;
    }
    if agent.oracle_granted_at.is_some() {
        return Some(Authority::Granted);
    }
    let listed = state
        .oracle_agent_wallets
        .iter()
        .any(|w| w.to_string() == agent.wallet_address);
    (agent.wallet_proven && listed).then_some(Authority::Bootstrap)
}

/// What a grant or revocation did.
pub struct Change {
    /// The agent as it is now.
    pub agent: agents::Model,
    /// False when the agent already stood so: nothing was written or logged.
    pub changed: bool,
}

async fn find(state: &AppState, agent_id: &AgentId) -> Result<agents::Model, ApiError> {
    agents::Entity::find_by_id(agent_id.to_string())
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::not_found("agent"))
}

/// Grants `agent_id` oracle authority (404 for an unknown agent). Idempotent: an agent holding a
/// grant keeps its first one and nothing is logged. A grant clears an earlier revocation; an
/// agent authorised by the bootstrap gets a grant of its own (which outlives the list).
pub async fn grant(
    state: &AppState,
    operator: &Operator,
    agent_id: &AgentId,
) -> Result<Change, ApiError> {
    let agent = find(state, agent_id).await?;
    let now = state.now();
    let txn = state.store.begin_write().await?;
    // Conditional: of two grants, one is recorded.
    let updated = agents::Entity::update_many()
        .col_expr(agents::Column::OracleGrantedAt, Expr::value(now))
        .col_expr(
            agents::Column::OracleGrantedBy,
            Expr::value(operator.0.clone()),
        )
        .col_expr(agents::Column::OracleRevokedAt, Expr::value(None::<i64>))
        .filter(agents::Column::Id.eq(agent_id.as_str()))
        .filter(
            Condition::any()
                .add(agents::Column::OracleGrantedAt.is_null())
                .add(agents::Column::OracleRevokedAt.is_not_null()),
        )
        .exec(&txn)
        .await?;
    let changed = updated.rows_affected == 1;
    if changed {
        admin::log(
            &txn,
            operator,
            "agent.oracle_grant",
            agent_id.as_str(),
            json!({
                "wallet_address": agent.wallet_address,
                "wallet_proven": agent.wallet_proven,
            }),
            now,
        )
        .await?;
    }
    txn.commit().await?;
    Ok(Change {
        agent: find(state, agent_id).await?,
        changed,
    })
}

/// Revokes `agent_id`'s oracle authority, granted or bootstrapped (404 for an unknown agent).
/// Idempotent: an agent without authority stays so and nothing is logged.
pub async fn revoke(
    state: &AppState,
    operator: &Operator,
    agent_id: &AgentId,
) -> Result<Change, ApiError> {
    let agent = find(state, agent_id).await?;
    let Some(held) = authority(state, &agent) else {
        return Ok(Change {
            agent,
            changed: false,
        });
    };
    let now = state.now();
    let txn = state.store.begin_write().await?;
    // Conditional: of two revocations, one is recorded.
    let updated = agents::Entity::update_many()
        .col_expr(agents::Column::OracleRevokedAt, Expr::value(now))
        .filter(agents::Column::Id.eq(agent_id.as_str()))
        .filter(agents::Column::OracleRevokedAt.is_null())
        .exec(&txn)
        .await?;
    let changed = updated.rows_affected == 1;
    if changed {
        admin::log(
            &txn,
            operator,
            "agent.oracle_revoke",
            agent_id.as_str(),
            json!({
                "authority": held.as_str(),
                "wallet_address": agent.wallet_address,
            }),
            now,
        )
        .await?;
    }
    txn.commit().await?;
    Ok(Change {
        agent: find(state, agent_id).await?,
        changed,
    })
}
