//! Protocol cover resolution (spec 4.14 `submit_oracle_resolution`, 5.6): an operator has the
//! service's oracle key vote SAFE or EXPLOIT on a coverage whose period ended. The program
//! decides what a vote does (one per oracle, the threshold, the 172,800 s timelock before
//! anyone finalises); the service checks what it can say clearly first, sends the vote paid by
//! the oracle key, re-reads the coverage and its vote into the store, and logs the action.

use narrative_sdk::pda;
use narrative_store::entities::shield_coverages;
use poem::http::StatusCode;
use serde_json::json;
use solana_signer::Signer;

use crate::chain::halts::ensure_running;
use crate::chain::refresh::read_through;
use crate::chain::send::send_and_confirm;
use crate::domain::admin::{log, Operator};
use crate::domain::shield::protocols;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{Component, ProtocolId, ShieldSide};

/// A vote the ledger accepted, and the coverage as re-read after it.
pub struct CoverVote {
    pub signature: String,
    pub oracle: String,
    pub coverage: shield_coverages::Model,
}

pub async fn resolve(
    state: &AppState,
    operator: &Operator,
    protocol_id: ProtocolId,
    vote: ShieldSide,
) -> Result<CoverVote, ApiError> {
    let db = state.store.db();
    ensure_running(db, Component::Shield).await?;
    let oracle = state.oracle.as_ref().ok_or_else(|| {
        ApiError::coded(
            StatusCode::SERVICE_UNAVAILABLE,
            "oracle_not_configured",
            "the service's oracle key (ORACLE_KEYPAIR) is not configured",
        )
    })?;
    let coverage_address = pda::shield::coverage(&protocol_id.0);
    // The index may lag: the coverage is read from the ledger first.
    let ledger = state.chain.ledger.as_ref();
    read_through(&state.store, ledger, &[coverage_address])
        .await
        .map_err(|e| ApiError::provider_unavailable("ledger_unavailable", "the ledger", &e))?;
    let coverage = protocols::get(state, protocol_id).await?;
    let now = state.now();
    if coverage.status != "active" {
        return Err(ApiError::coded(
            StatusCode::CONFLICT,
            "coverage_not_active",
            "this coverage is resolved, refunded or disputed already",
        )
        .with("status", coverage.status.as_str()));
    }
    if now < coverage.period_end {
        return Err(ApiError::coded(
            StatusCode::CONFLICT,
            "coverage_not_ended",
            "a coverage is resolved after its period ends",
        )
        .with("period_end", crate::clock::iso(coverage.period_end)));
    }
    let ix = narrative_sdk::shield::submit_oracle_resolution(
        oracle.pubkey(),
        &protocol_id.0,
        narrative_sdk::shield_vault::state::ShieldSide::from(vote).into(),
    );
    let signature = send_and_confirm(ledger, oracle, &[ix]).await.map_err(|e| {
        ApiError::coded(
            StatusCode::CONFLICT,
            "vote_refused",
            "the ledger refused the oracle's vote (already voted, or not an oracle of this program)",
        )
        .with("ledger_error", format!("{e:#}"))
    })?;
    let vote_address = pda::shield::oracle_vote(&protocol_id.0, &oracle.pubkey());
    read_through(&state.store, ledger, &[coverage_address, vote_address])
        .await
        .map_err(|e| ApiError::provider_unavailable("ledger_unavailable", "the ledger", &e))?;
    let coverage = protocols::get(state, protocol_id).await?;
    log(
        db,
        operator,
        "shield.resolve",
        &protocol_id.to_string(),
        json!({"vote": vote.as_str(), "signature": signature.to_string()}),
        now,
    )
    .await?;
    Ok(CoverVote {
        signature: signature.to_string(),
        oracle: oracle.pubkey().to_string(),
        coverage,
    })
}
