//! Applications for a partnership shield.

use narrative_store::entities::shield_partner_applications;
use sea_orm::{ActiveValue::Set, EntityTrait};

use crate::domain::system::ensure_running;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{Component, Wallet};

pub struct Application {
    pub protocol_name: String,
    pub contact: String,
    pub wallet: Option<Wallet>,
    pub website: Option<String>,
    pub message: Option<String>,
}

/// Records an application; its id.
pub async fn apply(state: &AppState, application: Application) -> Result<String, ApiError> {
    let db = state.store.db();
    ensure_running(db, Component::Shield).await?;
    let id = uuid::Uuid::new_v4().to_string();
    shield_partner_applications::Entity::insert(shield_partner_applications::ActiveModel {
        id: Set(id.clone()),
        protocol_name: Set(application.protocol_name),
        contact: Set(application.contact),
        wallet: Set(application.wallet.map(|w| w.to_string())),
        website: Set(application.website),
        message: Set(application.message),
        created_at: Set(state.now()),
    })
    .exec(db)
    .await?;
    Ok(id)
}
