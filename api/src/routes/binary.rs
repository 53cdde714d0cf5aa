//! `/v1/binary/*` (spec 4.13): every route answers 503 `coming_soon` until
//! `BINARY_MARKETS_ENABLED` turns on the listing and positions (read from the index) and the
//! prepared back and claim. The gate is `app.rs`'s, before the request is parsed, so a
//! malformed body is not a 400 instead; these handlers run only once binary markets are on.

use std::sync::Arc;

use narrative_store::entities::{backings, markets};
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::binary::backing::{self, BackMarket, BackingSol, Confirmed, PreparedMove};
use crate::domain::binary::listing;
use crate::error::{refusals, Answer, ApiError};
use crate::routes::{BackRefusals, ConfirmRefusals, ConfirmRequest, Tag};
use crate::state::AppState;
use crate::values::{
    page, sol, Base58Signature, BinarySide, Component, MarketRef, PreparedId, Wallet,
};

pub struct BinaryApi {
    pub state: Arc<AppState>,
}

/// The 503 of every binary route while binary markets are off.
pub fn gated() -> ApiError {
    ApiError::coming_soon("binary markets (post-token-launch)")
}

#[derive(Object)]
pub struct BinaryStatus {
    pub ok: bool,
    /// `live` once enabled.
    pub feature: String,
}

#[derive(Object)]
pub struct BinaryMarket {
    /// The market's UUID when it has one.
    pub id: Option<String>,
    pub market_id: String,
    pub address: String,
    pub creator: String,
    pub variant: String,
    pub source: String,
    pub mint: Option<String>,
    /// binary_vault's `oracle_status` (spec 3.5): 0 open, 1 resolved, 3 disputed, 4 refund.
    pub oracle_status: i32,
    pub finalized: bool,
    pub outcome: Option<String>,
    pub deadline: String,
    pub yes_total_lamports: i64,
    pub no_total_lamports: i64,
    pub yes_total_sol: f64,
    pub no_total_sol: f64,
    pub yes_backers: i32,
    pub no_backers: i32,
    pub total_yield: i64,
}

impl From<markets::Model> for BinaryMarket {
    fn from(m: markets::Model) -> Self {
        BinaryMarket {
            yes_total_sol: sol(m.yes_total),
            no_total_sol: sol(m.no_total),
            id: m.market_uuid,
            market_id: m.market_id,
            address: m.address,
            creator: m.creator,
            variant: m.variant,
            source: m.source,
            mint: m.mint,
            oracle_status: m.oracle_status,
            finalized: m.finalized,
            outcome: m.outcome,
            deadline: iso(m.deadline),
            yes_total_lamports: m.yes_total,
            no_total_lamports: m.no_total,
            yes_backers: m.yes_backers,
            no_backers: m.no_backers,
            total_yield: m.total_yield,
        }
    }
}

#[derive(Object)]
pub struct MarketList {
    pub ok: bool,
    pub markets: Vec<BinaryMarket>,
    pub total: u64,
}

#[derive(Object)]
pub struct BinaryPosition {
    /// The backing account.
    pub address: String,
    pub market_id: String,
    /// `yes` or `no`.
    pub side: String,
    pub amount_lamports: i64,
    pub amount_sol: f64,
    pub claimed: bool,
    pub payout_lamports: i64,
    pub last_backed_at: String,
}

impl From<backings::Model> for BinaryPosition {
    fn from(b: backings::Model) -> Self {
        BinaryPosition {
            amount_sol: sol(b.amount),
            address: b.address,
            market_id: b.market_id,
            side: b.side,
            amount_lamports: b.amount,
            claimed: b.claimed,
            payout_lamports: b.payout,
            last_backed_at: iso(b.last_backed_at),
        }
    }
}

#[derive(Object)]
pub struct Positions {
    pub ok: bool,
    pub wallet: Wallet,
    pub positions: Vec<BinaryPosition>,
}

#[derive(Object)]
pub struct BinaryBack {
    pub wallet: Wallet,
    pub market_id: MarketRef,
    pub side: BinarySide,
    /// At least the market's minimum backing (0.01 SOL for SOL markets).
    pub amount_sol: BackingSol,
}

#[derive(Object)]
pub struct BinaryWithdraw {
    pub wallet: Wallet,
    pub market_id: MarketRef,
    pub side: BinarySide,
}

#[derive(Object)]
pub struct BinaryPrepared {
    pub ok: bool,
    pub transaction: String,
    /// `ready_to_confirm`.
    pub status: String,
    pub prepared_id: PreparedId,
    /// The 32-byte market id in hex.
    pub market_id: String,
    pub side: BinarySide,
    pub amount_lamports: Option<u64>,
}

