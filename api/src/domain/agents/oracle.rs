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
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};
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
/// otherwise a proven wallet listed in `ORACLE_AGENT_WALLETS` does, unless an operator revoked
/// a proven agent of that wallet: such a revocation is of the wallet's bootstrap, so its holder
/// registering a new agent does not win it back (only a grant does). A revoked agent that merely
/// named the wallet says nothing of its holder.
pub async fn authority(
    state: &AppState,
    db: &impl ConnectionTrait,
    agent: &agents::Model,
) -> Result<Option<Authority>, ApiError> {
    if agent.oracle_revoked_at.is_some() {
        return Ok(None);
    }
    if agent.oracle_granted_at.is_some() {
        return Ok(Some(Authority::Granted));
    }
    let listed = state
        .oracle_agent_wallets
        .iter()
        .any(|w| w.to_string() == agent.wallet_address);
    if !(agent.wallet_proven && listed) {
        return Ok(None);
    }
    let revoked = agents::Entity::find()
        .filter(agents::Column::WalletAddress.eq(&agent.wallet_address))
        .filter(agents::Column::WalletProven.eq(true))
        .filter(agents::Column::OracleRevokedAt.is_not_null())
        .one(db)
        .await?;
    Ok(revoked.is_none().then_some(Authority::Bootstrap))
}

/// What a grant or revocation did.
pub struct Change {
    /// The agent as it is now.
    pub agent: agents::Model,
    /// The authority it holds now.
    pub authority: Option<Authority>,
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
    // Conditional: of two grants, one is recorded.
    let update = agents::Entity::update_many()
        .col_expr(agents::Column::OracleGrantedAt, Expr::value(now))
        .col_expr(
            agents::Column::OracleGrantedBy,
            Expr::value(operator.0.clone()),
        )
        .col_expr(agents::Column::OracleRevokedAt, Expr::value(None::<i64>))
        .filter(
            Condition::any()
                .add(agents::Column::OracleGrantedAt.is_null())
                .add(agents::Column::OracleRevokedAt.is_not_null()),
        );
    let detail = json!({
        "wallet_address": agent.wallet_address,
        "wallet_proven": agent.wallet_proven,
    });
    apply(
        state,
        operator,
        agent_id,
        update,
        "agent.oracle_grant",
        detail,
    )
    .await
}

/// Revokes `agent_id`'s oracle authority, granted or bootstrapped (404 for an unknown agent).
/// Idempotent: an agent without authority stays so and nothing is logged.
pub async fn revoke(
    state: &AppState,
    operator: &Operator,
    agent_id: &AgentId,
) -> Result<Change, ApiError> {
    let agent = find(state, agent_id).await?;
    let Some(held) = authority(state, state.store.db(), &agent).await? else {
        return Ok(Change {
            agent,
            authority: None,
            changed: false,
        });
    };
    // Conditional: of two revocations, one is recorded.
    let update = agents::Entity::update_many()
        .col_expr(agents::Column::OracleRevokedAt, Expr::value(state.now()))
        .filter(agents::Column::OracleRevokedAt.is_null());
    let detail = json!({
        "authority": held.as_str(),
        "wallet_address": agent.wallet_address,
    });
    apply(
        state,
        operator,
        agent_id,
        update,
        "agent.oracle_revoke",
        detail,
    )
    .await
}

/// Runs a grant's or revocation's conditional `update` of `agent_id` and, when it changed the
/// row, its line in the operators' log, in one transaction; the agent as it is then.
async fn apply(
    state: &AppState,
    operator: &Operator,
    agent_id: &AgentId,
    update: sea_orm::UpdateMany<agents::Entity>,
    action: &str,
    detail: serde_json::Value,
) -> Result<Change, ApiError> {
    let now = state.now();
    let txn = state.store.begin_write().await?;
    let updated = update
        .filter(agents::Column::Id.eq(agent_id.as_str()))
        .exec(&txn)
        .await?;
    let changed = updated.rows_affected == 1;
    if changed {
        admin::log(&txn, operator, action, agent_id.as_str(), detail, now).await?;
    }
    txn.commit().await?;
    let agent = find(state, agent_id).await?;
    Ok(Change {
        authority: authority(state, state.store.db(), &agent).await?,
        agent,
        changed,
    })
}
