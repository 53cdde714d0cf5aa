//! AI drafts of a narrative (spec 4.1 `generate`): the request returns at once with a `jobId`,
//! a job asks the drafter, and `generate/status/:jobId` reads the row it fills. 5 drafts per
//! wallet and 20 per IP per UTC day; a provider that fails three times (2 s and 4 s apart) is
//! reported as `failed` rather than retried for an hour, since a person is waiting.

use std::net::IpAddr;
use std::sync::Arc;

use anyhow::Context;
use narrative_store::entities::narrative_generations;
use narrative_store::Store;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};
use serde::{Deserialize, Serialize};

use crate::clock::{iso, SharedClock, DAY_SECS};
use crate::domain::narratives::originality::suggest_category;
use crate::domain::quota;
use crate::error::ApiError;
use crate::jobs::generate_narrative::GenerateNarrative;
use crate::jobs::{Handler, JobOutcome, Leased};
use crate::limits::{AI_GENERATE, AI_GENERATE_PER_IP};
use crate::providers::drafter::Generator;
use crate::state::AppState;
use crate::values::{Category, DeadlineDays, GenerationId, Wallet};

/// Drafts resolve this many days out unless the request says otherwise.
pub const DEFAULT_DEADLINE_DAYS: i64 = 30;
/// Attempts a generation gets.
pub const ATTEMPTS: i32 = 3;
/// What a generation's status says of a failed attempt (the provider's error is logged).
pub const DRAFT_FAILED: &str = "provider_unavailable: the drafting model gave no usable draft";

pub struct GenerateRequest {
    pub topic: String,
    pub wallet: Wallet,
    pub category: Option<Category>,
    pub deadline_days: Option<DeadlineDays>,
}

/// A finished draft, as stored and shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Draft {
    pub title: String,
    pub thesis: String,
    pub category: Category,
    pub resolution_source: String,
    pub criteria: String,
}

/// Where a draft stands.
pub struct Generation {
    pub row: narrative_generations::Model,
    pub draft: Option<Draft>,
}

/// Queues a draft of `request`; its id.
pub async fn start(
    state: &AppState,
    ip: Option<IpAddr>,
    request: GenerateRequest,
) -> Result<GenerationId, ApiError> {
    quota::charge_cost_per_ip(state, &AI_GENERATE_PER_IP, ip, "drafts").await?;
    quota::charge_cost(
        state,
        &AI_GENERATE,
        &quota::named_wallet(&request.wallet, ip),
        "daily_limit_reached",
        "5 drafts per wallet per day",
    )
    .await?;
    let id = GenerationId::new_random();
    let now = state.now();
    let txn = state.store.begin_write().await?;
    narrative_generations::Entity::insert(narrative_generations::ActiveModel {
        id: Set(id.to_string()),
        wallet_address: Set(request.wallet.to_string()),
        topic: Set(request.topic),
        category: Set(request.category.map(|c| c.to_string())),
        status: Set("queued".into()),
        draft: Set(None),
        error: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
    })
    .exec_without_returning(&txn)
    .await?;
    crate::jobs::enqueue(
        &txn,
        &GenerateNarrative {
            generation_id: id,
            deadline_days: request
                .deadline_days
                .map_or(DEFAULT_DEADLINE_DAYS, DeadlineDays::get),
        },
        now,
        now,
    )
    .await?;
    txn.commit().await?;
    state.chain.jobs_wake.notify_one();
    Ok(id)
}

pub async fn status(state: &AppState, id: GenerationId) -> Result<Generation, ApiError> {
    let row = narrative_generations::Entity::find_by_id(id.to_string())
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::not_found("generation"))?;
    let draft = row
        .draft
        .clone()
        .map(serde_json::from_value::<Draft>)
        .transpose()
        .map_err(ApiError::internal)?;
    Ok(Generation { row, draft })
}

/// Runs `generate_narrative`: the draft is stored and the row `done`; a provider failure is
/// returned for the queue to retry, until the last attempt marks the row `failed`.
pub struct Drafter {
    pub store: Store,
    pub generator: Arc<dyn Generator>,
    pub clock: SharedClock,
}

#[async_trait::async_trait]
impl Handler<GenerateNarrative> for Drafter {
    async fn run(&self, job: Leased<GenerateNarrative>) -> anyhow::Result<JobOutcome> {
        let id = job.job.generation_id.to_string();
        let db = self.store.db();
        let row = narrative_generations::Entity::find_by_id(id.clone())
            .one(db)
            .await?
            .context("the generation is gone")?;
        if row.status == "done" {
            return Ok(JobOutcome::Done);
        }
        let deadline = iso(row.created_at + job.job.deadline_days * DAY_SECS);
        let deadline = deadline.get(..10).unwrap_or(&deadline);
        let asked: Option<Category> = row.category.as_deref().and_then(|c| c.parse().ok());
        let drafted = self.generator.draft(&row.topic, asked, deadline).await;
        let now = self.clock.now();
        let drafted = match drafted {
            Ok(drafted) => drafted,
            Err(error) => {
                let last = job.attempt >= ATTEMPTS;
                // The provider's own error names its host and paths: the log has it, the
                // public status only what happened.
                tracing::warn!(generation = %id, attempt = job.attempt, error = %format!("{error:#}"), "draft failed");
                let mut update = narrative_generations::Entity::update_many()
                    .col_expr(
                        narrative_generations::Column::Error,
                        Some(DRAFT_FAILED.to_owned()).into(),
                    )
                    .col_expr(narrative_generations::Column::UpdatedAt, now.into());
                if last {
                    update =
                        update.col_expr(narrative_generations::Column::Status, "failed".into());
                }
                update
                    .filter(narrative_generations::Column::Id.eq(id.as_str()))
                    .exec(db)
                    .await?;
                return if last {
                    Ok(JobOutcome::Done)
                } else {
                    Err(error)
                };
            }
        };
        // A drafter that leaves the category open gets the one the topic's words suggest.
        let category = drafted.category.unwrap_or_else(|| {
            suggest_category(&row.topic)
                .parse()
                .unwrap_or(Category::Conviction)
        });
        let draft = Draft {
            title: drafted.title,
            thesis: drafted.thesis,
            category,
            resolution_source: drafted.resolution_source,
            criteria: drafted.criteria,
        };
        narrative_generations::Entity::update(narrative_generations::ActiveModel {
            id: Set(id),
            status: Set("done".into()),
            draft: Set(Some(serde_json::to_value(&draft)?)),
            error: Set(None),
            updated_at: Set(now),
            ..Default::default()
        })
        .exec(db)
        .await?;
        Ok(JobOutcome::Done)
    }
}