impl From<PreparedMove> for BinaryPrepared {
    fn from(p: PreparedMove) -> Self {
        BinaryPrepared {
            ok: true,
            transaction: p.unsigned.transaction,
            status: "ready_to_confirm".into(),
            prepared_id: p.unsigned.id,
            market_id: p.params.market_id.hex(),
            side: p.params.side,
            amount_lamports: p.params.amount_lamports,
        }
    }
}

#[derive(Object)]
pub struct BinaryConfirmed {
    pub ok: bool,
    /// `confirmed`.
    pub status: String,
    pub prepared_id: PreparedId,
    pub signature: Base58Signature,
    pub market_id: String,
    pub side: BinarySide,
}

impl From<Confirmed> for BinaryConfirmed {
    fn from(c: Confirmed) -> Self {
        BinaryConfirmed {
            ok: true,
            status: "confirmed".into(),
            prepared_id: c.prepared_id,
            signature: c.signature,
            market_id: c.params.market_id.hex(),
            side: c.params.side,
        }
    }
}

refusals! {
    /// Every binary route answers 503 while binary markets are off.
    ReadRefusals: [400, 503];
    WithdrawRefusals: [400, 403, 404, 409, 413, 503];
}

#[OpenApi(prefix_path = "/binary", tag = "Tag::Binary")]
impl BinaryApi {
    /// Availability probe: 503 `{feature:'coming_soon'}` while gated, 200 `{feature:'live'}`
    /// after.
    #[oai(path = "/status", method = "get")]
    async fn status(&self) -> Answer<Json<BinaryStatus>, ReadRefusals> {
        Ok(Json(BinaryStatus {
            ok: true,
            feature: "live".into(),
        }))
    }

    /// Market listing from the index, newest first (`limit` default 20, clamped to 1–100).
    #[oai(path = "/narratives", method = "get")]
    async fn narratives(
        &self,
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
    ) -> Answer<Json<MarketList>, ReadRefusals> {
        let (limit, offset) = page(limit.0, offset.0, 20, 100);
        let (rows, total) = listing::markets(&self.state, limit, offset).await?;
        Ok(Json(MarketList {
            ok: true,
            markets: rows.into_iter().map(BinaryMarket::from).collect(),
            total,
        }))
    }

    /// A wallet's positions (one per market and side).
    #[oai(path = "/positions/:wallet", method = "get")]
    async fn positions(&self, wallet: Path<Wallet>) -> Answer<Json<Positions>, ReadRefusals> {
        let rows = listing::positions(&self.state, &wallet.0).await?;
        Ok(Json(Positions {
            ok: true,
            wallet: wallet.0,
            positions: rows.into_iter().map(BinaryPosition::from).collect(),
        }))
    }

    /// Prepare a `back_market` for the wallet to sign.
    #[oai(path = "/back", method = "post")]
    async fn back(&self, body: Json<BinaryBack>) -> Answer<Json<BinaryPrepared>, BackRefusals> {
        let body = body.0;
        let prepared = backing::prepare_back(
            &self.state,
            BackMarket {
                wallet: body.wallet,
                market: body.market_id,
                side: body.side,
                amount: body.amount_sol,
            },
            Component::Binary,
        )
        .await?;
        Ok(Json(prepared.into()))
    }

    /// Confirm a sent backing by its signature.
    #[oai(path = "/back/confirm", method = "post")]
    async fn back_confirm(
        &self,
        body: Json<ConfirmRequest>,
    ) -> Answer<Json<BinaryConfirmed>, ConfirmRefusals> {
        let flow = backing::BACKING;
        let confirmed =
            backing::confirm(&self.state, flow, body.0.prepared_id, body.0.signature).await?;
        Ok(Json(confirmed.into()))
    }

    /// Prepare a `claim` (winnings, the loser return or a refund) once the market is
    /// finalized.
    #[oai(path = "/withdraw", method = "post")]
    async fn withdraw(
        &self,
        body: Json<BinaryWithdraw>,
    ) -> Answer<Json<BinaryPrepared>, WithdrawRefusals> {
        let body = body.0;
        let prepared =
            backing::prepare_claim(&self.state, body.wallet, body.market_id, body.side).await?;
        Ok(Json(prepared.into()))
    }

    /// Confirm a sent claim by its signature.
    #[oai(path = "/withdraw/confirm", method = "post")]
    async fn withdraw_confirm(
        &self,
        body: Json<ConfirmRequest>,
    ) -> Answer<Json<BinaryConfirmed>, ConfirmRefusals> {
        let flow = backing::CLAIM;
        let confirmed =
            backing::confirm(&self.state, flow, body.0.prepared_id, body.0.signature).await?;
        Ok(Json(confirmed.into()))
    }
}
