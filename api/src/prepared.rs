//! Prepare → sign → confirm (spec 5.2). A prepared transaction is stored with the message the
//! wallet must sign (fee payer = the wallet); confirm finds the signature on the ledger and
//! accepts it only if it landed without error, was paid by that wallet, and carries the prepared
//! instructions in order. Nothing is recorded until then, and a replayed signature changes
//! nothing.

use std::time::Duration;

use narrative_sdk::{Instruction, Pubkey};
use narrative_store::entities::prepared_transactions;
use poem::http::StatusCode;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, DatabaseTransaction,
    EntityTrait, QueryFilter, TransactionTrait,
};
use serde_json::Value;
use solana_signature::Signature;
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction::Transaction;
use uuid::Uuid;

use crate::error::ApiError;
use crate::ledger::{LandedInstruction, LandedTransaction, Ledger, LedgerError};
use crate::time::now;

/// The compute-budget program: wallets add its instructions (priority fees) before signing,
/// which changes nothing the service cares about.
const COMPUTE_BUDGET_PROGRAM: Pubkey =
    Pubkey::from_str_const("ComputeBudget111111111111111111111111111111");

/// A transaction ready for the wallet.
pub struct Prepared {
    pub id: String,
    /// Base64 wire bytes, unsigned (spec 4.0 `transaction`).
    pub transaction: String,
    pub blockhash: String,
}

/// Builds the wallet's transaction over `instructions`, stores it as `kind` with `params`
/// (what confirm will record), and returns it.
pub async fn prepare(
    db: &impl ConnectionTrait,
    ledger: &dyn Ledger,
    kind: &str,
    wallet: &Pubkey,
    instructions: &[Instruction],
    params: Value,
) -> Result<Prepared, ApiError> {
    let blockhash = ledger.latest_blockhash().await.map_err(ledger_error)?;
    let tx = narrative_sdk::tx::unsigned_transaction(instructions, wallet, blockhash);
    let message = bincode::serialize(&tx.message).map_err(ApiError::internal)?;
    let id = Uuid::new_v4().to_string();
    prepared_transactions::Entity::insert(prepared_transactions::ActiveModel {
        id: Set(id.clone()),
        kind: Set(kind.to_owned()),
        wallet: Set(wallet.to_string()),
        message: Set(message),
        params: Set(params),
        status: Set("prepared".into()),
        signature: Set(None),
        error: Set(None),
        created_at: Set(now()),
        confirmed_at: Set(None),
    })
    .exec_without_returning(db)
    .await
    .map_err(ApiError::internal)?;
    Ok(Prepared {
        id,
        transaction: narrative_sdk::tx::to_base64(&tx),
        blockhash: blockhash.to_string(),
    })
}

/// What a confirm request found.
pub enum Confirmation {
    /// The signature landed as prepared and nothing is recorded yet: record it with
    /// [`mark_confirmed`] in the same database transaction as the follow-up rows.
    Fresh {
        prepared: prepared_transactions::Model,
        landed: LandedTransaction,
    },
    /// This prepared transaction was already confirmed with this signature.
    Replay(prepared_transactions::Model),
}

/// How long confirm waits for a signature the ledger does not know yet.
#[derive(Debug, Clone, Copy)]
pub struct ConfirmWait {
    pub attempts: u32,
    pub interval: Duration,
}

/// Checks `signature` against prepared transaction `id` of `kind`; records nothing.
pub async fn verify(
    db: &impl ConnectionTrait,
    ledger: &dyn Ledger,
    wait: ConfirmWait,
    kind: &str,
    id: &str,
    signature: &str,
) -> Result<Confirmation, ApiError> {
    let parsed = parse_signature(signature)?;
    match open(db, kind, id, signature).await? {
        Opened::Replay(prepared) => Ok(Confirmation::Replay(prepared)),
        Opened::Unconfirmed(prepared) => {
            // The ledger is asked only once the store has nothing to answer from.
            let landed = landed(ledger, wait, &parsed).await?;
            accept(prepared, landed)
        }
    }
}

/// [`verify`] against the service's store and ledger: what every confirm route does first.
pub async fn verify_request(
    state: &crate::state::AppState,
    kind: &str,
    id: &str,
    signature: &str,
) -> Result<Confirmation, ApiError> {
    verify(
        state.store.db(),
        state.ledger.as_ref(),
        state.confirm_wait,
        kind,
        id.trim(),
        signature.trim(),
    )
    .await
}

