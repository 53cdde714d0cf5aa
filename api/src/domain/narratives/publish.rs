//! Creating a narrative (spec 4.1 prepare-mint / publish). `prepare-mint` hands the creator one
//! transaction that creates the narrative's Yield market, backs YES with 80 % of the publish fee
//! (the creator's stake, locked in the market until it settles) and pays the other 20 % to the
//! treasury. `publish` names that transaction's signature with the thesis; the narrative is
//! recorded only once every check has passed, in this order:
//!
//! 1. a replayed signature that already published answers the same, writing nothing;
//! 2. the creator's proof (401 `invalid_signature`): the creator wallet's signature of
//!    [`statement`], which binds the transaction's signature and the [`content_hash`] of what
//!    will be recorded, so nobody else can publish other content on the creator's stake;
//! 3. the halt flag, then the human-verification token (400 `TURNSTILE_FAILED`);
//! 4. the conviction gate (403 `conviction_score_required`) and the daily cap (429
//!    `daily_limit_reached`), which prepare-mint also checks so nobody pays for a refusal;
//! 5. the ledger: the signature landed, paid by the creator, as prepared, before its deadline;
//! 6. the review, last as the one check that may cost a model call: moderation (422
//!    `content_flagged`), then uncertainty (422 `narrative_too_obvious`).
//!
//! A refused publish consumes nothing: the creator may fix the thesis and publish again with
//! the same transaction signature (and a proof of the new content). The proof is used up only
//! in the transaction that records the narrative, so a refusal after it was checked leaves it
//! unused too.

use std::net::IpAddr;

use narrative_sdk::binary_vault::constants::MIN_BACKING_LAMPORTS;
use narrative_sdk::binary_vault::instructions::CreateMarketArgs;
use narrative_sdk::binary_vault::state::{MarketSource, MarketVariant, Side};
use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::{narrative_mints, narrative_rules, narratives};
use poem::http::StatusCode;
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait,
    IntoActiveModel, PaginatorTrait, QueryFilter,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::chain::confirm::{confirmed_by, verify, Opened};
use crate::chain::{MoneyFlow, Prepared, Unsigned};
use crate::clock::{day_start, iso, DAY_SECS};
use crate::domain::agents::webhooks::{self, WebhookEvent};
use crate::domain::human::require_human;
use crate::domain::profiles::conviction::wallet_score;
use crate::domain::system::ensure_running;
use crate::domain::wallet_proof::{self, Proof, Statement};
use crate::error::ApiError;
use crate::jobs::score_narrative::ScoreNarrative;
use crate::state::AppState;
use crate::values::{
    sol, Base58Signature, Category, Component, DeadlineDays, NarrativeId, OracleStatus,
    UnixSeconds, Wallet,
};

/// The treasury's share of the publish fee; the rest is the creator's YES stake.
pub const TREASURY_SHARE_BPS: u64 = 2_000;
/// Deadlines this close are tagged `SHORT`, later ones `LONG`.
const SHORT_WITHIN_DAYS: i64 = 30;
/// Titles are cut to this many characters (a cap that clamps, spec 8).
pub const MAX_TITLE_CHARS: usize = 120;

/// The fee split: (stake, treasury) of `amount` when the fee is `fee`. The treasury's share is
/// rounded up, as fees owed are.
pub fn split(amount: u64, fee: u64) -> Option<(u64, u64)> {
    let treasury = (u128::from(fee) * u128::from(TREASURY_SHARE_BPS)).div_ceil(10_000);
    let treasury = u64::try_from(treasury).ok()?;
    Some((amount.checked_sub(treasury)?, treasury))
}

pub struct PrepareMint {
    pub creator: Wallet,
    pub amount_lamports: u64,
    pub deadline_days: DeadlineDays,
    pub narrative_id: Option<NarrativeId>,
}

pub struct MintPrepared {
    pub unsigned: Unsigned,
    pub narrative_id: NarrativeId,
    /// Unix seconds.
    pub deadline: i64,
    pub stake_lamports: u64,
    pub treasury_lamports: u64,
}

/// What prepare-mint stores for publish.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MintParams {
    pub narrative_id: NarrativeId,
}

