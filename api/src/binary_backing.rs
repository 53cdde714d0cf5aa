//! `POST /v1/binary/back` and `/v1/binary/withdraw` once binary markets are enabled: prepared
//! `back_market` and `claim` transactions for the wallet, confirmed by signature. The positions
//! themselves are on chain; confirm records the signature and refreshes the market and the
//! backing from the ledger, so the listing and positions show the move at once.

use narrative_sdk::binary_vault::state::Side;
use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::{backings, markets};
use poem::http::StatusCode;
use poem_openapi::Object;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::json;

use crate::error::ApiError;
use crate::prepared::{self, Confirmation};
use crate::state::AppState;
use crate::system::ensure_running;
use crate::time::now;
use crate::validate::{lamports, sol, wallet};

pub const BACK: &str = "binary_back";
pub const CLAIM: &str = "binary_claim";

#[derive(Object)]
pub struct BinaryBack {
    pub wallet: String,
    /// The market's UUID, or its 32-byte id in hex.
    pub market_id: String,
    /// `yes` or `no`.
    pub side: String,
    /// At least the market's minimum backing (0.01 SOL for SOL markets).
    pub amount_sol: f64,
}

#[derive(Object)]
pub struct BinaryWithdraw {
    pub wallet: String,
    pub market_id: String,
    pub side: String,
}

#[derive(Object)]
pub struct BinaryPrepared {
    pub ok: bool,
    pub transaction: String,
    /// `ready_to_confirm`.
    pub status: String,
    pub prepared_id: String,
    pub market_id: String,
    pub side: String,
    pub amount_lamports: Option<u64>,
}

#[derive(Object)]
pub struct BinaryConfirm {
    pub prepared_id: String,
    pub signature: String,
}

#[derive(Object)]
pub struct BinaryConfirmed {
    pub ok: bool,
    pub status: String,
    pub prepared_id: String,
    pub signature: String,
    pub market_id: String,
    pub side: String,
}

/// A market id as the api accepts it: UUID (narratives, native markets) or 64 hex characters.
pub fn market_id(value: &str) -> Result<[u8; 32], ApiError> {
    let value = value.trim();
    if let Ok(id) = narrative_sdk::market_id::market_id_from_str(value) {
        return Ok(id);
    }
    let mut id = [0u8; 32];
    hex::decode_to_slice(value, &mut id)
        .map_err(|_| ApiError::validation("market_id must be a UUID or 64 hex characters"))?;
    Ok(id)
}

fn side(value: &str) -> Result<(Side, &'static str), ApiError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "yes" | "true" => Ok((Side::Yes, "yes")),
        "no" | "false" => Ok((Side::No, "no")),
        _ => Err(ApiError::validation("side must be yes or no")),
    }
}

async fn indexed_market(state: &AppState, id: &[u8; 32]) -> Result<markets::Model, ApiError> {
    markets::Entity::find()
        .filter(markets::Column::MarketId.eq(hex::encode(id)))
        .filter(markets::Column::Closed.eq(false))
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::not_found("market"))
}

fn refused(code: &str, message: &str) -> ApiError {
    ApiError::coded(StatusCode::BAD_REQUEST, code, message.to_owned())
}

pub async fn prepare_back(state: &AppState, body: BinaryBack) -> Result<BinaryPrepared, ApiError> {
    prepare_back_for(state, body, "binary").await
}

/// [`prepare_back`] as a write of `component` (`binary`, or `narratives` for a narrative's
/// market), whose halt flag it obeys.
pub async fn prepare_back_for(
    state: &AppState,
    body: BinaryBack,
    component: &str,
) -> Result<BinaryPrepared, ApiError> {
    ensure_running(state.store.db(), component).await?;
    let backer = wallet("wallet", &body.wallet)?;
    let id = market_id(&body.market_id)?;
    let (side, side_name) = side(&body.side)?;
    let amount = lamports("amount_sol", body.amount_sol)?;
    let market = indexed_market(state, &id).await?;
    if market.mint.is_some() {
        return Err(refused(
            "unsupported_market",
            "token markets are backed with back_market_spl",
        ));
    }
    if amount < market.min_backing.max(0) as u64 {
        return Err(ApiError::validation(format!(
            "amount_sol must be at least {}",
            sol(market.min_backing)
        )));
    }
    if !market.approved || market.finalized || market.oracle_status != 0 || now() >= market.deadline
    {
        return Err(refused(
            "market_not_open",
            "this market does not take backings now",
        ));
    }
    let ix = narrative_sdk::binary::back_market(backer, &id, side, amount);
    let params =
        json!({"market_id": hex::encode(id), "side": side_name, "amount_lamports": amount});
    prepared_for(state, BACK, &backer, ix, params, Some(amount)).await
}

