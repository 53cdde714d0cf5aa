//! `POST /v1/markets` (spec 4.13): a native (`seed`) binary market, fee-gated. In order: the
//! human-verification token (400 `TURNSTILE_FAILED`), the fee transaction on the ledger paying
//! the treasury at least `BINARY_MARKET_FEE_SOL` from the creator (400
//! `market_fee_missing_treasury`), the creator's signature over the request (401
//! `invalid_signature`). Then a prepared `create_market` (with the seed backings for a Yield
//! market) for the creator to sign, confirmed like every money move: a Yield market opens at
//! once, a Classic one waits for admin review.

// `back_market`'s minimum for a SOL market (spec 8: 0.01 SOL).
use narrative_sdk::binary_vault::constants::MIN_BACKING_LAMPORTS as MIN_SEED_LAMPORTS;
use narrative_sdk::binary_vault::instructions::CreateMarketArgs;
use narrative_sdk::binary_vault::state::{MarketSource, MarketVariant, Side};
use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::{market_creations, prepared_transactions};
use poem::http::StatusCode;
use poem_openapi::Object;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, TransactionTrait};
use serde_json::json;

use crate::error::ApiError;
use crate::prepared::{self, Confirmation};
use crate::signature::{create_market_message, verify};
use crate::state::AppState;
use crate::system::ensure_running;
use crate::time::{iso, now};
use crate::validate::{lamports, wallet};

pub const KIND: &str = "market_create";
const MAX_QUESTION_CHARS: usize = 500;
/// A market needs time to be backed before its deadline.
const MIN_DEADLINE_LEAD_SECS: i64 = 3_600;

#[derive(Object)]
pub struct CreateMarket {
    /// Human-verification token (Turnstile).
    pub cf_token: Option<String>,
    /// Base58 ed25519 signature by the creator of the canonical request message (see README).
    pub signature: Option<String>,
    /// Signature of the confirmed fee payment to the treasury.
    pub fee_tx_signature: Option<String>,
    /// `classic` or `yield`.
    pub variant: String,
    /// A falsifiable YES/NO question.
    pub question: String,
    /// Unix seconds.
    pub deadline: i64,
    /// Seed liquidity in SOL per side (Yield markets; an ordinary backing by the creator).
    pub seed_yes: Option<f64>,
    pub seed_no: Option<f64>,
    /// The creator's wallet; the fee transaction's payer when omitted.
    pub creator: Option<String>,
}

#[derive(Object)]
pub struct MarketPrepared {
    pub ok: bool,
    /// The market's UUID (its on-chain `market_id` is derived from it).
    pub market_id: String,
    pub variant: String,
    pub question: String,
    pub deadline: String,
    pub creator: String,
    /// `ready_to_confirm`: sign and send `transaction`, then `POST /v1/markets/confirm`.
    pub status: String,
    pub transaction: String,
    pub prepared_id: String,
    pub fee_lamports: u64,
}

#[derive(Object)]
pub struct MarketConfirmRequest {
    pub prepared_id: String,
    pub signature: String,
}

#[derive(Object)]
pub struct MarketConfirmed {
    pub ok: bool,
    pub market_id: String,
    /// `open` (Yield) or `pending_review` (Classic, until an admin approves it).
    pub status: String,
    pub address: String,
    pub signature: String,
}

fn fee_missing(why: &str) -> ApiError {
    ApiError::coded(
        StatusCode::BAD_REQUEST,
        "market_fee_missing_treasury",
        format!("creation fee not verified: {why}"),
    )
}

fn seed(field: &str, sol: Option<f64>) -> Result<u64, ApiError> {
    match sol {
        None | Some(0.0) => Ok(0),
        Some(v) => {
            let amount = lamports(field, v)?;
            if amount < MIN_SEED_LAMPORTS {
                return Err(ApiError::validation(format!(
                    "{field} must be at least 0.01 SOL"
                )));
            }
            Ok(amount)
        }
    }
}