/// [`verify`] for a caller that already fetched the landed transaction of `signature`.
pub async fn verify_landed(
    db: &impl ConnectionTrait,
    kind: &str,
    id: &str,
    signature: &str,
    landed: LandedTransaction,
) -> Result<Confirmation, ApiError> {
    match open(db, kind, id, signature).await? {
        Opened::Replay(prepared) => Ok(Confirmation::Replay(prepared)),
        Opened::Unconfirmed(prepared) => accept(prepared, landed),
    }
}

pub fn parse_signature(signature: &str) -> Result<Signature, ApiError> {
    signature
        .parse()
        .map_err(|_| ApiError::validation("signature must be a base58 transaction signature"))
}

enum Opened {
    Replay(prepared_transactions::Model),
    Unconfirmed(prepared_transactions::Model),
}

/// The prepared transaction, unless it was confirmed with another signature or `signature`
/// confirmed another one.
async fn open(
    db: &impl ConnectionTrait,
    kind: &str,
    id: &str,
    signature: &str,
) -> Result<Opened, ApiError> {
    crate::validate::uuid("prepared_id", id)?;
    let prepared = prepared_transactions::Entity::find_by_id(id.to_owned())
        .filter(prepared_transactions::Column::Kind.eq(kind))
        .one(db)
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| ApiError::not_found("prepared transaction"))?;
    match prepared.signature.as_deref() {
        Some(stored) if stored == signature => return Ok(Opened::Replay(prepared)),
        Some(_) => {
            return Err(ApiError::coded(
                StatusCode::CONFLICT,
                "already_confirmed",
                "this prepared transaction was confirmed with another signature",
            ))
        }
        None => {}
    }
    let used = prepared_transactions::Entity::find()
        .filter(prepared_transactions::Column::Signature.eq(signature))
        .one(db)
        .await
        .map_err(ApiError::internal)?;
    if used.is_some() {
        return Err(ApiError::coded(
            StatusCode::CONFLICT,
            "signature_already_used",
            "this signature confirmed another prepared transaction",
        ));
    }
    Ok(Opened::Unconfirmed(prepared))
}

/// Accepts `landed` for `prepared`: no error, paid by its wallet, its instructions in order.
fn accept(
    prepared: prepared_transactions::Model,
    landed: LandedTransaction,
) -> Result<Confirmation, ApiError> {
    if let Some(error) = &landed.error {
        return Err(ApiError::coded(
            StatusCode::BAD_REQUEST,
            "transaction_failed",
            "the transaction landed with an error; nothing was recorded",
        )
        .with("ledger_error", error.as_str()));
    }
    let wallet: Pubkey = prepared.wallet.parse().map_err(ApiError::internal)?;
    let expected = prepared_instructions(&prepared.message)?;
    if landed.fee_payer != wallet || !carries_in_order(&landed.instructions, &expected) {
        return Err(ApiError::coded(
            StatusCode::BAD_REQUEST,
            "transaction_mismatch",
            "the signed transaction is not the prepared one",
        ));
    }
    Ok(Confirmation::Fresh { prepared, landed })
}

/// Marks `id` confirmed by `signature`. `false` when another request confirmed it first
/// (the caller then answers as a replay, or a conflict, after reading it again).
pub async fn mark_confirmed(
    db: &impl ConnectionTrait,
    id: &str,
    signature: &str,
) -> Result<bool, ApiError> {
    use prepared_transactions::{Column, Entity};
    let updated = Entity::update_many()
        .col_expr(Column::Status, "confirmed".into())
        .col_expr(Column::Signature, Some(signature.to_owned()).into())
        .col_expr(Column::ConfirmedAt, Some(now()).into())
        .filter(Column::Id.eq(id))
        .filter(Column::Signature.is_null())
        .exec(db)
        .await
        .map_err(ApiError::internal)?;
    Ok(updated.rows_affected == 1)
}

/// Records a fresh confirmation in one database transaction: marks prepared transaction `id`
/// confirmed by `signature`, lets `record` write the caller's rows, and queues the re-read of
/// the `changed` accounts into the store. `Ok(false)`, with nothing written, when another
/// request confirmed it first: the caller answers as that request did (verify again, a
/// replay).
pub async fn record_confirmed(
    db: &DatabaseConnection,
    jobs_wake: &tokio::sync::Notify,
    id: &str,
    signature: &str,
    changed: &[Pubkey],
    record: impl AsyncFnOnce(&DatabaseTransaction) -> Result<(), ApiError>,
) -> Result<bool, ApiError> {
    let txn = db.begin().await.map_err(ApiError::internal)?;
    if !mark_confirmed(&txn, id, signature).await? {
        txn.rollback().await.map_err(ApiError::internal)?;
        return Ok(false);
    }
    record(&txn).await?;
    if !changed.is_empty() {
        crate::jobs::enqueue(
            &txn,
            crate::followups::REFRESH_ACCOUNTS,
            crate::followups::refresh_payload(changed),
            now(),
        )
        .await
        .map_err(ApiError::internal)?;
    }
    txn.commit().await.map_err(ApiError::internal)?;
    jobs_wake.notify_one();
    Ok(true)
}

