//! `POST /v1/markets` (spec 4.13): a native (`seed`) binary market, fee-gated. In order: the
//! halt flag (503), the request's own bounds (400: a deadline one hour to 730 days ahead, no
//! seeds on a classic market), the human-verification token (400 `TURNSTILE_FAILED`), the fee
//! transaction on the ledger (400 `market_fee_missing_treasury` when it is missing or failed),
//! the creator's signature over the request (401 `invalid_signature`: a [`wallet_proof`]
//! statement, fresh, and used up with the creation it allows), then what the fee
//! transaction paid the treasury from the creator: at least `BINARY_MARKET_FEE_SOL` (400
//! `market_fee_missing_treasury`). Then a prepared `create_market` (with the seed backings of a Yield
//! market) for the creator to sign, confirmed like every money move: a Yield market opens at
//! once, a Classic one waits for admin review.

use std::net::IpAddr;

use narrative_sdk::binary_vault::constants::{MAX_MARKET_DURATION_SECS, MIN_BACKING_LAMPORTS};
use narrative_sdk::binary_vault::instructions::CreateMarketArgs;
use narrative_sdk::binary_vault::state::{MarketSource, MarketVariant, Side};
use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::market_creations;
use poem::http::StatusCode;
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait,
    QueryFilter,
};
use serde::{Deserialize, Serialize};

use crate::chain::{MoneyFlow, Prepared, Unsigned};
use crate::domain::human::require_human;
use crate::domain::system::ensure_running;
use crate::domain::wallet_proof::{self, Proof, Statement};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{
    enum_value, Base58Signature, Component, MarketRef, PreparedId, SolOrZero, UnixSeconds, Wallet,
};

/// A creation whose fee is paid and whose `create_market` has not been confirmed.
const AWAITING_SIGNATURE: &str = "awaiting_signature";
/// The programs of this service: a fee transaction calling one paid for something else.
const SERVICE_PROGRAMS: [Pubkey; 3] = [
    narrative_sdk::ids::BINARY_VAULT,
    narrative_sdk::ids::CRUCIBLE_POOL,
    narrative_sdk::ids::SHIELD_VAULT,
];

/// A market needs time to be backed before its deadline.
const MIN_DEADLINE_LEAD_SECS: i64 = 3_600;
/// binary_vault refuses a deadline more than 731 days after the slot that creates the market;
/// a day less here, so that a transaction signed later still lands (a refused one would leave
/// the fee tied to a market that cannot exist).
const MAX_DEADLINE_LEAD_SECS: i64 = MAX_MARKET_DURATION_SECS - 86_400;

enum_value!(
    /// A market's variant, fixed at creation.
    Variant,
    "market_variant",
    "`classic` (zero-sum, opens after admin review) or `yield` (opens at once; losers keep 65 %).",
    [Classic => "classic", Yield => "yield"]
);

/// A seed: 0 (none), or an ordinary backing of at least 0.01 SOL.
pub type Seed = SolOrZero<MIN_BACKING_LAMPORTS>;

pub struct CreateMarket {
    pub cf_token: Option<String>,
    pub signature: Option<Base58Signature>,
    /// When the creator signed.
    pub issued_at: Option<UnixSeconds>,
    pub fee_tx_signature: Option<Base58Signature>,
    pub variant: Variant,
    pub question: String,
    pub deadline: UnixSeconds,
    pub seed_yes: u64,
    pub seed_no: u64,
    pub creator: Option<Wallet>,
}

pub struct MarketPrepared {
    pub market_id: uuid::Uuid,
    pub creator: Wallet,
    pub unsigned: Unsigned,
    pub fee_lamports: u64,
}

/// What prepare stores for confirm. Creations prepared before the market id was stored here
/// have none; their market is found through the creation row, and refreshed by the indexer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub creation_id: String,
    #[serde(default)]
    pub market_id: Option<MarketRef>,
}

pub struct Confirmed {
    pub creation: market_creations::Model,
    /// The market account.
    pub address: Pubkey,
    pub signature: Base58Signature,
}

pub struct MarketCreation;