/// Stores `ix` prepared for `backer` as `kind` and answers with it; `params` carry the
/// market and side the confirm reports.
async fn prepared_for(
    state: &AppState,
    kind: &str,
    backer: &Pubkey,
    ix: narrative_sdk::Instruction,
    params: serde_json::Value,
    amount_lamports: Option<u64>,
) -> Result<BinaryPrepared, ApiError> {
    let ready = prepared::prepare(
        state.store.db(),
        state.ledger.as_ref(),
        kind,
        backer,
        &[ix],
        params.clone(),
    )
    .await?;
    Ok(BinaryPrepared {
        ok: true,
        transaction: ready.transaction,
        status: "ready_to_confirm".into(),
        prepared_id: ready.id,
        market_id: params["market_id"].as_str().unwrap_or_default().to_owned(),
        side: params["side"].as_str().unwrap_or_default().to_owned(),
        amount_lamports,
    })
}

pub async fn prepare_withdraw(
    state: &AppState,
    body: BinaryWithdraw,
) -> Result<BinaryPrepared, ApiError> {
    ensure_running(state.store.db(), "binary").await?;
    let backer = wallet("wallet", &body.wallet)?;
    let id = market_id(&body.market_id)?;
    let (side, side_name) = side(&body.side)?;
    let market = indexed_market(state, &id).await?;
    if !market.finalized {
        return Err(refused(
            "market_not_settled",
            "claims open once the market is finalized",
        ));
    }
    let backing =
        backings::Entity::find_by_id(pda::binary::backing(&id, &backer, side).to_string())
            .one(state.store.db())
            .await?
            .filter(|b| !b.closed)
            .ok_or_else(|| ApiError::not_found("backing"))?;
    if backing.claimed {
        return Err(ApiError::coded(
            StatusCode::CONFLICT,
            "already_claimed",
            "this backing was claimed",
        ));
    }
    let ix = narrative_sdk::binary::claim(backer, &id, side);
    let params = json!({"market_id": hex::encode(id), "side": side_name});
    prepared_for(state, CLAIM, &backer, ix, params, None).await
}

/// Confirms a prepared back (`kind` [`BACK`]) or claim ([`CLAIM`]).
pub async fn confirm(
    state: &AppState,
    kind: &str,
    body: BinaryConfirm,
) -> Result<BinaryConfirmed, ApiError> {
    let db = state.store.db();
    let signature = body.signature.trim().to_owned();
    let found = prepared::verify_request(state, kind, &body.prepared_id, &signature).await?;
    let prepared = match found {
        Confirmation::Replay(prepared) => prepared,
        Confirmation::Fresh { prepared, .. } => {
            let id = market_id(prepared.params["market_id"].as_str().unwrap_or_default())?;
            let (side, _) = side(prepared.params["side"].as_str().unwrap_or_default())?;
            let backer: Pubkey = prepared.wallet.parse().map_err(ApiError::internal)?;
            let refresh = [
                pda::binary::market(&id),
                pda::binary::backing(&id, &backer, side),
            ];
            let recorded = prepared::record_confirmed(
                db,
                &state.jobs_wake,
                &prepared.id,
                &signature,
                &refresh,
                async |_| Ok(()),
            )
            .await?;
            if !recorded {
                return Box::pin(confirm(state, kind, body)).await;
            }
            prepared
        }
    };
    Ok(BinaryConfirmed {
        ok: true,
        status: "confirmed".into(),
        prepared_id: prepared.id.clone(),
        signature,
        market_id: prepared.params["market_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        side: prepared.params["side"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    })
}
