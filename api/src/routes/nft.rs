//! Inbound NFT webhooks (spec 4.12): the on-chain indexer reports tier-NFT transfers, server to
//! server, with the shared secret. Each call is kept as received for the tier re-derivation.

use std::sync::Arc;

use narrative_store::entities::webhook_events;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use sea_orm::{ActiveValue::NotSet, ActiveValue::Set, EntityTrait};
use serde_json::Value;

use crate::auth::WebhookAuth;
use crate::error::{ApiError, ApiResult};
use crate::routes::Tag;
use crate::state::AppState;
use crate::time::now;

pub struct NftApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct WebhookReceived {
    pub ok: bool,
    /// Id of the stored event.
    pub id: i64,
}

impl NftApi {
    async fn record(&self, source: &str, payload: Value) -> ApiResult<Json<WebhookReceived>> {
        if !payload.is_object() && !payload.is_array() {
            return Err(ApiError::validation("body must be a JSON object or array").into());
        }
        let inserted = webhook_events::Entity::insert(webhook_events::ActiveModel {
            id: NotSet,
            source: Set(source.to_owned()),
            payload: Set(payload),
            received_at: Set(now()),
        })
        .exec(self.state.store.db())
        .await
        .map_err(ApiError::from)?;
        Ok(Json(WebhookReceived {
            ok: true,
            id: inserted.last_insert_id,
        }))
    }
}

#[OpenApi(prefix_path = "/nft/webhook", tag = "Tag::Nft")]
impl NftApi {
    /// Account changes of the tier-NFT collection, from the on-chain indexer.
    #[oai(path = "/indexer", method = "post")]
    async fn indexer(
        &self,
        _auth: WebhookAuth,
        body: Json<Value>,
    ) -> ApiResult<Json<WebhookReceived>> {
        self.record("indexer", body.0).await
    }

    /// A tier-NFT transfer.
    #[oai(path = "/transfer", method = "post")]
    async fn transfer(
        &self,
        _auth: WebhookAuth,
        body: Json<Value>,
    ) -> ApiResult<Json<WebhookReceived>> {
        self.record("transfer", body.0).await
    }
}
