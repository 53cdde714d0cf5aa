//! Verdicts from agents authorised as oracles (spec 3.2, 4.10; who is: `super::oracle`): the narrative's `oracle_status`
//! moves from an eligible one to `resolved_true` / `resolved_false`, the verdict goes to the
//! append-only oracle audit log, settlement on chain and `narrative.resolved` are queued, and the
//! narrative's creator and backers are notified, all in one database transaction.

use narrative_store::entities::{agents, narratives, oracle_audit_log};
use poem::http::StatusCode;
use sea_orm::sea_query::Condition;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use serde_json::json;

use crate::domain::admin::{self, Operator};
use crate::domain::agents::{agent_of, oracle, webhooks};
use crate::domain::keys::Caller;
use crate::domain::notifications;
use crate::domain::system::ensure_running;
use crate::error::ApiError;
use crate::jobs::settle_narrative::SettleNarrative;
use crate::state::AppState;
use crate::values::{Component, Confidence, MarketRef, NarrativeId, NarrativeSide, OracleStatus};

/// Spec 8: evidence is kept up to this many characters.
pub const MAX_EVIDENCE_CHARS: usize = 1_000;

pub struct Verdict {
    pub narrative_id: NarrativeId,
    pub outcome: NarrativeSide,
    pub evidence: Option<String>,
    pub confidence: Confidence,
}

/// Records `verdict` from the agent behind `caller`; the narrative's new status.
pub async fn resolve(
    state: &AppState,
    caller: &Caller,
    verdict: Verdict,
) -> Result<OracleStatus, ApiError> {
    let db = state.store.db();
    ensure_running(db, Component::Agents).await?;
    let refusal = "agent is not authorised to resolve";
    let agent = agent_of(state, caller, refusal).await?;
    // An operator's grant, or a proven wallet under the bootstrap list: never a claimed one.
    // Asked here to refuse without a write; asked again in the verdict's transaction.
    if oracle::authority(state, db, &agent).await?.is_none() {
        return Err(ApiError::ok_false(StatusCode::FORBIDDEN, refusal));
    }
    record(state, Resolver::Agent(&agent.id), verdict)
        .await?
        .ok_or_else(|| {
            ApiError::ok_false(
                StatusCode::NOT_FOUND,
                "narrative not found or not open for resolution",
            )
        })
}

/// Who gives a verdict.
pub enum Resolver<'a> {
    /// An oracle agent, by its id.
    Agent(&'a str),
    /// An operator forcing it (`admin:<wallet>` in the audit log, and a line in the operators'
    /// own log).
    Operator(&'a Operator),
}

/// Records `verdict` by `resolver`: the status moves, the audit log, settlement, notices, the
/// webhook and, for an operator, the operators' log line follow, in one database transaction.
/// `None` when the narrative is unknown or not open for resolution.
pub async fn record(
    state: &AppState,
    resolver: Resolver<'_>,
    verdict: Verdict,
) -> Result<Option<OracleStatus>, ApiError> {
    let actor = match resolver {
        Resolver::Agent(id) => id.to_owned(),
        Resolver::Operator(operator) => format!("admin:{}", operator.0),
    };
    let evidence: String = verdict
        .evidence
        .unwrap_or_default()
        .trim()
        .chars()
        .take(MAX_EVIDENCE_CHARS)
        .collect();
    let outcome = verdict.outcome.into();
    let resolution = OracleStatus::resolved(outcome);
    let id = verdict.narrative_id.to_string();
    let now = state.now();
    let txn = state.store.begin_write().await?;
    if let Resolver::Agent(agent_id) = resolver {
        // The agent's authority as this transaction sees it, with the rows it rests on locked
        // (Postgres; a SQLite write transaction holds the database): the agent's own and, for
        // the bootstrap, its wallet's proven agents, whose revocation revokes the wallet's. A
        // revocation that answered before this commits stops the verdict, and one that comes
        // later waits for it. One statement, in id order, so that two verdicts of one wallet
        // take the locks in the same order.
        let wallet: Option<String> = agents::Entity::find_by_id(agent_id.to_owned())
            .select_only()
            .column(agents::Column::WalletAddress)
            .into_tuple()
            .one(&txn)
            .await?;
        let locked = match wallet {
            Some(wallet) => {
                agents::Entity::find()
                    .filter(
                        Condition::any().add(agents::Column::Id.eq(agent_id)).add(
                            Condition::all()
                                .add(agents::Column::WalletAddress.eq(wallet))
                                .add(agents::Column::WalletProven.eq(true)),
                        ),
                    )
                    .order_by_asc(agents::Column::Id)
                    .lock_exclusive()
                    .all(&txn)
                    .await?
            }
            None => Vec::new(),
        };
        let held = match locked.iter().find(|a| a.id == agent_id) {
            Some(agent) => oracle::authority(state, &txn, agent).await?,
            None => None,
        };
        if held.is_none() {
            return Err(ApiError::ok_false(
                StatusCode::FORBIDDEN,
                "agent is not authorised to resolve",
            ));
        }
    }
    // The status moves only from an eligible one, so two verdicts cannot both win.
    let updated = narratives::Entity::update_many()
        .col_expr(narratives::Column::OracleStatus, resolution.as_str().into())
        .filter(narratives::Column::Id.eq(id.as_str()))
        .filter(narratives::Column::OracleStatus.is_in(OracleStatus::eligible_names()))
        .exec(&txn)
        .await?;
    if updated.rows_affected != 1 {
        return Ok(None);
    }
    let Some(narrative) = narratives::Entity::find_by_id(id.clone()).one(&txn).await? else {
        return Ok(None);
    };
    oracle_audit_log::Entity::insert(oracle_audit_log::ActiveModel {
        id: sea_orm::ActiveValue::NotSet,
        narrative_id: Set(id.clone()),
        agent_id: Set(actor),
        resolution: Set(verdict.outcome == NarrativeSide::Yes),
        confidence: Set(verdict.confidence.get()),
        evidence: Set(evidence.clone()),
        created_at: Set(now),
    })
    .exec_without_returning(&txn)
    .await?;
    let market_id: MarketRef = narrative.market_id.parse().map_err(ApiError::internal)?;
    crate::jobs::enqueue(
        &txn,
        &SettleNarrative {
            narrative_id: verdict.narrative_id,
            market_id,
            outcome: verdict.outcome == NarrativeSide::Yes,
            confidence_bps: verdict.confidence.bps(),
        },
        now,
        now,
    )
    .await?;
    // A hidden narrative's title is in no public read: its backers' notices (a public feed)
    // are not written, and the webhook names it without its title.
    let hidden = narrative.status == narratives::HIDDEN;
    if !hidden {
        let notices = notifications::resolution_notices(
            &txn,
            &narrative,
            verdict.outcome == NarrativeSide::Yes,
        )
        .await?;
        notifications::notify_all(&txn, notices, now).await?;
    }
    webhooks::emit(
        &txn,
        webhooks::WebhookEvent::NarrativeResolved,
        json!({
            "narrative_id": id,
            "title": (!hidden).then_some(&narrative.title),
            "oracle_status": resolution.as_str(),
            "confidence": verdict.confidence.get(),
        }),
        now,
    )
    .await?;
    if let Resolver::Operator(operator) = resolver {
        admin::log(
            &txn,
            operator,
            "narrative.verdict",
            &id,
            json!({"oracle_status": resolution.as_str(), "evidence": evidence}),
            now,
        )
        .await?;
    }
    txn.commit().await?;
    state.chain.jobs_wake.notify_one();
    Ok(Some(resolution))
}