/// What a creator signs for `POST /v1/markets`, with its issued-at time: every field that
/// shapes the market,
/// `narrative-market-service:create-market:<variant>:<deadline>:<seed_yes_lamports>:`
/// `<seed_no_lamports>:<fee_tx_signature>:<question>:issued-at:<secs>`. The question is the
/// only free text and comes last: the fields before it hold no `:`, and the issued-at time
/// after it is digits, so no question can be read as other fields.
pub fn statement(request: &CreateMarket, fee_tx_signature: &Base58Signature) -> Statement {
    Statement::new("create-market")
        .field(request.variant)
        .field(request.deadline.get())
        .field(request.seed_yes)
        .field(request.seed_no)
        .field(fee_tx_signature)
        .field(&request.question)
}

fn fee_missing(why: &str) -> ApiError {
    ApiError::coded(
        StatusCode::BAD_REQUEST,
        "market_fee_missing_treasury",
        format!("creation fee not verified: {why}"),
    )
}

pub async fn create(
    state: &AppState,
    request: CreateMarket,
    client_ip: Option<IpAddr>,
) -> Result<MarketPrepared, ApiError> {
    let db = state.store.db();
    ensure_running(db, Component::Markets).await?;
    let lead = request.deadline.get() - state.now();
    if lead < MIN_DEADLINE_LEAD_SECS {
        return Err(ApiError::validation(
            "deadline must be at least one hour ahead",
        ));
    }
    if lead > MAX_DEADLINE_LEAD_SECS {
        return Err(ApiError::validation(
            "deadline must be at most 730 days ahead",
        ));
    }
    if request.variant == Variant::Classic && (request.seed_yes > 0 || request.seed_no > 0) {
        return Err(ApiError::validation(
            "a classic market opens after review; seed it then",
        ));
    }

    require_human(state.human.as_ref(), request.cf_token.as_deref(), client_ip).await?;

    let treasury = state.treasury("market creation")?;
    let fee_signature = request
        .fee_tx_signature
        .ok_or_else(|| fee_missing("fee_tx_signature missing"))?;
    // Not on the ledger after the wait: for a fee, that is an unverified payment.
    let landed = state
        .chain
        .find_landed(&fee_signature)
        .await?
        .ok_or_else(|| fee_missing("the fee transaction is not on the ledger"))?;
    if landed.error.is_some() {
        return Err(fee_missing("the fee transaction failed"));
    }
    // A transaction calling this service's programs paid for something else (a narrative's
    // mint sends the treasury its share beside them): one payment buys one thing.
    if landed
        .instructions
        .iter()
        .any(|ix| SERVICE_PROGRAMS.contains(&ix.program))
    {
        return Err(fee_missing(
            "that transaction pays for something else (it calls this service's programs)",
        ));
    }
    let creator = request
        .creator
        .unwrap_or_else(|| Wallet::from(landed.fee_payer));
    let statement = statement(&request, &fee_signature);
    let (Some(signature), Some(issued_at)) = (&request.signature, request.issued_at) else {
        return Err(ApiError::invalid_signature(format!(
            "signature and issued_at are the creator's signature of `{}`",
            statement.template(&state.proof_domain)
        )));
    };
    let proof = Proof {
        wallet: &creator,
        signature,
        issued_at,
    };
    // Checked here; used up with the creation it allows.
    wallet_proof::verify(&state.proof_domain, &statement, proof, state.now())?;
    let paid = landed.transferred(&creator.pubkey(), &treasury);
    if paid < state.binary_market_fee_lamports {
        return Err(fee_missing("it does not pay the treasury the creation fee")
            .with("required_lamports", state.binary_market_fee_lamports)
            .with("paid_lamports", paid));
    }

    landed_unconfirmed(state, &fee_signature).await?;
    let blockhash = state.chain.blockhash().await?;
    let txn = state.store.begin_write().await?;
    wallet_proof::consume(&txn, &statement, proof, state.now()).await?;
    let creation = MarketCreationRow {
        id: uuid::Uuid::new_v4().to_string(),
        market_id: uuid::Uuid::new_v4(),
    };
    // One creation per fee payment: the unique signature refuses a second use, unless it is
    // the same creation asked again before it landed.
    let inserted = market_creations::Entity::insert(market_creations::ActiveModel {
        id: Set(creation.id.clone()),
        market_id: Set(creation.market_id.to_string()),
        question: Set(request.question.clone()),
        variant: Set(request.variant.to_string()),
        deadline: Set(request.deadline.get()),
        creator: Set(creator.to_string()),
        seed_yes: Set(i64::try_from(request.seed_yes).map_err(ApiError::internal)?),
        seed_no: Set(i64::try_from(request.seed_no).map_err(ApiError::internal)?),
        fee_tx_signature: Set(fee_signature.to_string()),
        source: Set("seed".into()),
        status: Set(AWAITING_SIGNATURE.into()),
        created_at: Set(state.now()),
    })
    .on_conflict(
        OnConflict::column(market_creations::Column::FeeTxSignature)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(&txn)
    .await?;
    let creation = if inserted == 1 {
        creation
    } else {
        asked_again(&txn, &fee_signature, &request, &creator).await?
    };
    let market_id = narrative_sdk::market_id::market_id_from_uuid(&creation.market_id);
    let instructions = instructions(&request, &creator, market_id);
    let unsigned = state
        .chain
        .prepare_with(
            &txn,
            blockhash,
            &MarketCreation,
            &creator,
            &instructions,
            &Params {
                creation_id: creation.id,
                market_id: Some(MarketRef::from(market_id)),
            },
        )
        .await?;
    txn.commit().await?;
    Ok(MarketPrepared {
        market_id: creation.market_id,
        creator,
        unsigned,
        fee_lamports: state.binary_market_fee_lamports,
    })
}

/// 409 when the creation `fee_signature` paid for is not confirmed but its market is already on
/// the ledger: its transaction landed and only its confirm is missing, and a fresh
/// `create_market` could only fail (the market's address is taken) at the wallet's expense.
/// Read before the write transaction, which must not wait on the node.
async fn landed_unconfirmed(
    state: &AppState,
    fee_signature: &Base58Signature,
) -> Result<(), ApiError> {
    let paid_for = market_creations::Entity::find()
        .filter(market_creations::Column::FeeTxSignature.eq(fee_signature.to_string()))
        .filter(market_creations::Column::Status.eq(AWAITING_SIGNATURE))
        .one(state.store.db())
        .await?;
    let Some(creation) = paid_for else {
        return Ok(());
    };
    let market: MarketRef = creation.market_id.parse().map_err(ApiError::internal)?;
    let address = pda::binary::market(&market.market_id());
    let (_, found) = state.chain.ledger.accounts(&[address]).await?;
    if found.first().is_some_and(Option::is_some) {
        return Err(ApiError::coded(
            StatusCode::CONFLICT,
            "fee_already_used",
            "this fee's market is on the ledger already: confirm the transaction that created \
             it (POST /v1/markets/confirm)",
        )
        .with("market_id", creation.market_id));
    }
    Ok(())
}

/// A creation's ids: new, or those of the creation asked again.
struct MarketCreationRow {
    id: String,
    market_id: uuid::Uuid,
}

/// The creation `fee_signature` paid for, when `request` asks for it again: by its creator,
/// every field the same, and not confirmed (its transaction's blockhash lapsed before the
/// wallet sent it, or it was never sent; one that landed unconfirmed was answered before, by
/// [`landed_unconfirmed`]). A fresh transaction is then prepared for the same
/// market; whichever one lands creates it (the market's address is taken by the first).
/// Anything else is a second use of the payment: 409 `fee_already_used`.
async fn asked_again(
    txn: &DatabaseTransaction,
    fee_signature: &Base58Signature,
    request: &CreateMarket,
    creator: &Wallet,
) -> Result<MarketCreationRow, ApiError> {
    let paid_for = market_creations::Entity::find()
        .filter(market_creations::Column::FeeTxSignature.eq(fee_signature.to_string()))
        .one(txn)
        .await?;
    let same = paid_for.filter(|c| {
        c.status == AWAITING_SIGNATURE
            && c.creator == creator.to_string()
            && c.variant == request.variant.as_str()
            && c.question == request.question
            && c.deadline == request.deadline.get()
            && u64::try_from(c.seed_yes) == Ok(request.seed_yes)
            && u64::try_from(c.seed_no) == Ok(request.seed_no)
    });
    match same {
        Some(creation) => Ok(MarketCreationRow {
            market_id: creation.market_id.parse().map_err(ApiError::internal)?,
            id: creation.id,
        }),
        None => Err(ApiError::coded(
            StatusCode::CONFLICT,
            "fee_already_used",
            "this fee payment already created a market",
        )),
    }
}

/// `create_market` for `request`'s market, then its seed backings (a Yield market's).
fn instructions(
    request: &CreateMarket,
    creator: &Wallet,
    market_id: [u8; 32],
) -> Vec<narrative_sdk::Instruction> {
    let variant = match request.variant {
        Variant::Classic => MarketVariant::Classic,
        Variant::Yield => MarketVariant::Yield,
    };
    let mut instructions = vec![narrative_sdk::binary::create_market(
        creator.pubkey(),
        None,
        CreateMarketArgs {
            market_id,
            variant,
            source: MarketSource::Seed,
            deadline: request.deadline.get(),
        },
    )];
    for (side, amount) in [(Side::Yes, request.seed_yes), (Side::No, request.seed_no)] {
        if amount > 0 {
            instructions.push(narrative_sdk::binary::back_market(
                creator.pubkey(),
                &market_id,
                side,
                amount,
            ));
        }
    }
    instructions
}

pub async fn confirm(
    state: &AppState,
    prepared_id: PreparedId,
    signature: Base58Signature,
) -> Result<Confirmed, ApiError> {
    state
        .chain
        .confirm(&MarketCreation, prepared_id, signature)
        .await
}

/// Where a confirmed Classic creation waits until an operator reviews it
/// ([`crate::domain::admin::review`]).
pub const PENDING_REVIEW: &str = "pending_review";

/// Creation `id`, which a prepared transaction or a review already found: its absence is the
/// service's fault.
pub async fn stored(
    db: &impl sea_orm::ConnectionTrait,
    id: &str,
) -> Result<market_creations::Model, ApiError> {
    market_creations::Entity::find_by_id(id.to_owned())
        .one(db)
        .await?
        .ok_or_else(|| ApiError::internal("a market creation went missing"))
}

#[async_trait::async_trait]
impl MoneyFlow for MarketCreation {
    const KIND: &'static str = "market_create";
    type Params = Params;
    type Confirmed = Confirmed;

    fn component(&self, _: &Self::Params) -> Component {
        Component::Markets
    }

    fn changed(&self, prepared: &Prepared<Params>) -> Vec<Pubkey> {
        prepared
            .params
            .market_id
            .iter()
            .map(|market| pda::binary::market(&market.market_id()))
            .collect()
    }

    async fn record(
        &self,
        txn: &DatabaseTransaction,
        prepared: &Prepared<Params>,
        _: &Base58Signature,
        _: i64,
    ) -> Result<(), ApiError> {
        let creation = stored(txn, &prepared.params.creation_id).await?;
        let status = if creation.variant == Variant::Classic.as_str() {
            PENDING_REVIEW
        } else {
            "open"
        };
        market_creations::Entity::update_many()
            .col_expr(market_creations::Column::Status, status.into())
            .filter(market_creations::Column::Id.eq(creation.id.as_str()))
            .exec(txn)
            .await?;
        Ok(())
    }

    async fn answer(
        &self,
        db: &DatabaseConnection,
        prepared: &Prepared<Params>,
        _fresh: bool,
    ) -> Result<Confirmed, ApiError> {
        let creation = stored(db, &prepared.params.creation_id).await?;
        let market: MarketRef = creation.market_id.parse().map_err(ApiError::internal)?;
        Ok(Confirmed {
            creation,
            address: pda::binary::market(&market.market_id()),
            signature: prepared
                .signature
                .ok_or_else(|| ApiError::internal("answering an unconfirmed creation"))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creations_prepared_before_the_market_id_was_stored_still_load() {
        let old: Params = serde_json::from_value(serde_json::json!({"creation_id": "c1"})).unwrap();
        assert_eq!(old.creation_id, "c1");
        assert!(old.market_id.is_none());
    }
}
