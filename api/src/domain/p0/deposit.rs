//! A p0 deposit: prepare checks the gates and builds the wallet's transactions (its margin
//! account's creation first when it has none), the deposit itself stored through the runner;
//! confirm verifies on the ledger that it landed from that wallet as prepared and adds it to the
//! wallet's position in that bank.

use narrative_sdk::Pubkey;
use narrative_store::entities::p0_positions;
use poem::http::StatusCode;
use sea_orm::sea_query::{Expr, ExprTrait, OnConflict};
use sea_orm::{ActiveValue::Set, DatabaseConnection, DatabaseTransaction, EntityTrait};
use serde::{Deserialize, Serialize};

use super::{ensure_core, integration};
use crate::chain::venues::unsigned_setup;
use crate::chain::{MoneyFlow, Prepared, Unsigned};
use crate::domain::defi::ensure_minimum;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{
    Base58Signature, Component, MintAddress, NarrativeId, PreparedId, TokenSymbol, UiAmount, Wallet,
};

pub struct DepositRequest {
    pub wallet: Wallet,
    pub asset_mint: MintAddress,
    pub amount_ui: UiAmount,
    pub narrative_id: Option<NarrativeId>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub account: String,
    pub bank: String,
    pub token_symbol: TokenSymbol,
    pub mint: MintAddress,
    pub amount_base: u64,
    pub narrative_id: Option<NarrativeId>,
}

pub struct PreparedDeposit {
    pub setup: Vec<String>,
    pub deposit: Unsigned,
    pub params: Params,
    pub needs_account_creation: bool,
}

pub struct P0Deposit;

pub async fn prepare(
    state: &AppState,
    request: DepositRequest,
) -> Result<PreparedDeposit, ApiError> {
    let p0 = integration(state)?;
    ensure_core(state, &request.wallet).await?;
    let (token, bank) = p0.token_of_mint(&request.asset_mint.pubkey())?;
    let amount_base = request
        .amount_ui
        .to_base_units(token.decimals)
        .map_err(|e| ApiError::validation(format!("amount_ui {e}")))?;
    let sol_usd = crate::domain::borrow::capacity::price(state).await?.sol_usd;
    ensure_minimum(token.symbol, amount_base, sol_usd)?;
    if let Some(narrative) = request.narrative_id {
        crate::domain::narratives::feed::get(state, narrative).await?;
    }
    let wallet = request.wallet.pubkey();
    let mut built = p0
        .deposit(
            state.chain.ledger.as_ref(),
            &wallet,
            &token,
            &bank,
            amount_base,
        )
        .await?;
    let money = built
        .transactions
        .pop()
        .ok_or_else(|| ApiError::internal("p0 built no deposit"))?;
    let params = Params {
        account: built.account.to_string(),
        bank: bank.to_string(),
        token_symbol: token.symbol,
        mint: MintAddress::from(token.mint),
        amount_base,
        narrative_id: request.narrative_id,
    };
    let blockhash = state.chain.blockhash().await?;
    let setup = unsigned_setup(&built.transactions, &wallet, blockhash);
    let deposit = state
        .chain
        .prepare(&P0Deposit, &request.wallet, &money, &params)
        .await?;
    Ok(PreparedDeposit {
        setup,
        deposit,
        params,
        needs_account_creation: built.needs_account_creation,
    })
}

/// 403 `not_position_owner`: another wallet's deposit or position.
pub fn not_yours() -> ApiError {
    ApiError::coded(
        StatusCode::FORBIDDEN,
        "not_position_owner",
        "this p0 deposit or position belongs to another wallet",
    )
}

/// Confirms a deposit: the wallet's own, then the runner verifies and records.
pub async fn confirm(
    state: &AppState,
    deposit_id: PreparedId,
    wallet: &Wallet,
    signature: Base58Signature,
) -> Result<p0_positions::Model, ApiError> {
    integration(state)?;
    let opened = state
        .chain
        .open::<P0Deposit>(deposit_id, &signature)
        .await?;
    if opened.prepared().wallet != *wallet {
        return Err(not_yours());
    }
    state.chain.confirm(&P0Deposit, deposit_id, signature).await
}

/// The wallet's position in `bank`.
pub async fn position_of(
    db: &impl sea_orm::ConnectionTrait,
    wallet: &Wallet,
    bank: &str,
) -> Result<Option<p0_positions::Model>, ApiError> {
    use sea_orm::{ColumnTrait, QueryFilter};
    Ok(p0_positions::Entity::find()
        .filter(p0_positions::Column::Wallet.eq(wallet.to_string()))
        .filter(p0_positions::Column::Bank.eq(bank))
        .one(db)
        .await?)
}

#[async_trait::async_trait]
impl MoneyFlow for P0Deposit {
    const KIND: &'static str = "p0_deposit";
    type Params = Params;
    type Confirmed = p0_positions::Model;

    fn component(&self, _: &Params) -> Component {
        Component::Defi
    }

    fn changed(&self, _: &Prepared<Params>) -> Vec<Pubkey> {
        // Margin accounts are read from the ledger, not indexed.
        vec![]
    }

    /// Opens the wallet's position in the bank, or adds to it (reopening a closed one), in one
    /// statement so two deposits confirming at once both count.
    async fn record(
        &self,
        txn: &DatabaseTransaction,
        prepared: &Prepared<Params>,
        signature: &Base58Signature,
        now: i64,
    ) -> Result<(), ApiError> {
        use p0_positions::Column as C;
        let p = &prepared.params;
        let amount = i64::try_from(p.amount_base).map_err(ApiError::internal)?;
        let row = p0_positions::ActiveModel {
            id: Set(prepared.id.to_string()),
            wallet: Set(prepared.wallet.to_string()),
            account: Set(p.account.clone()),
            bank: Set(p.bank.clone()),
            token_symbol: Set(p.token_symbol.to_string()),
            mint: Set(p.mint.to_string()),
            principal_base: Set(amount),
            status: Set("open".into()),
            narrative_id: Set(p.narrative_id.map(|n| n.to_string())),
            last_signature: Set(signature.to_string()),
            created_at: Set(now),
            updated_at: Set(now),
            closed_at: Set(None),
        };
        p0_positions::Entity::insert(row)
            .on_conflict(
                OnConflict::columns([C::Wallet, C::Bank])
                    .value(
                        C::PrincipalBase,
                        Expr::col((p0_positions::Entity, C::PrincipalBase)).add(amount),
                    )
                    .update_columns([C::Status, C::LastSignature, C::UpdatedAt, C::ClosedAt])
                    .to_owned(),
            )
            .exec_without_returning(txn)
            .await?;
        Ok(())
    }

    async fn answer(
        &self,
        db: &DatabaseConnection,
        prepared: &Prepared<Params>,
        _fresh: bool,
    ) -> Result<p0_positions::Model, ApiError> {
        position_of(db, &prepared.wallet, &prepared.params.bank)
            .await?
            .ok_or_else(|| ApiError::internal("a confirmed p0 deposit without its position"))
    }
}
