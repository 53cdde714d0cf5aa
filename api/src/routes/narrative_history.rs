//! What a narrative has been through (spec 4.1): its score over time, its market's backings
//! from the indexed `MarketBacked` events, its resolution rules, and where its settlement on
//! chain stands.

use std::sync::Arc;

use narrative_sdk::binary_vault::state::Side;
use narrative_sdk::decode::{decode_event, BinaryEvent, ProgramEvent};
use narrative_store::entities::{
    jobs, markets, narrative_rules, narrative_score_history, narratives, program_events,
};
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::error::{ApiError, ApiResult};
use crate::routes::Tag;
use crate::state::AppState;
use crate::time::iso;
use crate::validate::{clamp, sol};

pub struct NarrativeHistoryApi {
    pub state: Arc<AppState>,
}

/// The note of a market-history with no indexed event yet.
pub const NO_MARKET_EVENTS: &str = "market_event_unavailable";

#[derive(Object)]
pub struct ScorePoint {
    pub at: String,
    pub score: f64,
    /// 0–100, against the other published theses at that moment.
    pub originality: f64,
    /// 0–100, from the publish review.
    pub uncertainty: f64,
}

#[derive(Object)]
pub struct ScoreHistory {
    pub ok: bool,
    pub narrative_id: String,
    /// Oldest first; empty while the score is pending.
    pub points: Vec<ScorePoint>,
}

#[derive(Object)]
pub struct MarketPoint {
    /// The ledger's time of the backing.
    pub at: String,
    pub slot: i64,
    pub signature: String,
    /// `'true'` (YES) or `'false'` (NO), as backings are placed.
    pub side: String,
    pub amount_sol: f64,
    /// The market's totals after this backing.
    pub yes_total_sol: f64,
    pub no_total_sol: f64,
    /// YES's share of everything backed, 0–1: the market's implied probability.
    pub yes_share: f64,
}

#[derive(Object)]
pub struct MarketHistory {
    pub ok: bool,
    pub narrative_id: String,
    /// Oldest first.
    pub points: Vec<MarketPoint>,
    /// `market_event_unavailable` when no event is indexed yet; null otherwise.
    pub note: Option<String>,
}

/// Where a resolved narrative's settlement on chain stands.
#[derive(Object)]
pub struct SettlementProgress {
    /// `voting` (the service's vote or other oracles pending), `hold` (outcome proposed, the
    /// 48 h payout hold running), `disputed`, `finalized`, `refunded`, or `failed` (the job gave
    /// up; see `last_error`).
    pub stage: String,
    /// The settlement job: `queued`, `running`, `done` or `dead`.
    pub job_status: String,
    pub attempts: i32,
    pub last_error: Option<String>,
    /// When the job looks at the chain next, while it is queued.
    pub next_attempt_at: Option<String>,
    /// The proposed or final outcome on chain: `'true'` (YES) or `'false'` (NO).
    pub outcome: Option<String>,
    pub hold_ends_at: Option<String>,
    pub finalized_at: Option<String>,
}

#[derive(Object)]
pub struct SettlementStatus {
    pub ok: bool,
    pub narrative_id: String,
    pub oracle_status: String,
    /// Null until a verdict queued the settlement.
    pub settlement: Option<SettlementProgress>,
}

#[derive(Object)]
pub struct Rules {
    pub resolution_source: String,
    pub criteria: String,
}

#[derive(Object)]
pub struct RulesWrapped {
    pub rules: Rules,
}

impl NarrativeHistoryApi {
    async fn narrative(&self, id: &str) -> Result<narratives::Model, ApiError> {
        let id = crate::validate::uuid("id", id)?.to_string();
        narratives::Entity::find_by_id(id)
            .one(self.state.store.db())
            .await?
            .ok_or_else(|| ApiError::not_found("narrative"))
    }
}

#[OpenApi(prefix_path = "/narratives", tag = "Tag::Narratives")]
impl NarrativeHistoryApi {
    /// The narrative's score each time it was computed, oldest first.
    #[oai(path = "/:id/score-history", method = "get")]
    async fn score_history(&self, id: Path<String>) -> ApiResult<Json<ScoreHistory>> {
        let narrative = self.narrative(&id.0).await?;
        let points = narrative_score_history::Entity::find()
            .filter(narrative_score_history::Column::NarrativeId.eq(narrative.id.as_str()))
            .order_by_asc(narrative_score_history::Column::RecordedAt)
            .order_by_asc(narrative_score_history::Column::Id)
            .all(self.state.store.db())
            .await
            .map_err(ApiError::from)?
            .into_iter()
            .map(|p| ScorePoint {
                at: iso(p.recorded_at),
                score: p.score,
                originality: p.originality,
                uncertainty: p.uncertainty,
            })
            .collect();
        Ok(Json(ScoreHistory {
            ok: true,
            narrative_id: narrative.id,
            points,
        }))
    }

