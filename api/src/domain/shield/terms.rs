//! The shield terms every backer acknowledges first, with a signature of the current version
//! (a consent record anyone could file for any wallet would prove nothing).

use narrative_store::entities::shield_terms_acknowledgements;
use narrative_store::freshness::Generations;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, EntityTrait};

use crate::domain::system::ensure_running;
use crate::domain::terms::check_signed;
use crate::domain::wallet_proof::{Proof, Statement};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{Component, Wallet};

/// What a wallet signs to acknowledge the shield terms (with its issued-at time).
pub fn statement(terms_version: &str, wallet: &Wallet) -> Statement {
    Statement::new("shield-terms")
        .field(terms_version)
        .field(wallet)
}

/// Whether `wallet` acknowledged the current terms, as of generations `now` (from the memo
/// while the terms topic stands).
pub async fn acknowledged_as_of(
    state: &AppState,
    now: &Generations,
    wallet: &Wallet,
) -> Result<bool, ApiError> {
    let version = state
        .memos
        .shield_terms
        .get(now, wallet.to_string(), || async {
            Ok::<_, ApiError>(
                shield_terms_acknowledgements::Entity::find_by_id(wallet.to_string())
                    .one(state.store.db())
                    .await?
                    .map(|ack| ack.terms_version),
            )
        })
        .await?;
    Ok(version.as_deref() == Some(state.shield_terms_version.as_str()))
}

/// Records `wallet`'s signed acknowledgement of the current terms (`terms_version`, when given,
/// must be it); the time it was recorded.
pub async fn acknowledge(
    state: &AppState,
    proof: Proof<'_>,
    terms_version: Option<&str>,
) -> Result<i64, ApiError> {
    let db = state.store.db();
    ensure_running(db, Component::Shield).await?;
    let current = &state.shield_terms_version;
    let wallet = proof.wallet;
    check_signed(
        state,
        current,
        terms_version,
        &statement(current, wallet),
        proof,
    )
    .await?;
    let at = state.now();
    shield_terms_acknowledgements::Entity::insert(shield_terms_acknowledgements::ActiveModel {
        wallet: Set(wallet.to_string()),
        terms_version: Set(current.clone()),
        acknowledged_at: Set(at),
    })
    .on_conflict(
        OnConflict::column(shield_terms_acknowledgements::Column::Wallet)
            .update_columns([
                shield_terms_acknowledgements::Column::TermsVersion,
                shield_terms_acknowledgements::Column::AcknowledgedAt,
            ])
            .to_owned(),
    )
    .exec(db)
    .await?;
    Ok(at)
}
