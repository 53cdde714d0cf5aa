//! Classic market review (spec 4.13: "opens only after admin review"; ARCHITECTURE: the admin
//! co-signs). A confirmed Classic creation waits as `pending_review`; the operator approves it by
//! signing a prepared `approve_market` with the program's admin wallet (the one in
//! `x-admin-wallet`), confirmed like every prepared transaction, or rejects it, which closes the
//! request (the market stays unapproved on chain, so nothing can be backed on it).

use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::market_creations;
use poem::http::StatusCode;
use sea_orm::{
    ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, QueryFilter, QueryOrder,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::chain::{MoneyFlow, Prepared, Unsigned};
use crate::domain::admin::{log, Operator};
use crate::domain::markets::creation::{stored, PENDING_REVIEW};
use crate::domain::system::ensure_running;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{Base58Signature, Component, MarketRef, PreparedId, Wallet};

const REJECTED: &str = "rejected";

/// Classic creations waiting for review, oldest first.
pub async fn pending(state: &AppState) -> Result<Vec<market_creations::Model>, ApiError> {
    Ok(market_creations::Entity::find()
        .filter(market_creations::Column::Status.eq(PENDING_REVIEW))
        .order_by_asc(market_creations::Column::CreatedAt)
        .order_by_asc(market_creations::Column::Id)
        .all(state.store.db())
        .await?)
}

/// The pending creation `id`: 404 when unknown, 409 `not_pending_review` when it is not waiting.
async fn pending_one(
    db: &DatabaseConnection,
    id: &str,
) -> Result<market_creations::Model, ApiError> {
    let creation = market_creations::Entity::find_by_id(id.to_owned())
        .one(db)
        .await?
        .ok_or_else(|| ApiError::not_found("market creation"))?;
    if creation.status != PENDING_REVIEW {
        return Err(ApiError::coded(
            StatusCode::CONFLICT,
            "not_pending_review",
            "this market is not waiting for review",
        )
        .with("status", creation.status.as_str()));
    }
    Ok(creation)
}

/// What prepare stores for confirm.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub creation_id: String,
    pub market_id: MarketRef,
}

pub struct PreparedApproval {
    pub unsigned: Unsigned,
    pub creation: market_creations::Model,
}

pub struct ClassicApproval;

/// Prepares `approve_market` for creation `id`, paid and signed by the operator's wallet.
pub async fn prepare_approval(
    state: &AppState,
    operator: &Operator,
    id: &str,
) -> Result<PreparedApproval, ApiError> {
    let db = state.store.db();
    ensure_running(db, Component::Markets).await?;
    let creation = pending_one(db, id).await?;
    let admin: Wallet = operator.0.parse().map_err(|_| {
        ApiError::coded(
            StatusCode::BAD_REQUEST,
            "admin_wallet_invalid",
            "x-admin-wallet is not a wallet that can sign",
        )
    })?;
    let market_id: MarketRef = creation.market_id.parse().map_err(ApiError::internal)?;
    let ix = narrative_sdk::binary::approve_market(admin.pubkey(), &market_id.market_id());
    let params = Params {
        creation_id: creation.id.clone(),
        market_id,
    };
    let unsigned = state
        .chain
        .prepare(&ClassicApproval, &admin, &[ix], &params)
        .await?;
    Ok(PreparedApproval { unsigned, creation })
}

pub async fn confirm_approval(
    state: &AppState,
    prepared_id: PreparedId,
    signature: Base58Signature,
) -> Result<market_creations::Model, ApiError> {
    state
        .chain
        .confirm(&ClassicApproval, prepared_id, signature)
        .await
}

/// Rejects creation `id`: it stops waiting, with the reason in the log.
pub async fn reject(
    state: &AppState,
    operator: &Operator,
    id: &str,
    reason: Option<String>,
) -> Result<market_creations::Model, ApiError> {
    let db = state.store.db();
    pending_one(db, id).await?;
    let now = state.now();
    let txn = state.store.begin_write().await?;
    let updated = market_creations::Entity::update_many()
        .col_expr(market_creations::Column::Status, REJECTED.into())
        .filter(market_creations::Column::Id.eq(id))
        .filter(market_creations::Column::Status.eq(PENDING_REVIEW))
        .exec(&txn)
        .await?;
    if updated.rows_affected != 1 {
        // Reviewed by another request in between.
        return Err(pending_one(db, id)
            .await
            .err()
            .unwrap_or_else(|| ApiError::internal("a pending market changed and did not")));
    }
    log(
        &txn,
        operator,
        "market.reject",
        id,
        json!({"reason": reason}),
        now,
    )
    .await?;
    txn.commit().await?;
    stored(db, id).await
}

#[async_trait::async_trait]
impl MoneyFlow for ClassicApproval {
    const KIND: &'static str = "classic_approval";
    type Params = Params;
    type Confirmed = market_creations::Model;

    fn component(&self, _: &Params) -> Component {
        Component::Markets
    }

    fn changed(&self, prepared: &Prepared<Params>) -> Vec<Pubkey> {
        vec![pda::binary::market(&prepared.params.market_id.market_id())]
    }

    async fn record(
        &self,
        txn: &DatabaseTransaction,
        prepared: &Prepared<Params>,
        signature: &Base58Signature,
        now: i64,
    ) -> Result<(), ApiError> {
        let id = prepared.params.creation_id.as_str();
        // The approval landed, so the market is open on chain, even when it was rejected
        // after this approval was prepared: the store follows the chain.
        market_creations::Entity::update_many()
            .col_expr(market_creations::Column::Status, "open".into())
            .filter(market_creations::Column::Id.eq(id))
            .filter(market_creations::Column::Status.is_in([PENDING_REVIEW, REJECTED]))
            .exec(txn)
            .await?;
        let operator = Operator(prepared.wallet.to_string());
        log(
            txn,
            &operator,
            "market.approve",
            id,
            json!({"signature": signature.to_string()}),
            now,
        )
        .await?;
        Ok(())
    }

    async fn answer(
        &self,
        db: &DatabaseConnection,
        prepared: &Prepared<Params>,
        _fresh: bool,
    ) -> Result<market_creations::Model, ApiError> {
        stored(db, &prepared.params.creation_id).await
    }
}
