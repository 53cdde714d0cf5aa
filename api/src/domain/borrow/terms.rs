//! The borrow terms (spec 4.7 `POST /v1/borrow/accept-terms`): accepted once per wallet, by the
//! wallet's signature of a fixed message (a [`wallet_proof`](crate::domain::wallet_proof)
//! statement), so nobody accepts for another wallet. Prepare refuses a wallet that has not.

use narrative_store::entities::borrow_terms_acceptances;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, EntityTrait};

use crate::domain::wallet_proof::{self, Proof, Statement};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::Wallet;

/// What a wallet signs to accept the borrow terms (with its issued-at time).
pub fn statement(wallet: impl std::fmt::Display) -> Statement {
    Statement::new("borrow-terms").field(wallet)
}

/// When the wallet accepted the borrow terms, if it did.
pub async fn accepted_at(state: &AppState, wallet: &Wallet) -> Result<Option<i64>, ApiError> {
    Ok(
        borrow_terms_acceptances::Entity::find_by_id(wallet.to_string())
            .one(state.store.db())
            .await?
            .map(|a| a.accepted_at),
    )
}

/// Records the wallet's signed acceptance; accepting again answers the first acceptance's time
/// and writes nothing.
pub async fn accept(state: &AppState, proof: Proof<'_>) -> Result<i64, ApiError> {
    let wallet = proof.wallet;
    let signature = proof.signature;
    wallet_proof::prove(state, &statement(wallet), proof).await?;
    borrow_terms_acceptances::Entity::insert(borrow_terms_acceptances::ActiveModel {
        wallet: Set(wallet.to_string()),
        signature: Set(signature.to_string()),
        accepted_at: Set(state.now()),
    })
    .on_conflict(
        OnConflict::column(borrow_terms_acceptances::Column::Wallet)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(state.store.db())
    .await?;
    accepted_at(state, wallet)
        .await?
        .ok_or_else(|| ApiError::internal("a recorded borrow-terms acceptance vanished"))
}
