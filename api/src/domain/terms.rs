//! The platform terms (spec 4.10's `GET /v1/terms/status/:wallet`): one current version
//! (`TERMS_VERSION`), accepted by the wallet's signature of a message naming that version (a
//! [`wallet_proof`] statement), once per wallet and version. The conviction profile's `terms_*` fields report the same record.
//! (Shield backings need their own acknowledgement, of the shield terms: `shield::terms`.)

use narrative_store::entities::terms_acceptances;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use crate::domain::wallet_proof::{self, Proof, Statement};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::Wallet;

/// What a wallet signs to accept `version` of the terms (with its issued-at time).
pub fn statement(version: &str, wallet: impl std::fmt::Display) -> Statement {
    Statement::new("terms").field(version).field(wallet)
}

/// Checks a wallet's signed acceptance of terms whose current version is `current`: the
/// `version` named, if any, must be it (400), and `proof` must be the wallet's fresh, unused
/// signature of `statement` (401 `invalid_signature`), which it then uses up. Shared by the
/// platform terms and the shield's.
pub async fn check_signed(
    state: &AppState,
    current: &str,
    version: Option<&str>,
    statement: &Statement,
    proof: Proof<'_>,
) -> Result<(), ApiError> {
    if version.is_some_and(|v| v != current) {
        return Err(ApiError::validation(format!(
            "terms_version must be the current version {current}"
        )));
    }
    wallet_proof::prove(state, statement, proof).await
}

/// Where a wallet stands with the terms.
pub struct TermsStatus {
    pub current_version: String,
    /// Its acceptance of the current version.
    pub current: Option<terms_acceptances::Model>,
    /// Its most recent acceptance of any version.
    pub latest: Option<terms_acceptances::Model>,
}

/// The wallet's acceptance of the current version, if any.
pub async fn current_acceptance(
    state: &AppState,
    wallet: &Wallet,
) -> Result<Option<terms_acceptances::Model>, ApiError> {
    Ok(
        terms_acceptances::Entity::find_by_id((wallet.to_string(), state.terms_version.clone()))
            .one(state.store.db())
            .await?,
    )
}

pub async fn status(state: &AppState, wallet: &Wallet) -> Result<TermsStatus, ApiError> {
    let latest = terms_acceptances::Entity::find()
        .filter(terms_acceptances::Column::Wallet.eq(wallet.to_string()))
        .order_by_desc(terms_acceptances::Column::AcceptedAt)
        .order_by_desc(terms_acceptances::Column::TermsVersion)
        .one(state.store.db())
        .await?;
    Ok(TermsStatus {
        current_version: state.terms_version.clone(),
        current: current_acceptance(state, wallet).await?,
        latest,
    })
}

/// Records the wallet's signed acceptance of the current version (`version`, when given, must
/// be it). Accepting again answers the first acceptance and writes nothing.
pub async fn accept(
    state: &AppState,
    proof: Proof<'_>,
    version: Option<&str>,
) -> Result<terms_acceptances::Model, ApiError> {
    let current = &state.terms_version;
    let wallet = proof.wallet;
    let signature = proof.signature;
    check_signed(state, current, version, &statement(current, wallet), proof).await?;
    terms_acceptances::Entity::insert(terms_acceptances::ActiveModel {
        wallet: Set(wallet.to_string()),
        terms_version: Set(current.clone()),
        signature: Set(signature.to_string()),
        accepted_at: Set(state.now()),
    })
    .on_conflict(
        OnConflict::columns([
            terms_acceptances::Column::Wallet,
            terms_acceptances::Column::TermsVersion,
        ])
        .do_nothing()
        .to_owned(),
    )
    .exec_without_returning(state.store.db())
    .await?;
    current_acceptance(state, wallet)
        .await?
        .ok_or_else(|| ApiError::internal("a recorded terms acceptance vanished"))
}
