//! Creating a narrative (spec 4.1 prepare-mint / publish). `prepare-mint` hands the creator one
//! transaction that creates the narrative's Yield market, backs YES with 80 % of the publish fee
//! (the creator's stake, locked in the market until it settles) and pays the other 20 % to the
//! treasury. `publish` names that transaction's signature with the thesis; the narrative is
//! recorded only once every check has passed, in this order:
//!
//! 1. a replayed signature that already published answers the same, writing nothing;
//! 2. the human-verification token (400 `TURNSTILE_FAILED`);
//! 3. the conviction gate (403 `conviction_score_required`) and the daily cap (429
//!    `daily_limit_reached`), which prepare-mint also checks so nobody pays for a refusal;
//! 4. the ledger: the signature landed, paid by the creator, as prepared, before its deadline;
//! 5. the review, last as the one check that may cost a model call: moderation (422
//!    `content_flagged`), then uncertainty (422 `narrative_too_obvious`).
//!
//! A refused publish consumes nothing: the creator may fix the thesis and publish again with
//! the same signature.

// `back_market`'s minimum for a SOL market (spec 8: 0.01 SOL).
use narrative_sdk::binary_vault::constants::MIN_BACKING_LAMPORTS as MIN_STAKE_LAMPORTS;
use narrative_sdk::binary_vault::instructions::CreateMarketArgs;
use narrative_sdk::binary_vault::state::{MarketSource, MarketVariant, Side};
use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::{
    narrative_mints, narrative_rules, narratives, prepared_transactions,
};
use poem::http::StatusCode;
use poem_openapi::Object;
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait,
    IntoActiveModel, PaginatorTrait, QueryFilter, TransactionTrait,
};
use serde_json::json;
use uuid::Uuid;

use crate::error::ApiError;
use crate::prepared::{self, Confirmation};
use crate::routes::narratives::CATEGORIES;
use crate::state::AppState;
use crate::system::ensure_running;
use crate::time::now;
use crate::validate::wallet;

pub const KIND: &str = "narrative_mint";
/// The treasury's share of the publish fee; the rest is the creator's YES stake.
pub const TREASURY_SHARE_BPS: u64 = 2_000;
/// binary_vault accepts deadlines up to 731 days ahead; a day is kept as margin for the time
/// between preparing and landing.
const MAX_DEADLINE_DAYS: i64 = 730;
/// Deadlines this close are tagged `SHORT`, later ones `LONG`.
const SHORT_WITHIN_DAYS: i64 = 30;
const MIN_THESIS_CHARS: usize = 10;
const MAX_THESIS_CHARS: usize = 500;
const MAX_TITLE_CHARS: usize = 120;
const MAX_RULE_CHARS: usize = 2_000;
const DAY_SECS: i64 = 86_400;

#[derive(Object)]
pub struct PrepareMint {
    /// The creator: signs, pays the fee and holds the YES stake.
    pub backer_wallet: String,
    /// What the creator pays, at least `NARRATIVE_PUBLISH_FEE_SOL`; beyond the treasury's
    /// 20 % of the fee, all of it is the YES stake.
    pub amount_lamports: u64,
    /// Days until the market's deadline (1–730).
    pub deadline_days: i64,
    /// The narrative's UUID; a new one when omitted.
    pub narrative_id: Option<String>,
}

#[derive(Object)]
pub struct MintPrepared {
    /// Base64, unsigned; the creator's wallet pays the fee.
    pub transaction: String,
    #[oai(rename = "narrativeId")]
    pub narrative_id: String,
    /// Unix seconds.
    #[oai(rename = "deadlineTimestamp")]
    pub deadline_timestamp: i64,
    /// The creator's locked YES backing.
    pub stake_lamports: u64,
    /// Paid to the treasury.
    pub treasury_lamports: u64,
}

#[derive(Object)]
pub struct Publish {
    /// The creator (prepare-mint's `backer_wallet`).
    #[oai(rename = "walletAddress")]
    pub wallet_address: String,
    pub thesis: String,
    /// One of the 24 categories.
    pub category: String,
    /// As given to prepare-mint.
    pub deadline_days: i64,
    /// Signature of the signed prepare-mint transaction.
    pub signature: String,
    /// Human-verification token (Turnstile).
    pub cf_token: Option<String>,
    /// Defaults to the thesis's first 120 characters.
    pub title: Option<String>,
    pub sub_category: Option<String>,
    pub asset_tag: Option<String>,
    /// Resolution rules (spec 2.3): both or neither.
    pub resolution_source: Option<String>,
    pub criteria: Option<String>,
}