/// The landed transaction, waiting up to `wait` for it to reach `confirmed`.
pub async fn landed(
    ledger: &dyn Ledger,
    wait: ConfirmWait,
    signature: &Signature,
) -> Result<LandedTransaction, ApiError> {
    for attempt in 0..wait.attempts.max(1) {
        // Poll the cheap status; fetch the whole transaction once it is confirmed.
        if ledger
            .signature_status(signature)
            .await
            .map_err(ledger_error)?
            .is_some()
        {
            if let Some(landed) = ledger.transaction(signature).await.map_err(ledger_error)? {
                return Ok(landed);
            }
        }
        if attempt + 1 < wait.attempts {
            tokio::time::sleep(wait.interval).await;
        }
    }
    let mut pending = ApiError::coded(
        StatusCode::SERVICE_UNAVAILABLE,
        "transaction_pending",
        "the signature is not confirmed on the ledger yet; retry shortly",
    );
    pending.retry_after = Some(2);
    Err(pending)
}

pub fn ledger_error(e: LedgerError) -> ApiError {
    tracing::warn!(error = %e, "ledger call failed");
    ApiError::coded(
        StatusCode::SERVICE_UNAVAILABLE,
        "ledger_unavailable",
        "the ledger could not be reached; retry shortly",
    )
}

/// The instructions of a stored prepared message.
fn prepared_instructions(message: &[u8]) -> Result<Vec<LandedInstruction>, ApiError> {
    let message: solana_message::Message =
        bincode::deserialize(message).map_err(ApiError::internal)?;
    let tx = VersionedTransaction::from(Transaction::new_unsigned(message));
    Ok(LandedTransaction::new(0, None, &tx)
        .map_err(ApiError::internal)?
        .instructions)
}

/// Whether `landed`, once compute-budget instructions are set aside, is exactly `expected`.
fn carries_in_order(landed: &[LandedInstruction], expected: &[LandedInstruction]) -> bool {
    landed
        .iter()
        .filter(|ix| ix.program != COMPUTE_BUDGET_PROGRAM)
        .eq(expected.iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ix(program: Pubkey, data: u8) -> LandedInstruction {
        LandedInstruction {
            program,
            accounts: vec![Pubkey::new_from_array([7; 32])],
            data: vec![data],
        }
    }

    #[test]
    fn compute_budget_instructions_may_be_added_but_nothing_else() {
        let program = Pubkey::new_unique();
        let expected = vec![ix(program, 1), ix(program, 2)];
        let budget = ix(COMPUTE_BUDGET_PROGRAM, 9);
        assert!(carries_in_order(&expected, &expected));
        assert!(carries_in_order(
            &[budget.clone(), ix(program, 1), ix(program, 2)],
            &expected
        ));
        assert!(!carries_in_order(
            &[ix(program, 2), ix(program, 1)],
            &expected
        ));
        assert!(!carries_in_order(&[ix(program, 1)], &expected));
        assert!(!carries_in_order(
            &[ix(program, 1), ix(program, 2), ix(Pubkey::new_unique(), 3)],
            &expected
        ));
        assert!(!carries_in_order(
            &[ix(program, 1), ix(program, 3)],
            &expected
        ));
    }

    #[test]
    fn a_stored_message_gives_back_its_instructions() {
        let wallet = Pubkey::new_unique();
        let back = narrative_sdk::shield::back_shield(
            wallet,
            &[3; 32],
            narrative_sdk::shield_vault::state::ShieldSide::Safe,
            100_000_000,
        );
        let tx = narrative_sdk::tx::unsigned_transaction(
            std::slice::from_ref(&back),
            &wallet,
            solana_hash::Hash::new_from_array([1; 32]),
        );
        let stored = bincode::serialize(&tx.message).unwrap();
        let instructions = prepared_instructions(&stored).unwrap();
        assert_eq!(instructions.len(), 1);
        assert_eq!(instructions[0].program, back.program_id);
        assert_eq!(instructions[0].data, back.data);
        let accounts: Vec<Pubkey> = back.accounts.iter().map(|a| a.pubkey).collect();
        assert_eq!(instructions[0].accounts, accounts);
    }
}
