//! What a narrative has been through (spec 4.1): its score over time, its market's backings,
//! its resolution rules, and where its settlement on chain stands.

use std::sync::Arc;

use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::narratives::history::{self, SettlementStage, NO_MARKET_EVENTS};
use crate::error::{refusals, Answer};
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{clamp, sol, NarrativeId, NarrativeSide};

pub struct NarrativeHistoryApi {
    pub state: Arc<AppState>,
}

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
    pub side: NarrativeSide,
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
    pub stage: SettlementStage,
    /// The settlement job: `queued`, `running`, `done` or `dead`.
    pub job_status: String,
    /// Attempts so far. Why an attempt failed (the node's, database's or keeper's words) is
    /// the operators' to read, on the queue page, and is not shown here.
    pub attempts: i32,
    /// When the job looks at the chain next, while it is queued.
    pub next_attempt_at: Option<String>,
    /// The proposed or final outcome on chain.
    pub outcome: Option<NarrativeSide>,
    pub hold_ends_at: Option<String>,
    pub finalized_at: Option<String>,
    /// The dispute open on the market, while one is; null otherwise.
    pub dispute: Option<PendingDispute>,
}

/// An open dispute and when it can be decided.
#[derive(Object)]
pub struct PendingDispute {
    pub disputer: String,
    pub bond_sol: f64,
    pub opened_at: String,
    /// From when the operator may overturn the outcome or refund the market (24 h after the
    /// dispute opened); upholding it may be immediate.
    pub ruling_from: String,
    /// When anyone may lapse it if nobody ruled (the resolution delay after the hold's end):
    /// the proposed outcome then stands and the bond is forfeit.
    pub lapses_at: String,
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

refusals! {
    HistoryRefusals: [400, 404];
}

#[OpenApi(prefix_path = "/narratives", tag = "Tag::Narratives")]
impl NarrativeHistoryApi {
    /// The narrative's score each time it was computed, oldest first.
    #[oai(path = "/:id/score-history", method = "get")]
    async fn score_history(
        &self,
        id: Path<NarrativeId>,
    ) -> Answer<Json<ScoreHistory>, HistoryRefusals> {
        let (narrative, points) = history::score_history(&self.state, id.0).await?;
        Ok(Json(ScoreHistory {
            ok: true,
            narrative_id: narrative.id,
            points: points
                .into_iter()
                .map(|p| ScorePoint {
                    at: iso(p.recorded_at),
                    score: p.score,
                    originality: p.originality,
                    uncertainty: p.uncertainty,
                })
                .collect(),
        }))
    }

    /// Every backing of the narrative's market from the indexed events, with the totals after
    /// it, oldest first: the latest `limit` (default 200, clamped to 1–1000).
    #[oai(path = "/:id/market-history", method = "get")]
    async fn market_history(
        &self,
        id: Path<NarrativeId>,
        limit: Query<Option<i64>>,
    ) -> Answer<Json<MarketHistory>, HistoryRefusals> {
        let limit = clamp(limit.0, 200, 1, 1_000) as u64;
        let (narrative, points) = history::market_history(&self.state, id.0, limit).await?;
        let note = points.is_empty().then(|| NO_MARKET_EVENTS.to_owned());
        Ok(Json(MarketHistory {
            ok: true,
            narrative_id: narrative.id,
            points: points
                .into_iter()
                .map(|p| MarketPoint {
                    at: iso(p.at),
                    slot: p.slot,
                    signature: p.signature,
                    side: p.side,
                    amount_sol: p.amount_sol,
                    yes_total_sol: p.yes_total_sol,
                    no_total_sol: p.no_total_sol,
                    yes_share: p.yes_share,
                })
                .collect(),
            note,
        }))
    }

    /// Where the narrative's settlement on chain stands, from its settlement job and the
    /// indexed market.
    #[oai(path = "/:id/settlement", method = "get")]
    async fn settlement(
        &self,
        id: Path<NarrativeId>,
    ) -> Answer<Json<SettlementStatus>, HistoryRefusals> {
        let (narrative, progress) = history::settlement(&self.state, id.0).await?;
        Ok(Json(SettlementStatus {
            ok: true,
            narrative_id: narrative.id,
            oracle_status: narrative.oracle_status,
            settlement: progress.map(|p| SettlementProgress {
                stage: p.stage,
                next_attempt_at: (p.job.status == "queued").then(|| iso(p.job.run_at)),
                job_status: p.job.status,
                attempts: p.job.attempts,
                outcome: p.outcome,
                hold_ends_at: p.hold_ends_at.map(iso),
                finalized_at: p.finalized_at.map(iso),
                dispute: p.dispute.map(|d| PendingDispute {
                    disputer: d.disputer,
                    bond_sol: sol(d.bond_lamports),
                    opened_at: iso(d.opened_at),
                    ruling_from: iso(d.ruling_from),
                    lapses_at: iso(d.lapses_at),
                }),
            }),
        }))
    }

    /// How the narrative resolves, wrapped in `rules`; 404 when none are attached.
    #[oai(path = "/:id/rules", method = "get")]
    async fn rules(&self, id: Path<NarrativeId>) -> Answer<Json<RulesWrapped>, HistoryRefusals> {
        let rules = history::rules(&self.state, id.0).await?;
        Ok(Json(RulesWrapped {
            rules: Rules {
                resolution_source: rules.resolution_source,
                criteria: rules.criteria,
            },
        }))
    }
}