    /// Every backing of the narrative's market from the indexed events, with the totals after
    /// it, oldest first: the latest `limit` (default 200, at most 1000).
    #[oai(path = "/:id/market-history", method = "get")]
    async fn market_history(
        &self,
        id: Path<String>,
        limit: Query<Option<i64>>,
    ) -> ApiResult<Json<MarketHistory>> {
        let narrative = self.narrative(&id.0).await?;
        let limit = clamp(limit.0, 200, 1, 1_000) as u64;
        let mut events = program_events::Entity::find()
            .filter(program_events::Column::Program.eq("binary_vault"))
            .filter(program_events::Column::Name.eq("MarketBacked"))
            .filter(program_events::Column::Subject.eq(narrative.market_id.as_str()))
            .order_by_desc(program_events::Column::Slot)
            .order_by_desc(program_events::Column::TxIndex)
            .order_by_desc(program_events::Column::InstructionIndex)
            .order_by_desc(program_events::Column::InnerIndex)
            .limit(limit)
            .all(self.state.store.db())
            .await
            .map_err(ApiError::from)?;
        events.reverse();
        let points: Vec<MarketPoint> = events.into_iter().filter_map(market_point).collect();
        let note = points.is_empty().then(|| NO_MARKET_EVENTS.to_owned());
        Ok(Json(MarketHistory {
            ok: true,
            narrative_id: narrative.id,
            points,
            note,
        }))
    }

    /// Where the narrative's settlement on chain stands, from its settlement job and the
    /// indexed market.
    #[oai(path = "/:id/settlement", method = "get")]
    async fn settlement(&self, id: Path<String>) -> ApiResult<Json<SettlementStatus>> {
        let narrative = self.narrative(&id.0).await?;
        let db = self.state.store.db();
        let job = jobs::Entity::find()
            .filter(jobs::Column::Kind.eq(crate::settlement::SETTLE_NARRATIVE))
            .filter(jobs::Column::Subject.eq(narrative.id.as_str()))
            .order_by_desc(jobs::Column::Id)
            .one(db)
            .await
            .map_err(ApiError::from)?;
        let settlement = match job {
            None => None,
            Some(job) => {
                let market = crate::indexed::markets_by_id(db, [narrative.market_id.clone()])
                    .await
                    .map_err(ApiError::from)?
                    .remove(&narrative.market_id);
                Some(progress(job, market.as_ref()))
            }
        };
        Ok(Json(SettlementStatus {
            ok: true,
            narrative_id: narrative.id,
            oracle_status: narrative.oracle_status,
            settlement,
        }))
    }

    /// How the narrative resolves, wrapped in `rules`; 404 when none are attached.
    #[oai(path = "/:id/rules", method = "get")]
    async fn rules(&self, id: Path<String>) -> ApiResult<Json<RulesWrapped>> {
        let narrative = self.narrative(&id.0).await?;
        let rules = narrative_rules::Entity::find_by_id(narrative.id)
            .one(self.state.store.db())
            .await
            .map_err(ApiError::from)?
            .ok_or_else(|| ApiError::not_found("rules"))?;
        Ok(Json(RulesWrapped {
            rules: Rules {
                resolution_source: rules.resolution_source,
                criteria: rules.criteria,
            },
        }))
    }
}

/// One point of a market's history from its indexed `MarketBacked` event.
fn market_point(row: program_events::Model) -> Option<MarketPoint> {
    let Some(ProgramEvent::Binary(BinaryEvent::MarketBacked(e))) =
        decode_event(&narrative_sdk::ids::BINARY_VAULT, &row.data)
    else {
        tracing::warn!(id = row.id, "an indexed MarketBacked event does not decode");
        return None;
    };
    let total = u128::from(e.yes_total) + u128::from(e.no_total);
    // Floored to four decimals; 0 for an empty market.
    let share = |part: u64| {
        (u128::from(part) * 10_000)
            .checked_div(total)
            .map_or(0.0, |bps| bps as f64 / 10_000.0)
    };
    Some(MarketPoint {
        at: iso(e.timestamp),
        slot: row.slot,
        signature: row.signature,
        side: if e.side == Side::Yes { "true" } else { "false" }.into(),
        amount_sol: lamports_sol(e.amount),
        yes_total_sol: lamports_sol(e.yes_total),
        no_total_sol: lamports_sol(e.no_total),
        yes_share: share(e.yes_total),
    })
}

fn lamports_sol(lamports: u64) -> f64 {
    sol(i64::try_from(lamports).unwrap_or(i64::MAX))
}

/// The stage of a settlement from its job and the market as indexed (binary_vault's
/// `oracle_status`: 0 open, 1 resolved, 3 disputed, 4 refund).
fn progress(job: jobs::Model, market: Option<&markets::Model>) -> SettlementProgress {
    let finalized = market.is_some_and(|m| m.finalized);
    let stage = match market {
        _ if job.status == "dead" && !finalized => "failed",
        Some(m) if m.finalized => "finalized",
        Some(m) if m.oracle_status == 4 => "refunded",
        Some(m) if m.oracle_status == 3 => "disputed",
        Some(m) if m.outcome.is_some() => "hold",
        _ => "voting",
    };
    let proposed = market.filter(|m| m.outcome.is_some() && m.resolution_proposed_at > 0);
    SettlementProgress {
        stage: stage.into(),
        next_attempt_at: (job.status == "queued").then(|| iso(job.run_at)),
        job_status: job.status,
        attempts: job.attempts,
        last_error: job.last_error,
        outcome: market
            .and_then(|m| m.outcome.as_deref())
            .map(|o| if o == "yes" { "true" } else { "false" }.to_owned()),
        hold_ends_at: proposed.map(|m| {
            iso(m
                .resolution_proposed_at
                .saturating_add(m.resolution_timelock_secs))
        }),
        finalized_at: market.filter(|m| m.finalized).map(|m| iso(m.finalized_at)),
    }
}
