//! Creating narratives (spec 4.1): prepare-mint and publish (the wallet-signed pair), and the
//! asynchronous AI drafts (`generate`, `generate/status/:jobId`).

use std::sync::Arc;

use poem::Request;
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};

use crate::clock::iso;
use crate::domain::narratives::drafts::{self, GenerateRequest as Generate};
use crate::domain::narratives::publish::{self, PrepareMint as Mint, Publish as PublishRequest};
use crate::error::{refusals, Answer, ApiError};
use crate::http::client_ip::client_ip;
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{
    Base58Signature, Category, DeadlineDays, GenerationId, Lamports, NarrativeId, Text,
    UnixSeconds, Wallet,
};

pub struct NarrativeCreationApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct PrepareMint {
    /// The creator: signs, pays the fee and holds the YES stake.
    pub backer_wallet: Wallet,
    /// What the creator pays, at least `NARRATIVE_PUBLISH_FEE_SOL` (the document's minimum is
    /// the configured fee); beyond the treasury's 20 % of the fee, all of it is the YES stake.
    pub amount_lamports: Lamports,
    /// Days until the market's deadline (1–730).
    pub deadline_days: DeadlineDays,
    /// The narrative's UUID; a new one when omitted.
    pub narrative_id: Option<NarrativeId>,
}

#[derive(Object)]
pub struct MintPrepared {
    /// Base64, unsigned; the creator's wallet pays the fee.
    pub transaction: String,
    #[oai(rename = "narrativeId")]
    pub narrative_id: NarrativeId,
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
    pub wallet_address: Wallet,
    /// At least 10 characters that are not blank, at most 500.
    pub thesis: Text<500, 10>,
    pub category: Category,
    /// As given to prepare-mint.
    pub deadline_days: DeadlineDays,
    /// Signature of the signed prepare-mint transaction.
    pub signature: Base58Signature,
    /// Human-verification token (Turnstile, at most 2,048 characters).
    pub cf_token: Option<Text<2048, 0>>,
    /// Cut to 120 characters; the thesis when omitted or blank.
    pub title: Option<Text<500, 0>>,
    pub sub_category: Option<Text<200, 0>>,
    pub asset_tag: Option<Text<200, 0>>,
    /// Resolution rules (spec 2.3): give both `resolution_source` and `criteria`, or neither.
    pub resolution_source: Option<Text<2000, 0>>,
    pub criteria: Option<Text<2000, 0>>,
    /// The creator wallet's ed25519 signature (base58) of
    /// `narrative-market-service:publish:<signature>:<content_hash>:issued-at:<issued_at>`, which
    /// binds what is published to the creator: `<signature>` is the prepare-mint transaction's
    /// signature above, `<content_hash>` the lower-case hex SHA-256 of the content, encoded as
    /// one line per field in this order: `thesis`, `category`, `deadline_days`, `title`,
    /// `sub_category`, `asset_tag`, `resolution_source`, `criteria`, each line being
    /// `<field>:<length of the value in UTF-8 bytes>:<value>` and a line feed (`\n`). The values
    /// are the ones recorded: the thesis with its words separated by single spaces, the category
    /// upper case, `deadline_days` in decimal, every other text without leading or trailing
    /// whitespace, and an empty value for a field absent or blank. Example, for a thesis `SOL
    /// above $300`, category `MARKET`, 7 days and nothing else: the hash of
    /// `thesis:14:SOL above $300\ncategory:6:MARKET\ndeadline_days:1:7\ntitle:0:\n`
    /// `sub_category:0:\nasset_tag:0:\nresolution_source:0:\ncriteria:0:\n`. Not the
    /// creator's signature of this content: 401 `invalid_signature`, nothing recorded.
    pub creator_signature: Base58Signature,
    /// When the creator signed (unix seconds): accepted within 300 s before the server's time
    /// (60 s after), and used up only by the publish that records the narrative.
    pub issued_at: UnixSeconds,
}

#[derive(Object)]
pub struct Published {
    pub success: bool,
    #[oai(rename = "narrativeId")]
    pub narrative_id: NarrativeId,
    pub message: String,
}

#[derive(Object)]
pub struct GenerateRequest {
    /// What the narrative should be about, in any language.
    pub topic: Text<1000>,
    /// Whose daily pool of 5 drafts this uses.
    pub wallet_address: Wallet,
    /// Suggested from the topic when omitted.
    pub category: Option<Category>,
    /// The draft's resolution window (default 30).
    pub deadline_days: Option<DeadlineDays>,
}

#[derive(Object)]
pub struct GenerationStarted {
    pub ok: bool,
    #[oai(rename = "jobId")]
    pub job_id: GenerationId,
    /// `queued`.
    pub status: String,
}

#[derive(ApiResponse)]
pub enum GenerateAccepted {
    /// The draft is being made; poll `generate/status/:jobId`.
    #[oai(status = 202)]
    Accepted(Json<GenerationStarted>),
}

#[derive(Object)]
pub struct NarrativeDraft {
    pub title: String,
    pub thesis: String,
    pub category: Category,
    pub resolution_source: String,
    pub criteria: String,
}

