//! `POST /v1/markets` and its confirm (spec 4.13 market creation).

use std::sync::Arc;

use poem::Request;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, OpenApi};

use crate::client::client_ip;
use crate::error::ApiResult;
use crate::market_creation::{
    self, CreateMarket, MarketConfirmRequest, MarketConfirmed, MarketPrepared,
};
use crate::routes::Tag;
use crate::state::AppState;

pub struct MarketsApi {
    pub state: Arc<AppState>,
}

#[derive(ApiResponse)]
pub enum MarketCreated {
    /// The market's creation transaction, ready for the creator to sign.
    #[oai(status = 201)]
    Created(Json<MarketPrepared>),
}

#[OpenApi(prefix_path = "/markets", tag = "Tag::Markets")]
impl MarketsApi {
    /// Create a native binary market: human verification, the creator's signature over the
    /// request, and the creation fee paid to the treasury, verified on the ledger.
    #[oai(path = "/", method = "post")]
    async fn create(&self, req: &Request, body: Json<CreateMarket>) -> ApiResult<MarketCreated> {
        let ip = client_ip(req).and_then(|ip| ip.parse().ok());
        let prepared = market_creation::create(&self.state, body.0, ip).await?;
        Ok(MarketCreated::Created(Json(prepared)))
    }

    /// Confirm the signed creation transaction: a Yield market opens, a Classic one waits for
    /// admin review.
    #[oai(path = "/confirm", method = "post")]
    async fn confirm(&self, body: Json<MarketConfirmRequest>) -> ApiResult<Json<MarketConfirmed>> {
        Ok(Json(market_creation::confirm(&self.state, body.0).await?))
    }
}
