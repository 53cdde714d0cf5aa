//! Agents (spec 4.10): registration with an API key, the narrative feed, portfolio and history,
//! the PnL leaderboard, verdicts from agents an operator authorised as oracles, and webhooks.

pub mod feed;
pub mod oracle;
pub mod positions;
pub mod registration;
pub mod resolve;
pub mod webhooks;

use narrative_store::entities::agents;
use poem::http::StatusCode;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use crate::domain::keys::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// The agent behind the calling key; 403 `{ok:false, error: refusal}` for a key that is not an
/// agent's.
pub async fn agent_of(
    state: &AppState,
    caller: &Caller,
    refusal: &str,
) -> Result<agents::Model, ApiError> {
    agents::Entity::find()
        .filter(agents::Column::ApiKeyId.eq(caller.key_id.as_str()))
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::ok_false(StatusCode::FORBIDDEN, refusal))
}