/// What publish records with the confirmation (none when preparing).
struct Publication {
    narrative: narratives::Model,
    rules: Option<(String, String)>,
    stake_lamports: i64,
    /// The creator's proof, used up with the record.
    proof: CreatorProof,
}

/// A checked proof of [`statement`], kept to be used up where the narrative is recorded.
struct CreatorProof {
    statement: Statement,
    wallet: Wallet,
    signature: Base58Signature,
    issued_at: UnixSeconds,
}

/// The prepare-mint / publish money flow.
pub struct NarrativeMint {
    publication: Option<Publication>,
}

fn narrative_exists() -> ApiError {
    ApiError::coded(
        StatusCode::CONFLICT,
        "narrative_exists",
        "this narrative_id was already minted; prepare with a new one",
    )
}

/// The policy checks that do not depend on the thesis: the conviction gate and the daily cap.
async fn creator_gates(state: &AppState, creator: &Wallet) -> Result<(), ApiError> {
    let db = state.store.db();
    let policy = state.narratives;
    if policy.min_conviction_score > 0.0 {
        let score = wallet_score(db, creator).await?;
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
    let now = state.now();
    let today = published_since(db, creator, day_start(now)).await?;
    if today >= u64::from(policy.daily_cap) {
        return Err(ApiError::window_exhausted(
            "daily_limit_reached",
            format!("{} narratives per wallet per UTC day", policy.daily_cap),
            now,
            (day_start(now) + DAY_SECS - now) as u64,
        ));
    }
    Ok(())
}

async fn published_since(
    db: &DatabaseConnection,
    creator: &Wallet,
    since: i64,
) -> Result<u64, ApiError> {
    Ok(narratives::Entity::find()
        .filter(narratives::Column::WalletAddress.eq(creator.to_string()))
        .filter(narratives::Column::CreatedAt.gte(since))
        .count(db)
        .await?)
}

pub async fn prepare_mint(
    state: &AppState,
    request: PrepareMint,
) -> Result<MintPrepared, ApiError> {
    let db = state.store.db();
    ensure_running(db, Component::Narratives).await?;
    let fee = state.narratives.publish_fee_lamports;
    if request.amount_lamports < fee {
        return Err(ApiError::validation(format!(
            "amount_lamports must be at least the publish fee of {fee} lamports"
        ))
        .with("publish_fee_lamports", fee));
    }
    let (stake, treasury_share) = split(request.amount_lamports, fee)
        .ok_or_else(|| ApiError::validation("amount_lamports is out of range"))?;
    if stake < MIN_BACKING_LAMPORTS {
        return Err(ApiError::validation(
            "the YES stake must be at least 0.01 SOL; raise amount_lamports",
        ));
    }
    let treasury = state.treasury("publishing a narrative")?;
    let narrative_id = request.narrative_id.unwrap_or_else(NarrativeId::new_random);
    creator_gates(state, &request.creator).await?;

    let creator = request.creator.pubkey();
    let market_id = narrative_id.market_id();
    let now = state.now();
    let deadline = now + request.deadline_days.secs();
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
    let blockhash = state.chain.blockhash().await?;
    let txn = state.store.begin_write().await?;
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
    let unsigned = state
        .chain
        .prepare_with(
            &txn,
            blockhash,
            &NarrativeMint { publication: None },
            &request.creator,
            &instructions,
            &MintParams { narrative_id },
        )
        .await?;
    // The primary key refuses a second mint of one narrative racing this one.
    let inserted = narrative_mints::Entity::insert(narrative_mints::ActiveModel {
        narrative_id: Set(narrative_id.to_string()),
        prepared_id: Set(unsigned.id.to_string()),
        wallet: Set(request.creator.to_string()),
        deadline_days: Set(request.deadline_days.get() as i32),
        deadline_at: Set(deadline),
        stake_lamports: Set(i64::try_from(stake).map_err(ApiError::internal)?),
        treasury_lamports: Set(i64::try_from(treasury_share).map_err(ApiError::internal)?),
        status: Set("prepared".into()),
        created_at: Set(now),
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
        unsigned,
        narrative_id,
        deadline,
        stake_lamports: stake,
        treasury_lamports: treasury_share,
    })
}

/// A publish request, parsed.
pub struct Publish {
    pub creator: Wallet,
    /// The thesis, its words separated by single spaces.
    pub thesis: String,
    pub category: Category,
    pub deadline_days: DeadlineDays,
    pub signature: Base58Signature,
    pub cf_token: Option<String>,
    pub title: Option<String>,
    pub sub_category: Option<String>,
    pub asset_tag: Option<String>,
    /// Resolution rules (spec 2.3): source and criteria.
    pub rules: Option<(String, String)>,
    /// The creator wallet's signature of [`statement`] at `issued_at`.
    pub creator_signature: Base58Signature,
    pub issued_at: UnixSeconds,
}

impl Publish {
    /// The fields this publish records, in the order [`content_hash`] encodes them.
    pub fn content(&self) -> [(&'static str, String); 8] {
        let (source, criteria) = match &self.rules {
            Some((source, criteria)) => (source.clone(), criteria.clone()),
            None => (String::new(), String::new()),
        };
        let text = |value: &Option<String>| value.clone().unwrap_or_default();
        [
            ("thesis", self.thesis.clone()),
            ("category", self.category.to_string()),
            ("deadline_days", self.deadline_days.get().to_string()),
            ("title", text(&self.title)),
            ("sub_category", text(&self.sub_category)),
            ("asset_tag", text(&self.asset_tag)),
            ("resolution_source", source),
            ("criteria", criteria),
        ]
    }
}

/// The SHA-256 (lower-case hex) of the content a publish records, encoded field after field as
/// `<name>:<length of the value in UTF-8 bytes>:<value>` and a line feed, in the order of
/// [`Publish::content`]: `thesis` (its words separated by single spaces), `category` (upper
/// case), `deadline_days` (decimal), `title`, `sub_category`, `asset_tag`, `resolution_source`,
/// `criteria` (each without leading or trailing whitespace; an empty value when absent or blank).
/// A client that sends each value already so (trimmed, single-spaced, upper case) hashes exactly
/// what it sends.
pub fn content_hash(content: &[(&str, String)]) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    for (name, value) in content {
        hasher.update(format!("{name}:{}:", value.len()).as_bytes());
        hasher.update(value.as_bytes());
        hasher.update(b"\n");
    }
    hex::encode(hasher.finalize())
}

/// What the creator's wallet signs to publish the content whose [`content_hash`] is
/// `content_hash` with the prepare-mint transaction `signature`:
/// `narrative-market-service:publish:<signature>:<content_hash>:issued-at:<issued_at>`.
pub fn statement(signature: &Base58Signature, content_hash: &str) -> Statement {
    Statement::new("publish")
        .field(signature)
        .field(content_hash)
}

pub struct Published {
    pub narrative_id: NarrativeId,
    /// False when the signature had already published it (a replay).
    pub fresh: bool,
}

pub async fn publish(
    state: &AppState,
    request: Publish,
    client_ip: Option<IpAddr>,
) -> Result<Published, ApiError> {
    let db = state.store.db();
    if let Some(done) = confirmed_by::<NarrativeMint>(db, &request.signature).await? {
        return replay(&done, &request.creator);
    }
    // Before anything else: only the creator's wallet can name what is published on its stake.
    // Checked here, used up only where the narrative is recorded (a refusal keeps it unused).
    let proof = CreatorProof {
        statement: statement(&request.signature, &content_hash(&request.content())),
        wallet: request.creator,
        signature: request.creator_signature,
        issued_at: request.issued_at,
    };
    wallet_proof::verify(
        &state.proof_domain,
        &proof.statement,
        proof.as_proof(),
        state.now(),
    )?;
    ensure_running(db, Component::Narratives).await?;
    require_human(state.human.as_ref(), request.cf_token.as_deref(), client_ip).await?;
    creator_gates(state, &request.creator).await?;
    let landed = state.chain.landed(&request.signature).await?;
    let mint = match minted_narrative(&landed) {
        Some(id) => {
            narrative_mints::Entity::find_by_id(id.to_string())
                .one(db)
                .await?
        }
        None => None,
    }
    .filter(|m| m.wallet == request.creator.to_string())
    .ok_or_else(|| {
        ApiError::coded(
            StatusCode::BAD_REQUEST,
            "transaction_mismatch",
            "the signature is not a prepare-mint transaction of this wallet",
        )
    })?;
    if mint.deadline_at <= state.now() {
        return Err(ApiError::coded(
            StatusCode::UNPROCESSABLE_ENTITY,
            "deadline_passed",
            "the market's deadline has passed; its stake returns through the timeout refund",
        ));
    }
    if i64::from(mint.deadline_days) != request.deadline_days.get() {
        return Err(ApiError::validation(format!(
            "deadline_days must be the prepared {}",
            mint.deadline_days
        )));
    }
    let prepared_id = mint.prepared_id.parse().map_err(ApiError::internal)?;
    let prepared = match state
        .chain
        .open::<NarrativeMint>(prepared_id, &request.signature)
        .await?
    {
        Opened::Replay(done) => return replay(&done, &request.creator),
        Opened::Unconfirmed(prepared) => prepared,
    };
    verify(&prepared, &landed)?;
    // Last, as the one check that may cost a model call.
    let uncertainty = review(state, &request.thesis).await?;

    let narrative = narratives::Model {
        id: mint.narrative_id.clone(),
        market_id: hex::encode(prepared.params.narrative_id.market_id()),
        wallet_address: request.creator.to_string(),
        title: request
            .title
            .unwrap_or_else(|| request.thesis.clone())
            .chars()
            .take(MAX_TITLE_CHARS)
            .collect(),
        thesis: request.thesis,
        category: request.category.to_string(),
        sub_category: request.sub_category,
        asset_tag: request.asset_tag,
        narrative_type: "yield".into(),
        is_protocol_narrative: false,
        protocol_narrative_label: None,
        status: "active".into(),
        oracle_status: OracleStatus::Open.to_string(),
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
        created_at: state.now(),
    };
    let flow = NarrativeMint {
        publication: Some(Publication {
            narrative,
            rules: request.rules,
            stake_lamports: mint.stake_lamports,
            proof,
        }),
    };
    state.chain.record(&flow, prepared, request.signature).await
}

impl CreatorProof {
    fn as_proof(&self) -> Proof<'_> {
        Proof {
            wallet: &self.wallet,
            signature: &self.signature,
            issued_at: self.issued_at,
        }
    }
}

