//! A p0 withdrawal: an amount of a bank's token, or all of it, from the wallet's position there.
//! Prepare builds the withdrawal with the risk engine's accounts for what stays open; confirm
//! verifies on the ledger that it landed from that wallet as prepared, then takes the amount off
//! the position's principal (all of it, closing the position, for `withdraw_all`).

use narrative_sdk::Pubkey;
use narrative_store::entities::p0_positions;
use poem::http::StatusCode;
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, QueryFilter};
use serde::{Deserialize, Serialize};

use super::deposit::{not_yours, position_of};
use super::integration;
use crate::chain::venues::p0::WithdrawAmount;
use crate::chain::{MoneyFlow, Prepared, Unsigned};
use crate::domain::defi::withdrawal::prepared_of;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{
    Base58Signature, Component, MintAddress, PreparedId, TokenSymbol, UiAmount, Wallet,
};

pub struct WithdrawRequest {
    pub wallet: Wallet,
    pub asset_mint: MintAddress,
    pub amount_ui: Option<UiAmount>,
    pub withdraw_all: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub position_id: String,
    pub account: String,
    pub bank: String,
    pub token_symbol: TokenSymbol,
    /// The base units asked for; None for everything.
    pub amount_base: Option<u64>,
    /// What it pays out at the bank's share value when prepared.
    pub expected_base: u64,
}

pub struct PreparedWithdraw {
    pub withdrawal: Unsigned,
    pub params: Params,
}

pub struct P0Withdraw;

/// `amount_ui` or `withdraw_all: true`, exactly one (400 otherwise).
fn amount_of(request: &WithdrawRequest, decimals: u8) -> Result<WithdrawAmount, ApiError> {
    match (request.amount_ui, request.withdraw_all.unwrap_or(false)) {
        (Some(_), true) => Err(ApiError::validation(
            "give amount_ui or withdraw_all, not both",
        )),
        (None, false) => Err(ApiError::validation(
            "amount_ui or withdraw_all: true is required",
        )),
        (None, true) => Ok(WithdrawAmount::All),
        (Some(amount), false) => {
            let base = amount
                .to_base_units(decimals)
                .map_err(|e| ApiError::validation(format!("amount_ui {e}")))?;
            if base == 0 {
                return Err(ApiError::validation("amount_ui must be above zero"));
            }
            Ok(WithdrawAmount::Exact(base))
        }
    }
}

pub async fn prepare(
    state: &AppState,
    request: WithdrawRequest,
) -> Result<PreparedWithdraw, ApiError> {
    let p0 = integration(state)?;
    let (token, bank) = p0.token_of_mint(&request.asset_mint.pubkey())?;
    let amount = amount_of(&request, token.decimals)?;
    let position = position_of(state.store.db(), &request.wallet, &bank.to_string())
        .await?
        .filter(|p| p.status == "open")
        .ok_or_else(|| ApiError::not_found("open p0 position of the wallet in that bank"))?;
    let wallet = request.wallet.pubkey();
    let mut built = p0
        .withdraw(state.chain.ledger.as_ref(), &wallet, &token, &bank, amount)
        .await?;
    let money = built
        .transactions
        .pop()
        .ok_or_else(|| ApiError::internal("p0 built no withdrawal"))?;
    let params = Params {
        position_id: position.id,
        account: built.account.to_string(),
        bank: bank.to_string(),
        token_symbol: token.symbol,
        amount_base: match amount {
            WithdrawAmount::Exact(base) => Some(base),
            WithdrawAmount::All => None,
        },
        expected_base: built.expected_base,
    };
    let withdrawal = state
        .chain
        .prepare(&P0Withdraw, &request.wallet, &money, &params)
        .await?;
    Ok(PreparedWithdraw { withdrawal, params })
}

/// Confirms a withdrawal of `position_id` (the prepared one named, else the wallet's one of that
/// position the signature landed, or its newest): the wallet's own, of that position; then the
/// runner verifies and records.
pub async fn confirm(
    state: &AppState,
    withdrawal_id: Option<PreparedId>,
    position_id: &str,
    wallet: &Wallet,
    signature: Base58Signature,
) -> Result<p0_positions::Model, ApiError> {
    integration(state)?;
    let id = prepared_of::<P0Withdraw>(state, withdrawal_id, wallet, &signature, |p| {
        p.position_id == position_id
    })
    .await?
    .ok_or_else(|| ApiError::not_found("prepared p0 withdrawal of this position"))?;
    let opened = state.chain.open::<P0Withdraw>(id, &signature).await?;
    let prepared = opened.prepared();
    if prepared.wallet != *wallet {
        return Err(not_yours());
    }
    if prepared.params.position_id != position_id {
        return Err(ApiError::coded(
            StatusCode::BAD_REQUEST,
            "position_mismatch",
            "this withdrawal was prepared for another position",
        ));
    }
    state.chain.confirm(&P0Withdraw, id, signature).await
}

#[async_trait::async_trait]
impl MoneyFlow for P0Withdraw {
    const KIND: &'static str = "p0_withdraw";
    type Params = Params;
    type Confirmed = p0_positions::Model;

    fn component(&self, _: &Params) -> Component {
        Component::Defi
    }

    fn changed(&self, _: &Prepared<Params>) -> Vec<Pubkey> {
        vec![]
    }

    /// Takes the amount off the principal in one statement (never below zero: interest is
    /// withdrawn after the principal runs out); everything closes the position.
    async fn record(
        &self,
        txn: &DatabaseTransaction,
        prepared: &Prepared<Params>,
        signature: &Base58Signature,
        now: i64,
    ) -> Result<(), ApiError> {
        use p0_positions::Column as C;
        let p = &prepared.params;
        let mut update = p0_positions::Entity::update_many()
            .col_expr(C::LastSignature, Expr::value(signature.to_string()))
            .col_expr(C::UpdatedAt, Expr::value(now));
        update = match p.amount_base {
            None => update
                .col_expr(C::PrincipalBase, Expr::value(0i64))
                .col_expr(C::Status, Expr::value("closed"))
                .col_expr(C::ClosedAt, Expr::value(now)),
            Some(amount) => {
                let amount = i64::try_from(amount).map_err(ApiError::internal)?;
                update.col_expr(
                    C::PrincipalBase,
                    Expr::case(
                        Expr::col(C::PrincipalBase).gt(amount),
                        Expr::col(C::PrincipalBase).sub(amount),
                    )
                    .finally(0i64)
                    .into(),
                )
            }
        };
        let done = update
            .filter(C::Id.eq(p.position_id.as_str()))
            .filter(C::Wallet.eq(prepared.wallet.to_string()))
            .exec(txn)
            .await?;
        if done.rows_affected != 1 {
            return Err(ApiError::internal("a p0 withdrawal without its position"));
        }
        Ok(())
    }

    async fn answer(
        &self,
        db: &DatabaseConnection,
        prepared: &Prepared<Params>,
        _fresh: bool,
    ) -> Result<p0_positions::Model, ApiError> {
        p0_positions::Entity::find_by_id(prepared.params.position_id.as_str())
            .one(db)
            .await?
            .ok_or_else(|| ApiError::internal("a confirmed p0 withdrawal without its position"))
    }
}
