//! `/v1/binary/*` (spec 4.13): every route answers 503 `coming_soon` until
//! `BINARY_MARKETS_ENABLED` turns on the listing and positions, read from the index.

use std::sync::Arc;

use narrative_store::entities::{backings, markets};
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::OpenApi;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect};
use serde_json::{json, Value};

use crate::binary_backing::{
    self, BinaryBack, BinaryConfirm, BinaryConfirmed, BinaryPrepared, BinaryWithdraw,
};
use crate::error::{ApiError, ApiResult};
use crate::routes::Tag;
use crate::state::AppState;
use crate::time::iso;
use crate::validate::{page, sol, wallet};

pub struct BinaryApi {
    pub state: Arc<AppState>,
}

impl BinaryApi {
    fn gate(&self) -> Result<(), ApiError> {
        if self.state.binary_markets_enabled {
            Ok(())
        } else {
            Err(gated())
        }
    }
}

pub fn gated() -> ApiError {
    ApiError::coming_soon("binary markets (post-token-launch)").with("feature", "coming_soon")
}

fn market_json(m: &markets::Model) -> Value {
    json!({
        "id": m.market_uuid,
        "market_id": m.market_id,
        "address": m.address,
        "creator": m.creator,
        "variant": m.variant,
        "source": m.source,
        "mint": m.mint,
        "oracle_status": m.oracle_status,
        "finalized": m.finalized,
        "outcome": m.outcome,
        "deadline": iso(m.deadline),
        "yes_total_lamports": m.yes_total,
        "no_total_lamports": m.no_total,
        "yes_total_sol": sol(m.yes_total),
        "no_total_sol": sol(m.no_total),
        "yes_backers": m.yes_backers,
        "no_backers": m.no_backers,
        "total_yield": m.total_yield,
    })
}

#[OpenApi(prefix_path = "/binary", tag = "Tag::Binary")]
impl BinaryApi {
    /// Availability probe: 503 `{feature:'coming_soon'}` while gated, 200 `{feature:'live'}` after.
    #[oai(path = "/status", method = "get")]
    async fn status(&self) -> ApiResult<Json<Value>> {
        self.gate()?;
        Ok(Json(json!({"ok": true, "feature": "live"})))
    }

    /// Market listing from the index, newest first.
    #[oai(path = "/narratives", method = "get")]
    async fn narratives(
        &self,
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
    ) -> ApiResult<Json<Value>> {
        self.gate()?;
        let (limit, offset) = page(limit.0, offset.0, 20, 100);
        let db = self.state.store.db();
        let query = markets::Entity::find().filter(markets::Column::Closed.eq(false));
        let total = query.clone().count(db).await.map_err(ApiError::from)?;
        let rows = query
            .order_by_desc(markets::Column::CreatedAt)
            .order_by_asc(markets::Column::Address)
            .limit(limit)
            .offset(offset)
            .all(db)
            .await
            .map_err(ApiError::from)?;
        Ok(Json(json!({
            "ok": true,
            "markets": rows.iter().map(market_json).collect::<Vec<_>>(),
            "total": total,
        })))
    }

    /// A wallet's positions (one per market and side).
    #[oai(path = "/positions/:wallet", method = "get")]
    async fn positions(
        &self,
        #[oai(name = "wallet")] wallet_param: Path<String>,
    ) -> ApiResult<Json<Value>> {
        self.gate()?;
        let owner = wallet("wallet", &wallet_param.0)?;
        let rows = backings::Entity::find()
            .filter(backings::Column::Backer.eq(owner.to_string()))
            .filter(backings::Column::Closed.eq(false))
            .order_by_desc(backings::Column::LastBackedAt)
            .all(self.state.store.db())
            .await
            .map_err(ApiError::from)?;
        let positions: Vec<Value> = rows
            .iter()
            .map(|b| {
                json!({
                    "address": b.address,
                    "market_id": b.market_id,
                    "side": b.side,
                    "amount_lamports": b.amount,
                    "amount_sol": sol(b.amount),
                    "claimed": b.claimed,
                    "payout_lamports": b.payout,
                    "last_backed_at": iso(b.last_backed_at),
                })
            })
            .collect();
        Ok(Json(
            json!({"ok": true, "wallet": owner.to_string(), "positions": positions}),
        ))
    }

    /// Prepare a `back_market` for the wallet to sign (gated).
    #[oai(path = "/back", method = "post")]
    async fn back(&self, body: Json<BinaryBack>) -> ApiResult<Json<BinaryPrepared>> {
        self.gate()?;
        Ok(Json(
            binary_backing::prepare_back(&self.state, body.0).await?,
        ))
    }

    /// Confirm a sent backing by its signature (gated).
    #[oai(path = "/back/confirm", method = "post")]
    async fn back_confirm(&self, body: Json<BinaryConfirm>) -> ApiResult<Json<BinaryConfirmed>> {
        self.gate()?;
        Ok(Json(
            binary_backing::confirm(&self.state, binary_backing::BACK, body.0).await?,
        ))
    }

    /// Prepare a `claim` (winnings, the loser return or a refund) once the market is
    /// finalized (gated).
    #[oai(path = "/withdraw", method = "post")]
    async fn withdraw(&self, body: Json<BinaryWithdraw>) -> ApiResult<Json<BinaryPrepared>> {
        self.gate()?;
        Ok(Json(
            binary_backing::prepare_withdraw(&self.state, body.0).await?,
        ))
    }

    /// Confirm a sent claim by its signature (gated).
    #[oai(path = "/withdraw/confirm", method = "post")]
    async fn withdraw_confirm(
        &self,
        body: Json<BinaryConfirm>,
    ) -> ApiResult<Json<BinaryConfirmed>> {
        self.gate()?;
        Ok(Json(
            binary_backing::confirm(&self.state, binary_backing::CLAIM, body.0).await?,
        ))
    }
}
