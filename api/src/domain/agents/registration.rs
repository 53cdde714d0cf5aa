//! Registering an agent: a Free-tier key bound to its wallet, issued in the same database
//! transaction as the agent; about 5 registrations per hour per IP (spec 8).

use std::net::IpAddr;

use narrative_store::entities::agents;
use sea_orm::{ActiveValue::Set, EntityTrait};

use crate::domain::keys::{self, AccessTier};
use crate::domain::quota;
use crate::error::ApiError;
use crate::limits::AGENT_REGISTRATION;
use crate::state::AppState;
use crate::values::Wallet;

pub struct Registered {
    pub agent: agents::Model,
    /// The whole key, shown once.
    pub api_key: String,
}

pub async fn register(
    state: &AppState,
    ip: Option<IpAddr>,
    wallet: Wallet,
    name: String,
    description: Option<String>,
) -> Result<Registered, ApiError> {
    let ip = ip.map_or_else(|| "unknown".to_owned(), |ip| ip.to_string());
    quota::rate(state, &AGENT_REGISTRATION, &ip).await?;
    let now = state.now();
    let txn = state.store.begin_write().await?;
    let issued = keys::issue(
        &txn,
        AccessTier::Free,
        Some(wallet),
        Some(name.clone()),
        now,
    )
    .await?;
    let agent = agents::Model {
        id: format!("ag_{}", uuid::Uuid::new_v4().simple()),
        name,
        description,
        wallet_address: wallet.to_string(),
        api_key_id: issued.row.id.clone(),
        created_at: now,
    };
    agents::Entity::insert(agents::ActiveModel {
        id: Set(agent.id.clone()),
        name: Set(agent.name.clone()),
        description: Set(agent.description.clone()),
        wallet_address: Set(agent.wallet_address.clone()),
        api_key_id: Set(agent.api_key_id.clone()),
        created_at: Set(agent.created_at),
    })
    .exec_without_returning(&txn)
    .await?;
    txn.commit().await?;
    Ok(Registered {
        agent,
        api_key: issued.key,
    })
}