/// The answer to a signature that already published: the same narrative, if it is this
/// creator's.
fn replay(done: &Prepared<MintParams>, creator: &Wallet) -> Result<Published, ApiError> {
    if done.wallet != *creator {
        return Err(ApiError::coded(
            StatusCode::CONFLICT,
            "signature_already_used",
            "this signature published another wallet's narrative",
        ));
    }
    Ok(Published {
        narrative_id: done.params.narrative_id,
        fresh: false,
    })
}

/// Moderation (422 `content_flagged`), then the uncertainty threshold (422
/// `narrative_too_obvious`); the thesis's uncertainty when both pass.
async fn review(state: &AppState, thesis: &str) -> Result<f64, ApiError> {
    let review = state.reviewer.review(thesis).await.map_err(|error| {
        tracing::warn!(error = %format!("{error:#}"), "thesis review unavailable");
        ApiError::unavailable(
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
fn minted_narrative(landed: &crate::chain::ledger::LandedTransaction) -> Option<uuid::Uuid> {
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

/// The rows a publish writes besides the confirmation: the narrative, its rules, the mint's
/// status, the scoring job and `narrative.created` for subscribed agents.
async fn record_narrative(
    txn: &DatabaseTransaction,
    publication: &Publication,
    now: i64,
) -> Result<(), ApiError> {
    let narrative = &publication.narrative;
    let proof = &publication.proof;
    wallet_proof::consume(txn, &proof.statement, proof.as_proof(), now).await?;
    narratives::Entity::insert(narrative.clone().into_active_model())
        .exec_without_returning(txn)
        .await?;
    if let Some((resolution_source, criteria)) = &publication.rules {
        narrative_rules::Entity::insert(narrative_rules::ActiveModel {
            narrative_id: Set(narrative.id.clone()),
            resolution_source: Set(resolution_source.clone()),
            criteria: Set(criteria.clone()),
            created_at: Set(narrative.created_at),
        })
        .exec_without_returning(txn)
        .await?;
    }
    narrative_mints::Entity::update_many()
        .col_expr(narrative_mints::Column::Status, "published".into())
        .col_expr(
            narrative_mints::Column::PublishedAt,
            Some(narrative.created_at).into(),
        )
        .filter(narrative_mints::Column::NarrativeId.eq(narrative.id.as_str()))
        .exec(txn)
        .await?;
    crate::jobs::enqueue(
        txn,
        &ScoreNarrative {
            narrative_id: narrative.id.parse().map_err(ApiError::internal)?,
        },
        now,
        now,
    )
    .await?;
    webhooks::emit(
        txn,
        WebhookEvent::NarrativeCreated,
        json!({
            "narrative_id": narrative.id,
            "title": narrative.title,
            "thesis": narrative.thesis,
            "category": narrative.category,
            "wallet_address": narrative.wallet_address,
            "deadline_at": iso(narrative.deadline_at),
            "stake_sol": sol(publication.stake_lamports),
        }),
        now,
    )
    .await?;
    Ok(())
}

#[async_trait::async_trait]
impl MoneyFlow for NarrativeMint {
    const KIND: &'static str = "narrative_mint";
    type Params = MintParams;
    type Confirmed = Published;

    fn component(&self, _: &Self::Params) -> Component {
        Component::Narratives
    }

    /// The new market and the creator's YES backing.
    fn changed(&self, prepared: &Prepared<MintParams>) -> Vec<Pubkey> {
        let market_id = prepared.params.narrative_id.market_id();
        vec![
            pda::binary::market(&market_id),
            pda::binary::backing(&market_id, &prepared.wallet.pubkey(), Side::Yes),
        ]
    }

    async fn record(
        &self,
        txn: &DatabaseTransaction,
        _: &Prepared<MintParams>,
        _: &Base58Signature,
        now: i64,
    ) -> Result<(), ApiError> {
        let publication = self
            .publication
            .as_ref()
            .ok_or_else(|| ApiError::internal("publishing without a narrative"))?;
        record_narrative(txn, publication, now).await
    }

    async fn answer(
        &self,
        _: &DatabaseConnection,
        prepared: &Prepared<MintParams>,
        fresh: bool,
    ) -> Result<Published, ApiError> {
        Ok(Published {
            narrative_id: prepared.params.narrative_id,
            fresh,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    #[test]
    fn the_content_hash_is_the_documented_encoding() {
        let content = [
            ("thesis", "SOL above $300".to_owned()),
            ("category", "MARKET".to_owned()),
            ("deadline_days", "7".to_owned()),
            ("title", String::new()),
            ("sub_category", String::new()),
            ("asset_tag", String::new()),
            ("resolution_source", String::new()),
            ("criteria", String::new()),
        ];
        let documented =
            "thesis:14:SOL above $300\ncategory:6:MARKET\ndeadline_days:1:7\ntitle:0:\n\
                          sub_category:0:\nasset_tag:0:\nresolution_source:0:\ncriteria:0:\n";
        assert_eq!(
            content_hash(&content),
            hex::encode(Sha256::digest(documented.as_bytes()))
        );
        // Lengths are in bytes, and they keep a value from spilling into the next field.
        let mut moved = content.clone();
        moved[0].1 = "SOL above $300\ncategory:6:MARKET".to_owned();
        moved[1].1 = String::new();
        assert_ne!(content_hash(&moved), content_hash(&content));
        let mut accented = content.clone();
        accented[0].1 = "é".to_owned();
        let expected_line = "thesis:2:é\n";
        assert_eq!(
            content_hash(&accented),
            hex::encode(Sha256::digest(
                documented
                    .replace("thesis:14:SOL above $300\n", expected_line)
                    .as_bytes()
            ))
        );
    }
}
