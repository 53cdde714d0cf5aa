//! A repayment (spec 4.7): prepare reads what the position's loan owes now on the ledger
//! (principal and the interest accrued at the venue's rate) and builds the venue's repayment of
//! all of it; confirm verifies it landed from the position's wallet and closes the position.
//! Only the position's wallet can repay it through the service.

use narrative_sdk::Pubkey;
use narrative_store::entities::borrow_positions;
use poem::http::StatusCode;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, QueryFilter};
use serde::{Deserialize, Serialize};

use super::flow::{lender, not_yours};
use crate::chain::{MoneyFlow, Prepared, Unsigned};
use crate::domain::defi::venues::unsigned_setup;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{Base58Signature, Component, PreparedId, TokenSymbol, VenueId, Wallet};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub position_id: String,
    pub protocol: VenueId,
    pub asset: TokenSymbol,
    /// What the loan owed when prepared, in base units.
    pub owed_base: u64,
}

pub struct PreparedRepay {
    pub setup: Vec<String>,
    pub repay: Unsigned,
    pub position: borrow_positions::Model,
    pub asset: TokenSymbol,
    pub principal_base: u64,
    pub owed_base: u64,
}

impl PreparedRepay {
    /// Interest accrued at the venue's rate since the borrow.
    pub fn interest_base(&self) -> u64 {
        self.owed_base.saturating_sub(self.principal_base)
    }
}

pub struct RepayFlow;

/// The wallet's open position `position_id`: 404 unknown, 403 another wallet's, 409 closed.
pub async fn open_position(
    state: &AppState,
    wallet: &Wallet,
    position_id: PreparedId,
) -> Result<borrow_positions::Model, ApiError> {
    let position = borrow_positions::Entity::find_by_id(position_id.to_string())
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::not_found("borrow position"))?;
    if position.wallet != wallet.to_string() {
        return Err(not_yours());
    }
    if position.status != "open" {
        return Err(ApiError::coded(
            StatusCode::CONFLICT,
            "position_closed",
            format!("this borrow is {} already", position.status),
        ));
    }
    Ok(position)
}

pub async fn prepare(
    state: &AppState,
    wallet: &Wallet,
    position_id: PreparedId,
) -> Result<PreparedRepay, ApiError> {
    let position = open_position(state, wallet, position_id).await?;
    let protocol: VenueId = position.protocol.parse().map_err(ApiError::internal)?;
    let asset: TokenSymbol = position.asset.parse().map_err(ApiError::internal)?;
    let (venue, token) = lender(state, protocol, asset)?;
    let lender = venue.lender().expect("checked by `lender`");
    let (mut transactions, owed_base) = lender
        .repay(state.chain.ledger.as_ref(), &wallet.pubkey(), &token)
        .await?;
    let money = transactions
        .pop()
        .ok_or_else(|| ApiError::internal("a venue built no repayment"))?;
    let blockhash = state.chain.blockhash().await?;
    let setup = unsigned_setup(&transactions, &wallet.pubkey(), blockhash);
    let params = Params {
        position_id: position.id.clone(),
        protocol,
        asset,
        owed_base,
    };
    let repay = state
        .chain
        .prepare(&RepayFlow, wallet, &money, &params)
        .await?;
    Ok(PreparedRepay {
        setup,
        repay,
        principal_base: u64::try_from(position.amount_base).map_err(ApiError::internal)?,
        position,
        asset,
        owed_base,
    })
}

/// Confirms a repayment: the wallet's own, of this position; the runner verifies the landed
/// transaction and closes the position.
pub async fn confirm(
    state: &AppState,
    wallet: &Wallet,
    position_id: PreparedId,
    repay_id: PreparedId,
    signature: Base58Signature,
) -> Result<borrow_positions::Model, ApiError> {
    let opened = state.chain.open::<RepayFlow>(repay_id, &signature).await?;
    let prepared = opened.prepared();
    if prepared.wallet != *wallet {
        return Err(not_yours());
    }
    if prepared.params.position_id != position_id.to_string() {
        return Err(ApiError::coded(
            StatusCode::BAD_REQUEST,
            "transaction_mismatch",
            "this repayment was prepared for another position",
        ));
    }
    state.chain.confirm(&RepayFlow, repay_id, signature).await
}

#[async_trait::async_trait]
impl MoneyFlow for RepayFlow {
    const KIND: &'static str = "borrow_repay";
    type Params = Params;
    type Confirmed = borrow_positions::Model;

    fn component(&self, _: &Params) -> Component {
        Component::Defi
    }

    fn changed(&self, _: &Prepared<Params>) -> Vec<Pubkey> {
        vec![]
    }

    async fn record(
        &self,
        txn: &DatabaseTransaction,
        prepared: &Prepared<Params>,
        signature: &Base58Signature,
        now: i64,
    ) -> Result<(), ApiError> {
        // Closed once: a position the ledger showed closed meanwhile keeps that record.
        borrow_positions::Entity::update_many()
            .col_expr(borrow_positions::Column::Status, Expr::value("repaid"))
            .col_expr(
                borrow_positions::Column::RepaySignature,
                Expr::value(signature.to_string()),
            )
            .col_expr(borrow_positions::Column::ClosedAt, Expr::value(now))
            .filter(borrow_positions::Column::Id.eq(prepared.params.position_id.as_str()))
            .filter(borrow_positions::Column::Status.eq("open"))
            .exec(txn)
            .await?;
        Ok(())
    }

    async fn answer(
        &self,
        db: &DatabaseConnection,
        prepared: &Prepared<Params>,
        _fresh: bool,
    ) -> Result<borrow_positions::Model, ApiError> {
        borrow_positions::Entity::find_by_id(prepared.params.position_id.as_str())
            .one(db)
            .await?
            .ok_or_else(|| ApiError::internal("a repaid borrow without its position"))
    }
}