#[derive(Object)]
pub struct Published {
    pub success: bool,
    #[oai(rename = "narrativeId")]
    pub narrative_id: String,
    pub message: String,
}

/// The fee split: (stake, treasury) of `amount` when the fee is `fee`. The treasury's share is
/// rounded up, as fees owed are.
pub fn split(amount: u64, fee: u64) -> Option<(u64, u64)> {
    let treasury = (u128::from(fee) * u128::from(TREASURY_SHARE_BPS)).div_ceil(10_000);
    let treasury = u64::try_from(treasury).ok()?;
    Some((amount.checked_sub(treasury)?, treasury))
}

fn deadline_days(days: i64) -> Result<i64, ApiError> {
    if !(1..=MAX_DEADLINE_DAYS).contains(&days) {
        return Err(ApiError::validation(format!(
            "deadline_days must be between 1 and {MAX_DEADLINE_DAYS}"
        )));
    }
    Ok(days)
}

/// The policy checks that do not depend on the thesis: the conviction gate and the daily cap.
async fn creator_gates(state: &AppState, creator: &str) -> Result<(), ApiError> {
    let db = state.store.db();
    let policy = state.narratives;
    if policy.min_conviction_score > 0.0 {
        let score = crate::conviction::wallet_score(db, creator).await?;
        if score.score < policy.min_conviction_score {
            return Err(ApiError::coded(
                StatusCode::FORBIDDEN,
                "conviction_score_required",
                "publishing a narrative needs a higher conviction score",
            )
            .with("required_score", policy.min_conviction_score)
            .with("conviction_score", score.score));
        }
    }
    let now = now();
    let day_start = now - now.rem_euclid(DAY_SECS);
    let today = published_since(db, creator, day_start).await?;
    if today >= u64::from(policy.daily_cap) {
        return Err(ApiError::window_exhausted(
            "daily_limit_reached",
            format!("{} narratives per wallet per UTC day", policy.daily_cap),
            (day_start + DAY_SECS - now) as u64,
        ));
    }
    Ok(())
}

async fn published_since(
    db: &DatabaseConnection,
    creator: &str,
    since: i64,
) -> Result<u64, ApiError> {
    Ok(narratives::Entity::find()
        .filter(narratives::Column::WalletAddress.eq(creator))
        .filter(narratives::Column::CreatedAt.gte(since))
        .count(db)
        .await?)
}

