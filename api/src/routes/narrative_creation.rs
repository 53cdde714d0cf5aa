//! Creating narratives (spec 4.1): prepare-mint and publish (the wallet-signed pair), and the
//! asynchronous AI drafts (`generate`, `generate/status/:jobId`).

use std::sync::Arc;

use narrative_store::entities::narrative_generations;
use poem::Request;
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};
use sea_orm::{ActiveValue::Set, EntityTrait, TransactionTrait};
use serde_json::json;

use crate::client::client_ip;
use crate::error::{ApiError, ApiResult};
use crate::generation::Draft;
use crate::limits::{AI_GENERATE, AI_GENERATE_PER_IP};
use crate::narrative_generation::{DEFAULT_DEADLINE_DAYS, GENERATE_NARRATIVE};
use crate::narrative_publish::{self, MintPrepared, PrepareMint, Publish, Published};
use crate::routes::narratives::CATEGORIES;
use crate::routes::Tag;
use crate::state::AppState;
use crate::time::{iso, now};
use crate::validate::wallet;

pub struct NarrativeCreationApi {
    pub state: Arc<AppState>,
}

const MAX_TOPIC_CHARS: usize = 1_000;

#[derive(Object)]
pub struct GenerateRequest {
    /// What the narrative should be about, in any language.
    pub topic: String,
    /// Whose daily pool of 5 drafts this uses.
    pub wallet_address: String,
    /// One of the 24 categories; suggested from the topic when omitted.
    pub category: Option<String>,
    /// The draft's resolution window, 1–730 days (default 30).
    pub deadline_days: Option<i64>,
}

#[derive(Object)]
pub struct GenerationStarted {
    pub ok: bool,
    #[oai(rename = "jobId")]
    pub job_id: String,
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
    pub category: String,
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
    /// The provider's last error (kept while retrying; final once `failed`).
    pub error: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

#[OpenApi(prefix_path = "/narratives", tag = "Tag::Narratives")]
impl NarrativeCreationApi {
    /// Prepare the transaction that creates the narrative's Yield market, stakes 80 % of the
    /// publish fee on YES for the creator (locked until the market settles) and pays 20 % to
    /// the treasury. Sign and send it, then call publish with its signature.
    #[oai(path = "/prepare-mint", method = "post")]
    async fn prepare_mint(&self, body: Json<PrepareMint>) -> ApiResult<Json<MintPrepared>> {
        Ok(Json(
            narrative_publish::prepare_mint(&self.state, body.0).await?,
        ))
    }

    /// Publish a narrative whose prepare-mint transaction landed: human verification, the
    /// conviction gate, the daily cap, moderation and the uncertainty threshold, then the
    /// signature on the ledger. A refused publish can be retried with the same signature.
    #[oai(path = "/publish", method = "post")]
    async fn publish(&self, req: &Request, body: Json<Publish>) -> ApiResult<Json<Published>> {
        let ip = client_ip(req).and_then(|ip| ip.parse().ok());
        Ok(Json(
            narrative_publish::publish(&self.state, body.0, ip).await?,
        ))
    }

    /// Start drafting a narrative from a topic with the AI provider; answers at once with the
    /// `jobId` to poll. 5 per wallet and 20 per IP per UTC day.
    #[oai(path = "/generate", method = "post")]
    async fn generate(
        &self,
        req: &Request,
        body: Json<GenerateRequest>,
    ) -> ApiResult<GenerateAccepted> {
        let body = body.0;
        let owner = wallet("wallet_address", &body.wallet_address)?.to_string();
        let topic = body.topic.trim().to_owned();
        if topic.is_empty() || topic.chars().count() > MAX_TOPIC_CHARS {
            return Err(ApiError::validation(format!(
                "topic required, at most {MAX_TOPIC_CHARS} characters"
            ))
            .into());
        }
        let category = match body.category.as_deref().map(str::trim) {
            Some(c) if !c.is_empty() => {
                let c = c.to_ascii_uppercase();
                if !CATEGORIES.contains(&c.as_str()) {
                    return Err(
                        ApiError::validation("category must be one of the 24 categories").into(),
                    );
                }
                Some(c)
            }
            _ => None,
        };
        let days = body.deadline_days.unwrap_or(DEFAULT_DEADLINE_DAYS);
        if !(1..=730).contains(&days) {
            return Err(ApiError::validation("deadline_days must be between 1 and 730").into());
        }
        let limiter = &self.state.limiter;
        if let Some(ip) = client_ip(req) {
            let decision = limiter.hit(&AI_GENERATE_PER_IP, &ip).await;
            if !decision.allowed {
                return Err(ApiError::window_exhausted(
                    "daily_limit_reached",
                    "20 drafts per IP per day",
                    decision.retry_after_secs,
                )
                .into());
            }
        }
        let decision = limiter.hit(&AI_GENERATE, &owner).await;
        if !decision.allowed {
            return Err(ApiError::window_exhausted(
                "daily_limit_reached",
                "5 drafts per wallet per day",
                decision.retry_after_secs,
            )
            .into());
        }
        let id = uuid::Uuid::new_v4().to_string();
        let at = now();
        let db = self.state.store.db();
        let txn = db.begin().await.map_err(ApiError::from)?;
        narrative_generations::Entity::insert(narrative_generations::ActiveModel {
            id: Set(id.clone()),
            wallet_address: Set(owner),
            topic: Set(topic),
            category: Set(category),
            status: Set("queued".into()),
            draft: Set(None),
            error: Set(None),
            created_at: Set(at),
            updated_at: Set(at),
        })
        .exec_without_returning(&txn)
        .await
        .map_err(ApiError::from)?;
        crate::jobs::enqueue(
            &txn,
            GENERATE_NARRATIVE,
            json!({"generation_id": id, "deadline_days": days}),
            at,
        )
        .await
        .map_err(ApiError::from)?;
        txn.commit().await.map_err(ApiError::from)?;
        self.state.jobs_wake.notify_one();
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
        #[oai(name = "jobId")] job_id: Path<String>,
    ) -> ApiResult<Json<GenerationStatus>> {
        let id = crate::validate::uuid("jobId", &job_id.0)?.to_string();
        let row = narrative_generations::Entity::find_by_id(id)
            .one(self.state.store.db())
            .await
            .map_err(ApiError::from)?
            .ok_or_else(|| ApiError::not_found("generation"))?;
        let draft = match &row.draft {
            Some(value) => {
                Some(serde_json::from_value::<Draft>(value.clone()).map_err(ApiError::internal)?)
            }
            None => None,
        };
        Ok(Json(GenerationStatus {
            ok: true,
            job_id: row.id,
            status: row.status,
            draft: draft.map(|d| NarrativeDraft {
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
