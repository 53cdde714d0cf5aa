//! What a narrative has been through (spec 4.1): its score over time, its market's backings from
//! the indexed `MarketBacked` events, its resolution rules, and where its settlement on chain
//! stands.

use narrative_sdk::binary_vault::state::Side;
use narrative_sdk::binary_vault::state::{lapses_at, ruling_from};
use narrative_sdk::decode::{decode_event, BinaryEvent, ProgramEvent};
use narrative_store::entities::{
    disputes, jobs, markets, narrative_rules, narrative_score_history, narratives, program_events,
};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::domain::narratives::feed;
use crate::error::ApiError;
use crate::jobs::settle_narrative::SettleNarrative;
use crate::jobs::{queue, JobKind};
use crate::state::AppState;
use crate::values::{enum_value, sol_u64, NarrativeId, NarrativeSide, OracleStatus};

/// The note of a market-history with no indexed event yet.
pub const NO_MARKET_EVENTS: &str = "market_event_unavailable";

/// The narrative's score each time it was computed, oldest first.
pub async fn score_history(
    state: &AppState,
    id: NarrativeId,
) -> Result<(narratives::Model, Vec<narrative_score_history::Model>), ApiError> {
    let narrative = feed::get(state, id).await?;
    let points = narrative_score_history::Entity::find()
        .filter(narrative_score_history::Column::NarrativeId.eq(narrative.id.as_str()))
        .order_by_asc(narrative_score_history::Column::RecordedAt)
        .order_by_asc(narrative_score_history::Column::Id)
        .all(state.store.db())
        .await?;
    Ok((narrative, points))
}

/// One backing of a narrative's market and the totals after it.
pub struct MarketPoint {
    /// The ledger's time of the backing.
    pub at: i64,
    pub slot: i64,
    pub signature: String,
    pub side: NarrativeSide,
    pub amount_sol: f64,
    pub yes_total_sol: f64,
    pub no_total_sol: f64,
    /// YES's share of everything backed, 0–1, floored to four decimals; 0 for an empty market.
    pub yes_share: f64,
}

/// The latest `limit` backings of the narrative's market from the indexed events, oldest
/// first.
pub async fn market_history(
    state: &AppState,
    id: NarrativeId,
    limit: u64,
) -> Result<(narratives::Model, Vec<MarketPoint>), ApiError> {
    let narrative = feed::get(state, id).await?;
    let mut events = program_events::Entity::find()
        .filter(program_events::Column::Program.eq("binary_vault"))
        .filter(program_events::Column::Name.eq("MarketBacked"))
        .filter(program_events::Column::Subject.eq(narrative.market_id.as_str()))
        .order_by_desc(program_events::Column::Slot)
        .order_by_desc(program_events::Column::TxIndex)
        .order_by_desc(program_events::Column::InstructionIndex)
        .order_by_desc(program_events::Column::InnerIndex)
        .limit(limit)
        .all(state.store.db())
        .await?;
    events.reverse();
    let points = events.into_iter().filter_map(market_point).collect();
    Ok((narrative, points))
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
    let yes_share = (u128::from(e.yes_total) * 10_000)
        .checked_div(total)
        .map_or(0.0, |bps| bps as f64 / 10_000.0);
    Some(MarketPoint {
        at: e.timestamp,
        slot: row.slot,
        signature: row.signature,
        side: NarrativeSide::from(e.side),
        amount_sol: sol_u64(e.amount),
        yes_total_sol: sol_u64(e.yes_total),
        no_total_sol: sol_u64(e.no_total),
        yes_share,
    })
}

enum_value!(
    /// Where a resolved narrative's settlement on chain stands.
    SettlementStage,
    "settlement_stage",
    "`voting` (the service's vote or other oracles pending), `hold` (outcome proposed, the 48 h \
     payout hold running), `disputed`, `share_pending_forward` (finalized and claimable; a Yield \
     market's crucible share still waits in the losing vault for its forward to the Echo Pool), \
     `finalized`, `refunded`, or `failed` (the job gave up; an operator retries or cancels it).",
    [
        Voting => "voting",
        Hold => "hold",
        Disputed => "disputed",
        SharePendingForward => "share_pending_forward",
        Finalized => "finalized",
        Refunded => "refunded",
        Failed => "failed",
    ]
);

pub struct SettlementProgress {
    pub stage: SettlementStage,
    pub job: jobs::Model,
    /// The proposed or final outcome on chain.
    pub outcome: Option<NarrativeSide>,
    pub hold_ends_at: Option<i64>,
    pub finalized_at: Option<i64>,
    /// The dispute open on the market, while one is.
    pub dispute: Option<PendingDispute>,
}

