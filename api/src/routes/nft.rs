//! Inbound NFT webhooks (spec 4.12): the on-chain indexer reports tier-NFT transfers, server to
//! server, with the shared secret.

use std::sync::Arc;

use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::domain::nft;
use crate::error::{refusals, Answer};
use crate::http::auth::WebhookAuth;
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::JsonDocument;

pub struct NftApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct WebhookReceived {
    pub ok: bool,
    /// Id of the stored event.
    pub id: i64,
}

refusals! {
    WebhookRefusals: [400, 413];
}

#[OpenApi(prefix_path = "/nft/webhook", tag = "Tag::Nft")]
impl NftApi {
    /// Account changes of the tier-NFT collection, from the on-chain indexer.
    #[oai(path = "/indexer", method = "post")]
    async fn indexer(
        &self,
        _auth: WebhookAuth,
        body: Json<JsonDocument>,
    ) -> Answer<Json<WebhookReceived>, WebhookRefusals> {
        let id = nft::record(&self.state, "indexer", body.0 .0).await?;
        Ok(Json(WebhookReceived { ok: true, id }))
    }

    /// A tier-NFT transfer.
    #[oai(path = "/transfer", method = "post")]
    async fn transfer(
        &self,
        _auth: WebhookAuth,
        body: Json<JsonDocument>,
    ) -> Answer<Json<WebhookReceived>, WebhookRefusals> {
        let id = nft::record(&self.state, "transfer", body.0 .0).await?;
        Ok(Json(WebhookReceived { ok: true, id }))
    }
}