pub async fn prepare_mint(state: &AppState, body: PrepareMint) -> Result<MintPrepared, ApiError> {
    let db = state.store.db();
    ensure_running(db, "narratives").await?;
    let creator = wallet("backer_wallet", &body.backer_wallet)?;
    let days = deadline_days(body.deadline_days)?;
    let fee = state.narratives.publish_fee_lamports;
    if body.amount_lamports < fee {
        return Err(ApiError::validation(format!(
            "amount_lamports must be at least the publish fee of {fee} lamports"
        ))
        .with("publish_fee_lamports", fee));
    }
    let (stake, treasury_share) = split(body.amount_lamports, fee)
        .ok_or_else(|| ApiError::validation("amount_lamports is out of range"))?;
    if stake < MIN_STAKE_LAMPORTS {
        return Err(ApiError::validation(
            "the YES stake must be at least 0.01 SOL; raise amount_lamports",
        ));
    }
    let treasury = state.treasury("publishing a narrative")?;
    let narrative_id = match body.narrative_id.as_deref().map(str::trim) {
        Some(id) if !id.is_empty() => crate::validate::uuid("narrative_id", id)?,
        _ => Uuid::new_v4(),
    };
    creator_gates(state, &creator.to_string()).await?;

    let market_id = narrative_sdk::market_id::market_id_from_uuid(&narrative_id);
    let deadline = now() + days * DAY_SECS;
    let instructions = [
        narrative_sdk::binary::create_market(
            creator,
            None,
            CreateMarketArgs {
                market_id,
                variant: MarketVariant::Yield,
                source: MarketSource::Seed,
                deadline,
            },
        ),
        narrative_sdk::binary::back_market(creator, &market_id, Side::Yes, stake),
        anchor_lang::solana_program::system_instruction::transfer(
            &creator,
            &treasury,
            treasury_share,
        ),
    ];
    let txn = db.begin().await?;
    let taken = narratives::Entity::find_by_id(narrative_id.to_string())
        .one(&txn)
        .await?
        .is_some()
        || narrative_mints::Entity::find_by_id(narrative_id.to_string())
            .one(&txn)
            .await?
            .is_some();
    if taken {
        return Err(narrative_exists());
    }
    let ready = prepared::prepare(
        &txn,
        state.ledger.as_ref(),
        KIND,
        &creator,
        &instructions,
        json!({ "narrative_id": narrative_id.to_string() }),
    )
    .await?;
    // The primary key refuses a second mint of one narrative racing this one.
    let inserted = narrative_mints::Entity::insert(narrative_mints::ActiveModel {
        narrative_id: Set(narrative_id.to_string()),
        prepared_id: Set(ready.id.clone()),
        wallet: Set(creator.to_string()),
        deadline_days: Set(days as i32),
        deadline_at: Set(deadline),
        stake_lamports: Set(stake as i64),
        treasury_lamports: Set(treasury_share as i64),
        status: Set("prepared".into()),
        created_at: Set(now()),
        published_at: Set(None),
    })
    .on_conflict(
        OnConflict::column(narrative_mints::Column::NarrativeId)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(&txn)
    .await?;
    if inserted == 0 {
        return Err(narrative_exists());
    }
    txn.commit().await?;
    Ok(MintPrepared {
        transaction: ready.transaction,
        narrative_id: narrative_id.to_string(),
        deadline_timestamp: deadline,
        stake_lamports: stake,
        treasury_lamports: treasury_share,
    })
}

fn narrative_exists() -> ApiError {
    ApiError::coded(
        StatusCode::CONFLICT,
        "narrative_exists",
        "this narrative_id was already minted; prepare with a new one",
    )
}

/// The publish request, checked for shape.
struct Draft {
    creator: Pubkey,
    title: String,
    thesis: String,
    category: String,
    rules: Option<(String, String)>,
}

fn checked(body: &Publish) -> Result<Draft, ApiError> {
    let creator = wallet("walletAddress", &body.wallet_address)?;
    let thesis = body.thesis.split_whitespace().collect::<Vec<_>>().join(" ");
    let length = thesis.chars().count();
    if !(MIN_THESIS_CHARS..=MAX_THESIS_CHARS).contains(&length) {
        return Err(ApiError::validation(format!(
            "thesis must be {MIN_THESIS_CHARS} to {MAX_THESIS_CHARS} characters"
        )));
    }
    let category = body.category.trim().to_ascii_uppercase();
    if !CATEGORIES.contains(&category.as_str()) {
        return Err(ApiError::validation(
            "category must be one of the 24 categories",
        ));
    }
    deadline_days(body.deadline_days)?;
    prepared::parse_signature(body.signature.trim())?;
    let title = match body.title.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => t.chars().take(MAX_TITLE_CHARS).collect(),
        _ => thesis.chars().take(MAX_TITLE_CHARS).collect(),
    };
    let rules = match (given(&body.resolution_source), given(&body.criteria)) {
        (Some(source), Some(criteria)) => {
            if source.chars().count() > MAX_RULE_CHARS || criteria.chars().count() > MAX_RULE_CHARS
            {
                return Err(ApiError::validation(format!(
                    "resolution_source and criteria are at most {MAX_RULE_CHARS} characters"
                )));
            }
            Some((source.to_owned(), criteria.to_owned()))
        }
        (None, None) => None,
        _ => {
            return Err(ApiError::validation(
                "resolution_source and criteria come together",
            ))
        }
    };
    Ok(Draft {
        creator,
        title,
        thesis,
        category,
        rules,
    })
}

/// A trimmed optional field, `None` when blank.
fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

