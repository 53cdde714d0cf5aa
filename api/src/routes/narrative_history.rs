//! What a narrative has been through (spec 4.1): its score over time, its market's backings
//! from the indexed `MarketBacked` events, and its resolution rules.

use std::sync::Arc;

use narrative_sdk::binary_vault::state::Side;
use narrative_sdk::decode::{decode_event, ProgramEvent};
use narrative_store::entities::{
    narrative_rules, narrative_score_history, narratives, program_events,
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
        let points: Vec<MarketPoint> =
            events
                .into_iter()
                .filter_map(|row| {
                    let Some(ProgramEvent::Binary(
                        narrative_sdk::decode::BinaryEvent::MarketBacked(e),
                    )) = decode_event(&narrative_sdk::ids::BINARY_VAULT, &row.data)
                    else {
                        tracing::warn!(
                            id = row.id,
                            "an indexed MarketBacked event does not decode"
                        );
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
                })
                .collect();
        let note = points.is_empty().then(|| NO_MARKET_EVENTS.to_owned());
        Ok(Json(MarketHistory {
            ok: true,
            narrative_id: narrative.id,
            points,
            note,
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

fn lamports_sol(lamports: u64) -> f64 {
    sol(i64::try_from(lamports).unwrap_or(i64::MAX))
}