/// An open dispute and when it can be decided, as binary_vault counts it.
pub struct PendingDispute {
    pub disputer: String,
    pub bond_lamports: i64,
    pub opened_at: i64,
    /// From when the admin may overturn the outcome or refund the market; upholding it needs
    /// no wait.
    pub ruling_from: i64,
    /// When anyone may lapse it if nobody ruled: the proposed outcome then stands.
    pub lapses_at: i64,
}

/// The narrative and, once a verdict queued its settlement, where that stands (from the job
/// and the indexed market).
pub async fn settlement(
    state: &AppState,
    id: NarrativeId,
) -> Result<(narratives::Model, Option<SettlementProgress>), ApiError> {
    let narrative = feed::get(state, id).await?;
    let db = state.store.db();
    let job = jobs::Entity::find()
        .filter(jobs::Column::Kind.eq(SettleNarrative::NAME))
        .filter(jobs::Column::Subject.eq(narrative.id.as_str()))
        .order_by_desc(jobs::Column::Id)
        .one(db)
        .await?;
    let progress = match job {
        None => None,
        Some(job) => {
            let market = narrative_store::indexed::markets_by_id(db, [narrative.market_id.clone()])
                .await?
                .remove(&narrative.market_id);
            let dispute = match &market {
                Some(m) => pending_dispute(state, m).await?,
                None => None,
            };
            Some(progress(job, market.as_ref(), dispute))
        }
    };
    Ok((narrative, progress))
}

fn outcome_side(market: &markets::Model) -> Option<Side> {
    match market.outcome.as_deref() {
        Some("yes") => Some(Side::Yes),
        Some("no") => Some(Side::No),
        _ => None,
    }
}

/// The market's open dispute, if it has one.
async fn pending_dispute(
    state: &AppState,
    market: &markets::Model,
) -> Result<Option<PendingDispute>, ApiError> {
    let dispute = disputes::Entity::find()
        .filter(disputes::Column::MarketId.eq(market.market_id.as_str()))
        .filter(disputes::Column::Status.eq("open"))
        .filter(disputes::Column::Closed.eq(false))
        .one(state.store.db())
        .await?;
    Ok(dispute.map(|d| {
        let hold_ends_at = market
            .resolution_proposed_at
            .saturating_add(market.resolution_timelock_secs);
        PendingDispute {
            ruling_from: ruling_from(d.opened_at).unwrap_or(i64::MAX),
            lapses_at: lapses_at(d.opened_at, hold_ends_at, market.max_resolution_delay_secs)
                .unwrap_or(i64::MAX),
            disputer: d.disputer,
            bond_lamports: d.bond_lamports,
            opened_at: d.opened_at,
        }
    }))
}

/// The stage of a settlement from its job and the market as indexed.
fn progress(
    job: jobs::Model,
    market: Option<&markets::Model>,
    dispute: Option<PendingDispute>,
) -> SettlementProgress {
    let program_status = market.and_then(|m| {
        u8::try_from(m.oracle_status)
            .ok()
            .and_then(|code| OracleStatus::from_program(code, outcome_side(m)))
    });
    let finalized = market.is_some_and(|m| m.finalized);
    let stage = match (market, program_status) {
        _ if queue::gave_up(&job) && !finalized => SettlementStage::Failed,
        (Some(m), Some(status))
            if m.finalized
                && status != OracleStatus::RefundTriggered
                && m.crucible_amount > 0
                && !m.crucible_forwarded =>
        {
            SettlementStage::SharePendingForward
        }
        (Some(m), _) if m.finalized => SettlementStage::Finalized,
        (_, Some(OracleStatus::RefundTriggered)) => SettlementStage::Refunded,
        (_, Some(OracleStatus::Disputed)) => SettlementStage::Disputed,
        (Some(m), _) if m.outcome.is_some() => SettlementStage::Hold,
        _ => SettlementStage::Voting,
    };
    let proposed = market.filter(|m| m.outcome.is_some() && m.resolution_proposed_at > 0);
    SettlementProgress {
        stage,
        outcome: market.and_then(outcome_side).map(NarrativeSide::from),
        hold_ends_at: proposed.map(|m| {
            m.resolution_proposed_at
                .saturating_add(m.resolution_timelock_secs)
        }),
        finalized_at: market.filter(|m| m.finalized).map(|m| m.finalized_at),
        dispute,
        job,
    }
}

/// How the narrative resolves; 404 when no rules are attached.
pub async fn rules(state: &AppState, id: NarrativeId) -> Result<narrative_rules::Model, ApiError> {
    let narrative = feed::get(state, id).await?;
    narrative_rules::Entity::find_by_id(narrative.id)
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::not_found("rules"))
}