#[derive(Object)]
pub struct GenerationStatus {
    pub ok: bool,
    #[oai(rename = "jobId")]
    pub job_id: String,
    /// `queued`, `done` or `failed`.
    pub status: String,
    /// Once `done`: ready for prepare-mint and publish.
    pub draft: Option<NarrativeDraft>,
    /// Why the last attempt failed, `provider_unavailable: …` (kept while retrying; final once
    /// `failed`). The provider's own error is in the service's log, not here.
    pub error: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

refusals! {
    PrepareMintRefusals: [400, 403, 409, 413, 503];
    PublishRefusals: [400, 403, 409, 413, 422, 503];
    GenerateRefusals: [400, 413];
    StatusRefusals: [400, 404];
}

/// Both rules or neither (spec 2.3).
fn rules(
    source: Option<String>,
    criteria: Option<String>,
) -> Result<Option<(String, String)>, ApiError> {
    match (source, criteria) {
        (Some(source), Some(criteria)) => Ok(Some((source, criteria))),
        (None, None) => Ok(None),
        _ => Err(ApiError::validation(
            "resolution_source and criteria come together",
        )),
    }
}

#[OpenApi(prefix_path = "/narratives", tag = "Tag::Narratives")]
impl NarrativeCreationApi {
    /// Prepare the transaction that creates the narrative's Yield market, stakes 80 % of the
    /// publish fee on YES for the creator (locked until the market settles) and pays 20 % to
    /// the treasury. Sign and send it, then call publish with its signature.
    #[oai(path = "/prepare-mint", method = "post")]
    async fn prepare_mint(
        &self,
        body: Json<PrepareMint>,
    ) -> Answer<Json<MintPrepared>, PrepareMintRefusals> {
        let body = body.0;
        let prepared = publish::prepare_mint(
            &self.state,
            Mint {
                creator: body.backer_wallet,
                amount_lamports: body.amount_lamports.get(),
                deadline_days: body.deadline_days,
                narrative_id: body.narrative_id,
            },
        )
        .await?;
        Ok(Json(MintPrepared {
            transaction: prepared.unsigned.transaction,
            narrative_id: prepared.narrative_id,
            deadline_timestamp: prepared.deadline,
            stake_lamports: prepared.stake_lamports,
            treasury_lamports: prepared.treasury_lamports,
        }))
    }

    /// Publish a narrative whose prepare-mint transaction landed: the creator's signature of
    /// the content, human verification, the conviction gate, the daily cap, the signature on
    /// the ledger, then moderation and the uncertainty threshold. A refused publish can be
    /// retried with the same transaction signature.
    #[oai(path = "/publish", method = "post")]
    async fn publish(
        &self,
        req: &Request,
        body: Json<Publish>,
    ) -> Answer<Json<Published>, PublishRefusals> {
        let body = body.0;
        let request = PublishRequest {
            creator: body.wallet_address,
            thesis: body.thesis.collapsed(),
            category: body.category,
            deadline_days: body.deadline_days,
            signature: body.signature,
            cf_token: body.cf_token.and_then(Text::non_empty),
            title: body.title.and_then(Text::non_empty),
            sub_category: body.sub_category.and_then(Text::non_empty),
            asset_tag: body.asset_tag.and_then(Text::non_empty),
            rules: rules(
                body.resolution_source.and_then(Text::non_empty),
                body.criteria.and_then(Text::non_empty),
            )?,
            creator_signature: body.creator_signature,
            issued_at: body.issued_at,
        };
        let published = publish::publish(&self.state, request, client_ip(req)).await?;
        Ok(Json(Published {
            success: true,
            narrative_id: published.narrative_id,
            message: if published.fresh {
                "narrative published"
            } else {
                "already published"
            }
            .into(),
        }))
    }

    /// Start drafting a narrative from a topic with the AI provider; answers at once with the
    /// `jobId` to poll. 5 per wallet and 20 per IP per UTC day.
    #[oai(path = "/generate", method = "post")]
    async fn generate(
        &self,
        req: &Request,
        body: Json<GenerateRequest>,
    ) -> Answer<GenerateAccepted, GenerateRefusals> {
        let body = body.0;
        let id = drafts::start(
            &self.state,
            client_ip(req),
            Generate {
                topic: body.topic.into_string(),
                wallet: body.wallet_address,
                category: body.category,
                deadline_days: body.deadline_days,
            },
        )
        .await?;
        Ok(GenerateAccepted::Accepted(Json(GenerationStarted {
            ok: true,
            job_id: id,
            status: "queued".into(),
        })))
    }

    /// Where a draft stands: `queued`, `done` with the draft, or `failed` with the error.
    #[oai(path = "/generate/status/:jobId", method = "get")]
    async fn generate_status(
        &self,
        #[oai(name = "jobId")] job_id: Path<GenerationId>,
    ) -> Answer<Json<GenerationStatus>, StatusRefusals> {
        let generation = drafts::status(&self.state, job_id.0).await?;
        let row = generation.row;
        Ok(Json(GenerationStatus {
            ok: true,
            job_id: row.id,
            status: row.status,
            draft: generation.draft.map(|d| NarrativeDraft {
                title: d.title,
                thesis: d.thesis,
                category: d.category,
                resolution_source: d.resolution_source,
                criteria: d.criteria,
            }),
            error: row.error,
            created_at: iso(row.created_at),
            updated_at: iso(row.updated_at),
        }))
    }
}