fn published(narrative_id: String, message: &str) -> Published {
    Published {
        success: true,
        narrative_id,
        message: message.into(),
    }
}

pub async fn publish(
    state: &AppState,
    body: Publish,
    client_ip: Option<std::net::IpAddr>,
) -> Result<Published, ApiError> {
    let db = state.store.db();
    let draft = checked(&body)?;
    let signature = body.signature.trim().to_owned();
    if let Some(done) = prepared_transactions::Entity::find()
        .filter(prepared_transactions::Column::Signature.eq(signature.as_str()))
        .filter(prepared_transactions::Column::Kind.eq(KIND))
        .one(db)
        .await?
    {
        return replay(&done, &draft);
    }
    ensure_running(db, "narratives").await?;
    crate::human::require_human(state.human.as_ref(), body.cf_token.as_deref(), client_ip).await?;
    creator_gates(state, &draft.creator.to_string()).await?;
    let parsed = prepared::parse_signature(&signature)?;
    let landed = prepared::landed(state.ledger.as_ref(), state.confirm_wait, &parsed).await?;
    let mint = minted_narrative(&landed)
        .map(|id| narrative_mints::Entity::find_by_id(id.to_string()).one(db));
    let mint = match mint {
        Some(found) => found.await?,
        None => None,
    }
    .filter(|m| m.wallet == draft.creator.to_string())
    .ok_or_else(|| {
        ApiError::coded(
            StatusCode::BAD_REQUEST,
            "transaction_mismatch",
            "the signature is not a prepare-mint transaction of this wallet",
        )
    })?;
    if mint.deadline_at <= now() {
        return Err(ApiError::coded(
            StatusCode::UNPROCESSABLE_ENTITY,
            "deadline_passed",
            "the market's deadline has passed; its stake returns through the timeout refund",
        ));
    }
    if i64::from(mint.deadline_days) != body.deadline_days {
        return Err(ApiError::validation(format!(
            "deadline_days must be the prepared {}",
            mint.deadline_days
        )));
    }
    let prepared =
        match prepared::verify_landed(db, KIND, &mint.prepared_id, &signature, landed).await? {
            Confirmation::Replay(done) => return replay(&done, &draft),
            Confirmation::Fresh { prepared, .. } => prepared,
        };
    // Last, as the one check that may cost a model call.
    let uncertainty = review(state, &draft.thesis).await?;

    let at = now();
    let market_id = narrative_sdk::market_id::market_id_from_str(&mint.narrative_id)
        .map_err(ApiError::internal)?;
    let narrative = narratives::Model {
        id: mint.narrative_id.clone(),
        market_id: hex::encode(market_id),
        wallet_address: draft.creator.to_string(),
        title: draft.title,
        thesis: draft.thesis,
        category: draft.category,
        sub_category: given(&body.sub_category).map(str::to_owned),
        asset_tag: given(&body.asset_tag).map(str::to_owned),
        narrative_type: "yield".into(),
        is_protocol_narrative: false,
        protocol_narrative_label: None,
        status: "active".into(),
        oracle_status: "open".into(),
        score: 0.0,
        uncertainty_score: uncertainty,
        deadline_at: mint.deadline_at,
        deadline_tag: if i64::from(mint.deadline_days) <= SHORT_WITHIN_DAYS {
            "SHORT"
        } else {
            "LONG"
        }
        .into(),
        opens_at: None,
        created_at: at,
    };
    let changed = [
        pda::binary::market(&market_id),
        pda::binary::backing(&market_id, &draft.creator, Side::Yes),
    ];
    let recorded = prepared::record_confirmed(
        db,
        &state.jobs_wake,
        &prepared.id,
        &signature,
        &changed,
        async |txn| record_narrative(txn, &narrative, draft.rules, &mint).await,
    )
    .await?;
    if !recorded {
        // Another request published it first: answer as it did.
        return Box::pin(publish(state, body, client_ip)).await;
    }
    Ok(published(narrative.id, "narrative published"))
}

