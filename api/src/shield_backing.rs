//! `POST /v1/shield/back` and its confirm: a prepared `back_shield` for a wallet that has
//! acknowledged the current terms, and, once the signature is on the ledger as prepared, the
//! `shield_positions` row and a refresh of the accounts it changed, in one database transaction.

use narrative_sdk::shield_vault::state::ShieldSide;
use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::{
    shield_coverages, shield_positions, shield_terms_acknowledgements,
};
use poem::http::StatusCode;
use poem_openapi::Object;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};
use serde_json::json;

use crate::error::ApiError;
use crate::prepared::{self, Confirmation};
use crate::state::AppState;
use crate::system::ensure_running;
use crate::time::now;
use crate::validate::{lamports, sol, wallet};

pub const KIND: &str = "shield_back";
/// Spec 8: shield backing bounds, in lamports.
pub const MIN_BACKING: u64 = 100_000_000;
pub const MAX_BACKING: u64 = 100_000_000_000;
/// The discovery window is the first fifth of a coverage period (`DISCOVERY_WINDOW_PCT`).
const DISCOVERY_WINDOW_PCT: i64 = 20;

#[derive(Object)]
pub struct ShieldBack {
    /// The backer's wallet (base58); it signs and pays the fee.
    pub wallet: String,
    /// The coverage period's protocol_id (64 hex characters).
    pub protocol_id: String,
    /// `safe` or `exploit`.
    pub side: String,
    /// 0.1 to 100 SOL.
    pub amount_sol: f64,
    /// Confidential amounts (not on devnet): recorded on the position.
    pub arcium_enabled: Option<bool>,
}

#[derive(Object)]
pub struct ShieldBackPrepared {
    pub ok: bool,
    /// Base64 unsigned transaction; the wallet is the fee payer.
    pub transaction: String,
    /// `ready_to_confirm`: sign, send, then confirm with the signature.
    pub status: String,
    pub prepared_id: String,
    pub blockhash: String,
    pub protocol_id: String,
    pub side: String,
    pub amount_lamports: u64,
    pub amount_sol: f64,
}

#[derive(Object)]
pub struct ConfirmRequest {
    pub prepared_id: String,
    /// Base58 signature of the sent transaction.
    pub signature: String,
}

#[derive(Object)]
pub struct ShieldBackConfirmed {
    pub ok: bool,
    /// `confirmed`.
    pub status: String,
    pub position_id: String,
    pub prepared_id: String,
    pub signature: String,
    pub wallet: String,
    pub protocol_id: String,
    pub side: String,
    pub amount_lamports: i64,
    pub amount_sol: f64,
    /// `discovery` (first 20 % of the period, 2.0x conviction multiplier) or `standard`.
    pub window: String,
    pub arcium_enabled: bool,
}

pub fn protocol_id(value: &str) -> Result<[u8; 32], ApiError> {
    let value = value.trim();
    let mut id = [0u8; 32];
    hex::decode_to_slice(value, &mut id)
        .map_err(|_| ApiError::validation("protocol_id must be 64 hex characters"))?;
    Ok(id)
}

fn side(value: &str) -> Result<ShieldSide, ApiError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "safe" => Ok(ShieldSide::Safe),
        "exploit" => Ok(ShieldSide::Exploit),
        _ => Err(ApiError::validation("side must be safe or exploit")),
    }
}

fn side_name(side: ShieldSide) -> &'static str {
    match side {
        ShieldSide::Safe => "safe",
        ShieldSide::Exploit => "exploit",
    }
}

pub async fn prepare(state: &AppState, body: ShieldBack) -> Result<ShieldBackPrepared, ApiError> {
    let db = state.store.db();
    ensure_running(db, "shield").await?;
    let backer = wallet("wallet", &body.wallet)?;
    let id = protocol_id(&body.protocol_id)?;
    let side = side(&body.side)?;
    let amount = lamports("amount_sol", body.amount_sol)?;
    if !(MIN_BACKING..=MAX_BACKING).contains(&amount) {
        return Err(ApiError::validation(
            "amount_sol must be between 0.1 and 100",
        ));
    }
    let acknowledged = shield_terms_acknowledgements::Entity::find_by_id(backer.to_string())
        .one(db)
        .await?
        .is_some_and(|ack| ack.terms_version == state.shield_terms_version);
    if !acknowledged {
        return Err(ApiError::coded(
            StatusCode::FORBIDDEN,
            "terms_not_accepted",
            "acknowledge the current shield terms first (POST /v1/shield/terms-ack)",
        )
        .with("terms_version", state.shield_terms_version.as_str()));
    }
    let hex_id = hex::encode(id);
    let coverage = shield_coverages::Entity::find()
        .filter(shield_coverages::Column::ProtocolId.eq(hex_id.as_str()))
        .filter(shield_coverages::Column::Closed.eq(false))
        .one(db)
        .await?
        .ok_or_else(|| ApiError::not_found("protocol"))?;
    let now = now();
    if coverage.status != "active" || now < coverage.period_start || now >= coverage.period_end {
        return Err(ApiError::coded(
            StatusCode::BAD_REQUEST,
            "coverage_not_open",
            "this coverage period does not take backings now",
        ));
    }
    let ix = narrative_sdk::shield::back_shield(backer, &id, side, amount);
    let arcium = body.arcium_enabled.unwrap_or(false);
    let ready = prepared::prepare(
        db,
        state.ledger.as_ref(),
        KIND,
        &backer,
        &[ix],
        json!({
            "protocol_id": hex_id,
            "side": side_name(side),
            "amount_lamports": amount,
            "arcium_enabled": arcium,
        }),
    )
    .await?;
    Ok(ShieldBackPrepared {
        ok: true,
        transaction: ready.transaction,
        status: "ready_to_confirm".into(),
        prepared_id: ready.id,
        blockhash: ready.blockhash,
        protocol_id: hex_id,
        side: side_name(side).into(),
        amount_lamports: amount,
        amount_sol: sol(amount as i64),
    })
}