pub async fn create(
    state: &AppState,
    body: CreateMarket,
    client_ip: Option<std::net::IpAddr>,
) -> Result<MarketPrepared, ApiError> {
    let db = state.store.db();
    ensure_running(db, "markets").await?;
    let variant = match body.variant.trim().to_ascii_lowercase().as_str() {
        "classic" => MarketVariant::Classic,
        "yield" => MarketVariant::Yield,
        _ => return Err(ApiError::validation("variant must be classic or yield")),
    };
    let variant_name = if variant == MarketVariant::Classic {
        "classic"
    } else {
        "yield"
    };
    let question = body.question.trim().to_owned();
    if question.is_empty() || question.chars().count() > MAX_QUESTION_CHARS {
        return Err(ApiError::validation(format!(
            "question required, at most {MAX_QUESTION_CHARS} characters"
        )));
    }
    if body.deadline < now() + MIN_DEADLINE_LEAD_SECS {
        return Err(ApiError::validation(
            "deadline must be at least one hour ahead",
        ));
    }
    let seed_yes = seed("seed_yes", body.seed_yes)?;
    let seed_no = seed("seed_no", body.seed_no)?;
    if variant == MarketVariant::Classic && seed_yes + seed_no > 0 {
        return Err(ApiError::validation(
            "a classic market opens after review; seed it then",
        ));
    }

    crate::human::require_human(state.human.as_ref(), body.cf_token.as_deref(), client_ip).await?;

    let treasury = state.treasury("market creation")?;
    let fee_signature = body
        .fee_tx_signature
        .as_deref()
        .map(str::trim)
        .unwrap_or_default();
    let parsed: solana_signature::Signature = fee_signature
        .parse()
        .map_err(|_| fee_missing("fee_tx_signature missing or malformed"))?;
    let landed = match prepared::landed(state.ledger.as_ref(), state.confirm_wait, &parsed).await {
        Ok(landed) => landed,
        // Not on the ledger after the wait: for a fee, that is an unverified payment.
        Err(e) if e.code() == "transaction_pending" => {
            return Err(fee_missing("the fee transaction is not on the ledger"))
        }
        Err(e) => return Err(e),
    };
    if landed.error.is_some() {
        return Err(fee_missing("the fee transaction failed"));
    }
    let creator = match body.creator.as_deref().map(str::trim) {
        Some(c) if !c.is_empty() => wallet("creator", c)?,
        _ => landed.fee_payer,
    };

    let message = create_market_message(
        variant_name,
        &question,
        body.deadline,
        seed_yes,
        seed_no,
        fee_signature,
    );
    let signed = body
        .signature
        .as_deref()
        .is_some_and(|s| verify(&creator, message.as_bytes(), s));
    if !signed {
        return Err(ApiError::coded(
            StatusCode::UNAUTHORIZED,
            "invalid_signature",
            "signature is not the creator's signature of the request",
        ));
    }
    let paid = landed.transferred(&creator, &treasury);
    if paid < state.binary_market_fee_lamports {
        return Err(fee_missing("it does not pay the treasury the creation fee")
            .with("required_lamports", state.binary_market_fee_lamports)
            .with("paid_lamports", paid));
    }

    let market_uuid = uuid::Uuid::new_v4();
    let market_id = narrative_sdk::market_id::market_id_from_uuid(&market_uuid);
    let mut instructions = vec![narrative_sdk::binary::create_market(
        creator,
        None,
        CreateMarketArgs {
            market_id,
            variant,
            source: MarketSource::Seed,
            deadline: body.deadline,
        },
    )];
    for (side, amount) in [(Side::Yes, seed_yes), (Side::No, seed_no)] {
        if amount > 0 {
            instructions.push(narrative_sdk::binary::back_market(
                creator, &market_id, side, amount,
            ));
        }
    }
    let creation_id = uuid::Uuid::new_v4().to_string();
    let txn = db.begin().await?;
    // One creation per fee payment: the unique signature refuses a second use.
    let inserted = market_creations::Entity::insert(market_creations::ActiveModel {
        id: Set(creation_id.clone()),
        market_id: Set(market_uuid.to_string()),
        question: Set(question.clone()),
        variant: Set(variant_name.into()),
        deadline: Set(body.deadline),
        creator: Set(creator.to_string()),
        seed_yes: Set(seed_yes as i64),
        seed_no: Set(seed_no as i64),
        fee_tx_signature: Set(fee_signature.to_owned()),
        source: Set("seed".into()),
        status: Set("awaiting_signature".into()),
        created_at: Set(now()),
    })
    .on_conflict(
        OnConflict::column(market_creations::Column::FeeTxSignature)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(&txn)
    .await?;
    if inserted == 0 {
        return Err(ApiError::coded(
            StatusCode::CONFLICT,
            "fee_already_used",
            "this fee payment already created a market",
        ));
    }
    let ready = prepared::prepare(
        &txn,
        state.ledger.as_ref(),
        KIND,
        &creator,
        &instructions,
        json!({ "creation_id": creation_id }),
    )
    .await?;
    txn.commit().await?;
    Ok(MarketPrepared {
        ok: true,
        market_id: market_uuid.to_string(),
        variant: variant_name.into(),
        question,
        deadline: iso(body.deadline),
        creator: creator.to_string(),
        status: "ready_to_confirm".into(),
        transaction: ready.transaction,
        prepared_id: ready.id,
        fee_lamports: state.binary_market_fee_lamports,
    })
}

pub async fn confirm(
    state: &AppState,
    body: MarketConfirmRequest,
) -> Result<MarketConfirmed, ApiError> {
    let db = state.store.db();
    let found = prepared::verify_request(state, KIND, &body.prepared_id, &body.signature).await?;
    let prepared = match found {
        Confirmation::Replay(prepared) => return answer(state, &prepared).await,
        Confirmation::Fresh { prepared, .. } => prepared,
    };
    let creation_id = prepared.params["creation_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let creation = market_creations::Entity::find_by_id(creation_id.clone())
        .one(db)
        .await?
        .ok_or_else(|| ApiError::internal("prepared market without its creation"))?;
    let status = if creation.variant == "classic" {
        "pending_review"
    } else {
        "open"
    };
    let market_id = narrative_sdk::market_id::market_id_from_str(&creation.market_id)
        .map_err(ApiError::internal)?;
    let signature = body.signature.trim().to_owned();
    let market: Pubkey = pda::binary::market(&market_id);
    let recorded = prepared::record_confirmed(
        db,
        &state.jobs_wake,
        &prepared.id,
        &signature,
        &[market],
        async |txn| {
            market_creations::Entity::update_many()
                .col_expr(market_creations::Column::Status, status.into())
                .filter(market_creations::Column::Id.eq(creation_id))
                .exec(txn)
                .await?;
            Ok(())
        },
    )
    .await?;
    if !recorded {
        return Box::pin(confirm(state, body)).await;
    }
    let prepared = prepared_transactions::Entity::find_by_id(prepared.id)
        .one(db)
        .await?
        .ok_or_else(|| ApiError::not_found("prepared transaction"))?;
    answer(state, &prepared).await
}

async fn answer(
    state: &AppState,
    prepared: &prepared_transactions::Model,
) -> Result<MarketConfirmed, ApiError> {
    let creation_id = prepared.params["creation_id"].as_str().unwrap_or_default();
    let creation = market_creations::Entity::find_by_id(creation_id.to_owned())
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::internal("prepared market without its creation"))?;
    let market_id = narrative_sdk::market_id::market_id_from_str(&creation.market_id)
        .map_err(ApiError::internal)?;
    Ok(MarketConfirmed {
        ok: true,
        market_id: creation.market_id,
        status: creation.status,
        address: pda::binary::market(&market_id).to_string(),
        signature: prepared.signature.clone().unwrap_or_default(),
    })
}