/// The rows a publish writes besides the confirmation: the narrative, its rules, the mint's
/// status, the scoring job and `narrative.created` for subscribed agents.
async fn record_narrative(
    txn: &DatabaseTransaction,
    narrative: &narratives::Model,
    rules: Option<(String, String)>,
    mint: &narrative_mints::Model,
) -> Result<(), ApiError> {
    let at = narrative.created_at;
    narratives::Entity::insert(narrative.clone().into_active_model())
        .exec_without_returning(txn)
        .await?;
    if let Some((resolution_source, criteria)) = rules {
        narrative_rules::Entity::insert(narrative_rules::ActiveModel {
            narrative_id: Set(narrative.id.clone()),
            resolution_source: Set(resolution_source),
            criteria: Set(criteria),
            created_at: Set(at),
        })
        .exec_without_returning(txn)
        .await?;
    }
    narrative_mints::Entity::update_many()
        .col_expr(narrative_mints::Column::Status, "published".into())
        .col_expr(narrative_mints::Column::PublishedAt, Some(at).into())
        .filter(narrative_mints::Column::NarrativeId.eq(narrative.id.as_str()))
        .exec(txn)
        .await?;
    crate::jobs::enqueue(
        txn,
        crate::narrative_scoring::SCORE_NARRATIVE,
        json!({"narrative_id": narrative.id}),
        at,
    )
    .await?;
    crate::agent_webhooks::emit(
        txn,
        "narrative.created",
        json!({
            "narrative_id": narrative.id,
            "title": narrative.title,
            "thesis": narrative.thesis,
            "category": narrative.category,
            "wallet_address": narrative.wallet_address,
            "deadline_at": crate::time::iso(narrative.deadline_at),
            "stake_sol": crate::validate::sol(mint.stake_lamports),
        }),
    )
    .await?;
    Ok(())
}

/// Moderation (422 `content_flagged`), then the uncertainty threshold (422
/// `narrative_too_obvious`); the thesis's uncertainty when both pass.
async fn review(state: &AppState, thesis: &str) -> Result<f64, ApiError> {
    let review = state.reviewer.review(thesis).await.map_err(|error| {
        tracing::warn!(error = %format!("{error:#}"), "thesis review unavailable");
        ApiError::coded(
            StatusCode::SERVICE_UNAVAILABLE,
            "review_unavailable",
            "the thesis could not be reviewed; retry shortly",
        )
    })?;
    if !review.flagged.is_empty() {
        return Err(ApiError::coded(
            StatusCode::UNPROCESSABLE_ENTITY,
            "content_flagged",
            "moderation rejected this thesis",
        )
        .with("categories", review.flagged));
    }
    if review.uncertainty < state.narratives.min_uncertainty {
        return Err(ApiError::coded(
            StatusCode::UNPROCESSABLE_ENTITY,
            "narrative_too_obvious",
            "the outcome of this thesis is too certain to make a market",
        )
        .with("uncertainty_score", review.uncertainty)
        .with("required_uncertainty", state.narratives.min_uncertainty));
    }
    Ok(review.uncertainty)
}

/// The narrative whose market a landed transaction creates, from its binary_vault
/// `create_market` instruction (the market id is the UUID's 16 bytes and 16 zero bytes).
fn minted_narrative(landed: &crate::ledger::LandedTransaction) -> Option<Uuid> {
    use anchor_lang::Discriminator;
    let discriminator = narrative_sdk::binary_vault::instruction::CreateMarket::DISCRIMINATOR;
    landed
        .instructions
        .iter()
        .filter(|ix| ix.program == narrative_sdk::ids::BINARY_VAULT)
        .find_map(|ix| {
            let args = ix.data.strip_prefix(discriminator)?;
            let market_id: [u8; 32] = args.get(..32)?.try_into().ok()?;
            narrative_sdk::market_id::uuid_from_market_id(&market_id).ok()
        })
}

/// The answer to a signature that already published: the same narrative, if it is this
/// creator's.
fn replay(done: &prepared_transactions::Model, draft: &Draft) -> Result<Published, ApiError> {
    if done.wallet != draft.creator.to_string() {
        return Err(ApiError::coded(
            StatusCode::CONFLICT,
            "signature_already_used",
            "this signature published another wallet's narrative",
        ));
    }
    let id = done.params["narrative_id"]
        .as_str()
        .ok_or_else(|| ApiError::internal("a mint without its narrative"))?;
    Ok(published(id.to_owned(), "already published"))
}