pub async fn confirm(
    state: &AppState,
    body: ConfirmRequest,
) -> Result<ShieldBackConfirmed, ApiError> {
    let db = state.store.db();
    let found = prepared::verify_request(state, KIND, &body.prepared_id, &body.signature).await?;
    let prepared = match found {
        Confirmation::Replay(prepared) => return confirmed(state, &prepared).await,
        Confirmation::Fresh { prepared, .. } => prepared,
    };
    ensure_running(db, "shield").await?;
    let params = &prepared.params;
    let text = |key: &str| params[key].as_str().unwrap_or_default().to_owned();
    let protocol = text("protocol_id");
    let side_text = text("side");
    let amount = params["amount_lamports"].as_i64().unwrap_or_default();
    let coverage = shield_coverages::Entity::find()
        .filter(shield_coverages::Column::ProtocolId.eq(protocol.as_str()))
        .one(db)
        .await?;
    let window = match coverage {
        Some(c)
            if now()
                < c.period_start + (c.period_end - c.period_start) * DISCOVERY_WINDOW_PCT / 100 =>
        {
            "discovery"
        }
        _ => "standard",
    };
    let id = protocol_id(&protocol)?;
    let backer: Pubkey = prepared.wallet.parse().map_err(ApiError::internal)?;
    let refresh = [
        pda::shield::coverage(&id),
        pda::shield::backing(&id, &backer, side(&side_text)?),
    ];
    let signature = body.signature.trim().to_owned();
    let position = shield_positions::ActiveModel {
        id: Set(uuid::Uuid::new_v4().to_string()),
        wallet: Set(prepared.wallet.clone()),
        protocol: Set(protocol),
        side: Set(side_text),
        amount_lamports: Set(amount),
        arcium_enabled: Set(params["arcium_enabled"].as_bool().unwrap_or(false)),
        window: Set(window.into()),
        yield_earned: Set(0),
        status: Set("confirmed".into()),
        tx_signature: Set(Some(signature.clone())),
        created_at: Set(now()),
    };
    let recorded = prepared::record_confirmed(
        db,
        &state.jobs_wake,
        &prepared.id,
        &signature,
        &refresh,
        async |txn| {
            shield_positions::Entity::insert(position)
                .exec_without_returning(txn)
                .await?;
            Ok(())
        },
    )
    .await?;
    if !recorded {
        // Another request confirmed it in the meantime: answer from what it recorded.
        return Box::pin(confirm(state, body)).await;
    }
    let prepared = prepared_transactions_row(state, &prepared.id).await?;
    confirmed(state, &prepared).await
}

async fn prepared_transactions_row(
    state: &AppState,
    id: &str,
) -> Result<narrative_store::entities::prepared_transactions::Model, ApiError> {
    narrative_store::entities::prepared_transactions::Entity::find_by_id(id.to_owned())
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::not_found("prepared transaction"))
}

/// The answer for a confirmed backing, from what was recorded.
async fn confirmed(
    state: &AppState,
    prepared: &narrative_store::entities::prepared_transactions::Model,
) -> Result<ShieldBackConfirmed, ApiError> {
    let signature = prepared.signature.clone().unwrap_or_default();
    let position = shield_positions::Entity::find()
        .filter(shield_positions::Column::TxSignature.eq(signature.as_str()))
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::internal("confirmed backing without its position"))?;
    Ok(ShieldBackConfirmed {
        ok: true,
        status: "confirmed".into(),
        position_id: position.id,
        prepared_id: prepared.id.clone(),
        signature,
        wallet: position.wallet,
        protocol_id: position.protocol,
        side: position.side,
        amount_lamports: position.amount_lamports,
        amount_sol: sol(position.amount_lamports),
        window: position.window,
        arcium_enabled: position.arcium_enabled,
    })
}
