//! Agents (spec 4.10): registration (an API key, shown once; about 5 per hour per IP) and the
//! narrative feed (up to 50 narratives in `open`, `live` or `pending`, newest first; about 60
//! per minute per key).

use std::collections::HashMap;
use std::sync::Arc;

use narrative_store::entities::agent_webhooks as agent_webhook_rows;
use narrative_store::entities::{
    agents, backings, disputes, markets, narratives, oracle_audit_log,
};
use poem::http::StatusCode;
use poem::Request;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
    TransactionTrait,
};
use serde_json::json;

use crate::agent_webhooks;
use crate::auth::ApiKeyAuth;
use crate::client::client_ip;
use crate::error::{ApiError, ApiResult};
use crate::keys;
use crate::limits::{Policy, AGENT_FEED, AGENT_REGISTRATION};
use crate::routes::Tag;
use crate::settlement;
use crate::state::AppState;
use crate::time::{iso, now};
use crate::validate::{sol, wallet};

/// Agent feed size (spec 8).
pub const FEED_SIZE: u64 = 50;
const FEED_STATES: [&str; 3] = ["open", "live", "pending"];
const MAX_NAME_CHARS: usize = 100;
const MAX_DESCRIPTION_CHARS: usize = 1_000;

pub struct AgentsApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct RegisterAgent {
    pub wallet_address: String,
    pub name: String,
    pub description: Option<String>,
}

/// Spec 2.7.
#[derive(Object)]
pub struct Agent {
    /// `ag_…`.
    pub id: String,
    /// Shown once, here.
    pub api_key: String,
    pub name: String,
    pub wallet_address: String,
    pub created_at: String,
}

#[derive(Object)]
pub struct AgentRegistered {
    pub ok: bool,
    pub agent: Agent,
}

#[derive(ApiResponse)]
pub enum Registered {
    #[oai(status = 201)]
    Created(Json<AgentRegistered>),
}

/// Spec 2.2.
#[derive(Object)]
pub struct AgentFeedItem {
    pub id: String,
    pub title: String,
    pub thesis: String,
    pub category: String,
    /// `open`, `live` or `pending`.
    pub oracle_status: String,
    pub total_backed_sol: f64,
    pub backer_count: i64,
    pub challenge_count: i64,
    pub created_at: String,
}

#[derive(Object)]
pub struct AgentFeed {
    pub ok: bool,
    pub narratives: Vec<AgentFeedItem>,
}

impl AgentsApi {
    /// The agent behind the calling key; 403 with `refusal` for a key that is not an agent's.
    async fn agent_of(&self, auth: &ApiKeyAuth, refusal: &str) -> Result<agents::Model, ApiError> {
        agents::Entity::find()
            .filter(agents::Column::ApiKeyId.eq(auth.0.key_id.as_str()))
            .one(self.state.store.db())
            .await?
            .ok_or_else(|| ApiError::ok_false(StatusCode::FORBIDDEN, refusal))
    }

    /// `wallet`'s backings, newest first, as positions with their narratives.
    async fn positions(
        &self,
        wallet: &str,
        open_only: bool,
    ) -> Result<Vec<AgentPosition>, ApiError> {
        let db = self.state.store.db();
        let mut query = backings::Entity::find().filter(backings::Column::Backer.eq(wallet));
        if open_only {
            query = query
                .filter(backings::Column::Claimed.eq(false))
                .filter(backings::Column::Closed.eq(false));
        }
        let held = query
            .order_by_desc(backings::Column::LastBackedAt)
            .order_by_asc(backings::Column::Address)
            .all(db)
            .await?;
        let market_ids: Vec<String> = held.iter().map(|b| b.market_id.clone()).collect();
        let variants: HashMap<String, String> = markets::Entity::find()
            .filter(markets::Column::MarketId.is_in(market_ids.clone()))
            .all(db)
            .await?
            .into_iter()
            .map(|m| (m.market_id, m.variant))
            .collect();
        let stories: HashMap<String, narratives::Model> = narratives::Entity::find()
            .filter(narratives::Column::MarketId.is_in(market_ids))
            .all(db)
            .await?
            .into_iter()
            .map(|n| (n.market_id.clone(), n))
            .collect();
        let price = self.state.prices.sol_usd().await.unwrap_or_else(|error| {
            tracing::warn!(error = %format!("{error:#}"), "price feed unavailable; usd_equivalent is 0");
            0.0
        });
        Ok(held
            .into_iter()
            .map(|b| {
                let story = stories.get(&b.market_id);
                AgentPosition {
                    narrative_id: story.map(|n| n.id.clone()),
                    narratives: story.map(|n| PositionNarrative {
                        title: n.title.clone(),
                        oracle_status: n.oracle_status.clone(),
                    }),
                    yield_type: variants
                        .get(&b.market_id)
                        .cloned()
                        .unwrap_or_else(|| "unknown".into()),
                    amount_sol: sol(b.amount),
                    usd_equivalent: (sol(b.amount) * price * 100.0).round() / 100.0,
                    payout_sol: sol(b.payout),
                    claimed: b.claimed,
                    side: b.side,
                    created_at: iso(b.first_backed_at),
                    id: b.address,
                }
            })
            .collect())
    }

    /// Counts a request against `policy` for `subject`; 429 `rate_limit_exceeded` (spec 7)
    /// with `resets_at` and `retry-after` past the limit.
    async fn limit(&self, policy: &Policy, subject: &str) -> Result<(), ApiError> {
        let decision = self.state.limiter.hit(policy, subject).await;
        if decision.allowed {
            return Ok(());
        }
        Err(ApiError::window_exhausted(
            "rate_limit_exceeded",
            format!("at most {} per {} s", policy.limit, policy.window_secs),
            decision.retry_after_secs,
        ))
    }
}

fn text(field: &str, value: &str, max: usize) -> Result<String, ApiError> {
    let value = value.trim();
    if value.is_empty() || value.chars().count() > max {
        return Err(ApiError::validation(format!(
            "{field} required, at most {max} characters"
        )));
    }
    Ok(value.to_owned())
}

#[derive(Object)]
pub struct ResolveRequest {
    pub narrative_id: String,
    /// `true` or `false`.
    pub resolution: String,
    /// Stored, truncated to 1,000 characters.
    pub evidence: Option<String>,
    /// 0.7 to 1.0.
    pub confidence: f64,
}

#[derive(Object)]
pub struct Resolved {
    pub ok: bool,
    pub narrative_id: String,
    /// `resolved_true` or `resolved_false`.
    pub resolution: String,
    pub message: String,
}

#[derive(Object)]
pub struct WebhookRequest {
    pub url: String,
    /// `narrative.created`, `narrative.resolved`.
    pub events: Vec<String>,
}

#[derive(Object)]
pub struct WebhookRegistered {
    pub ok: bool,
    pub message: String,
    pub url: String,
    pub events: Vec<String>,
}

/// Spec 2.7's agent position.
#[derive(Object)]
pub struct AgentPosition {
    /// The backing account.
    pub id: String,
    pub narrative_id: Option<String>,
    /// `yes` or `no`.
    pub side: String,
    pub amount_sol: f64,
    pub usd_equivalent: f64,
    /// The market variant: `yield` or `classic`.
    pub yield_type: String,
    pub claimed: bool,
    pub payout_sol: f64,
    pub created_at: String,
    pub narratives: Option<PositionNarrative>,
}

#[derive(Object)]
pub struct PositionNarrative {
    pub title: String,
    pub oracle_status: String,
}

#[derive(Object)]
pub struct Portfolio {
    pub ok: bool,
    pub wallet_address: String,
    pub positions: Vec<AgentPosition>,
}

#[derive(Object)]
pub struct History {
    pub ok: bool,
    pub wallet_address: String,
    pub backings: Vec<AgentPosition>,
}

/// Spec 2.7's leaderboard entry.
#[derive(Object)]
pub struct LeaderboardEntry {
    pub id: String,
    pub name: String,
    pub wallet_address: String,
    pub total_backings: u64,
    pub total_volume_sol: f64,
    /// Realised: payouts of claimed backings minus what they staked.
    pub total_pnl_sol: f64,
    pub created_at: String,
}

#[derive(Object)]
pub struct Leaderboard {
    pub ok: bool,
    pub leaderboard: Vec<LeaderboardEntry>,
}

/// Spec 8: agent history size.
const HISTORY_SIZE: usize = 100;

/// Spec 8: evidence is kept up to this many characters.
pub const MAX_EVIDENCE_CHARS: usize = 1_000;

#[OpenApi(prefix_path = "/agent", tag = "Tag::Agents")]
impl AgentsApi {
    /// Register an agent: its API key (Free tier) is in the answer, once.
    #[oai(path = "/register", method = "post")]
    async fn register(&self, req: &Request, body: Json<RegisterAgent>) -> ApiResult<Registered> {
        let ip = client_ip(req).unwrap_or_else(|| "unknown".into());
        self.limit(&AGENT_REGISTRATION, &ip).await?;
        let body = body.0;
        let owner = wallet("wallet_address", &body.wallet_address)?.to_string();
        let name = text("name", &body.name, MAX_NAME_CHARS)?;
        let description = match body.description.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(d) => Some(text("description", d, MAX_DESCRIPTION_CHARS)?),
        };
        let db = self.state.store.db();
        let txn = db.begin().await.map_err(ApiError::from)?;
        let issued = keys::issue(&txn, "free", Some(owner.clone()), Some(name.clone())).await?;
        let agent = agents::Model {
            id: format!("ag_{}", uuid::Uuid::new_v4().simple()),
            name,
            description,
            wallet_address: owner,
            api_key_id: issued.row.id.clone(),
            created_at: now(),
        };
        agents::Entity::insert(agents::ActiveModel {
            id: Set(agent.id.clone()),
            name: Set(agent.name.clone()),
            description: Set(agent.description.clone()),
            wallet_address: Set(agent.wallet_address.clone()),
            api_key_id: Set(agent.api_key_id.clone()),
            created_at: Set(agent.created_at),
        })
        .exec_without_returning(&txn)
        .await
        .map_err(ApiError::from)?;
        txn.commit().await.map_err(ApiError::from)?;
        Ok(Registered::Created(Json(AgentRegistered {
            ok: true,
            agent: Agent {
                id: agent.id,
                api_key: issued.key,
                name: agent.name,
                wallet_address: agent.wallet_address,
                created_at: iso(agent.created_at),
            },
        })))
    }

    /// Submit a verdict on a narrative in `open`, `live` or `pending` (agents authorised as
    /// oracles): logged, the narrative's `oracle_status` set, and settlement on chain enqueued.
    #[oai(path = "/resolve", method = "post")]
    async fn resolve(
        &self,
        auth: ApiKeyAuth,
        body: Json<ResolveRequest>,
    ) -> ApiResult<Json<Resolved>> {
        let db = self.state.store.db();
        crate::system::ensure_running(db, "agents").await?;
        let agent = self
            .agent_of(&auth, "agent is not authorised to resolve")
            .await?;
        if !self
            .state
            .oracle_agent_wallets
            .contains(&agent.wallet_address)
        {
            return Err(ApiError::ok_false(
                StatusCode::FORBIDDEN,
                "agent is not authorised to resolve",
            )
            .into());
        }
        let body = body.0;
        let outcome = match body.resolution.trim() {
            "true" => true,
            "false" => false,
            _ => return Err(ApiError::validation("resolution must be true or false").into()),
        };
        if !(0.7..=1.0).contains(&body.confidence) {
            return Err(ApiError::validation("confidence must be between 0.7 and 1.0").into());
        }
        let evidence: String = body
            .evidence
            .unwrap_or_default()
            .trim()
            .chars()
            .take(MAX_EVIDENCE_CHARS)
            .collect();
        let not_found = || {
            ApiError::ok_false(
                StatusCode::NOT_FOUND,
                "narrative not found or not open for resolution",
            )
        };
        let narrative_id = crate::validate::uuid("narrative_id", &body.narrative_id)
            .map_err(|_| not_found())?
            .to_string();
        let resolution = if outcome {
            "resolved_true"
        } else {
            "resolved_false"
        };
        let txn = db.begin().await.map_err(ApiError::from)?;
        // The status moves only from an eligible one, so two verdicts cannot both win.
        let updated = narratives::Entity::update_many()
            .col_expr(narratives::Column::OracleStatus, resolution.into())
            .filter(narratives::Column::Id.eq(narrative_id.as_str()))
            .filter(narratives::Column::OracleStatus.is_in(FEED_STATES))
            .exec(&txn)
            .await
            .map_err(ApiError::from)?;
        if updated.rows_affected != 1 {
            return Err(not_found().into());
        }
        let narrative = narratives::Entity::find_by_id(narrative_id.clone())
            .one(&txn)
            .await
            .map_err(ApiError::from)?
            .ok_or_else(not_found)?;
        oracle_audit_log::Entity::insert(oracle_audit_log::ActiveModel {
            id: sea_orm::ActiveValue::NotSet,
            narrative_id: Set(narrative_id.clone()),
            agent_id: Set(agent.id.clone()),
            resolution: Set(outcome),
            confidence: Set(body.confidence),
            evidence: Set(evidence),
            created_at: Set(now()),
        })
        .exec_without_returning(&txn)
        .await
        .map_err(ApiError::from)?;
        let mut market_id = [0u8; 32];
        hex::decode_to_slice(&narrative.market_id, &mut market_id).map_err(ApiError::internal)?;
        let confidence_bps = (body.confidence * 10_000.0).round() as u16;
        crate::jobs::enqueue_about(
            &txn,
            settlement::SETTLE_NARRATIVE,
            Some(&narrative_id),
            settlement::payload(&narrative_id, &market_id, outcome, confidence_bps),
            now(),
        )
        .await
        .map_err(ApiError::from)?;
        agent_webhooks::emit(
            &txn,
            agent_webhooks::NARRATIVE_RESOLVED,
            json!({
                "narrative_id": narrative_id,
                "title": narrative.title,
                "oracle_status": resolution,
                "confidence": body.confidence,
            }),
        )
        .await
        .map_err(ApiError::from)?;
        txn.commit().await.map_err(ApiError::from)?;
        self.state.jobs_wake.notify_one();
        Ok(Json(Resolved {
            ok: true,
            narrative_id,
            resolution: resolution.into(),
            message: "verdict recorded; settlement on chain is queued".into(),
        }))
    }

    /// Register (or replace) the agent's webhook for `narrative.created` and/or
    /// `narrative.resolved`; deliveries are signed (see the README).
    #[oai(path = "/webhook", method = "post")]
    async fn webhook(
        &self,
        auth: ApiKeyAuth,
        body: Json<WebhookRequest>,
    ) -> ApiResult<Json<WebhookRegistered>> {
        let db = self.state.store.db();
        let agent = self
            .agent_of(&auth, "only agents register webhooks")
            .await?;
        let body = body.0;
        let url = body.url.trim().to_owned();
        let parsed = reqwest::Url::parse(&url)
            .map_err(|_| ApiError::validation("url must be an http(s) URL"))?;
        if !matches!(parsed.scheme(), "http" | "https") || url.len() > 2_000 {
            return Err(ApiError::validation("url must be an http(s) URL").into());
        }
        let mut events: Vec<String> = Vec::new();
        for event in body.events {
            if !agent_webhooks::EVENTS.contains(&event.as_str()) {
                return Err(ApiError::validation(format!(
                    "events must be among {}",
                    agent_webhooks::EVENTS.join(", ")
                ))
                .into());
            }
            if !events.contains(&event) {
                events.push(event);
            }
        }
        if events.is_empty() {
            return Err(ApiError::validation("events required").into());
        }
        agent_webhook_rows::Entity::insert(agent_webhook_rows::ActiveModel {
            agent_id: Set(agent.id),
            url: Set(url.clone()),
            events: Set(json!(events)),
            created_at: Set(now()),
        })
        .on_conflict(
            sea_orm::sea_query::OnConflict::column(agent_webhook_rows::Column::AgentId)
                .update_columns([
                    agent_webhook_rows::Column::Url,
                    agent_webhook_rows::Column::Events,
                    agent_webhook_rows::Column::CreatedAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(db)
        .await
        .map_err(ApiError::from)?;
        Ok(Json(WebhookRegistered {
            ok: true,
            message: "webhook registered".into(),
            url,
            events,
        }))
    }

    /// The agent wallet's open (unclaimed) positions.
    #[oai(path = "/portfolio", method = "get")]
    async fn portfolio(&self, auth: ApiKeyAuth) -> ApiResult<Json<Portfolio>> {
        let agent = self.agent_of(&auth, "this key is not an agent's").await?;
        let positions = self.positions(&agent.wallet_address, true).await?;
        Ok(Json(Portfolio {
            ok: true,
            wallet_address: agent.wallet_address,
            positions,
        }))
    }

    /// The agent wallet's 100 most recent backings, claimed ones included.
    #[oai(path = "/history", method = "get")]
    async fn history(&self, auth: ApiKeyAuth) -> ApiResult<Json<History>> {
        let agent = self.agent_of(&auth, "this key is not an agent's").await?;
        let mut backings = self.positions(&agent.wallet_address, false).await?;
        backings.truncate(HISTORY_SIZE);
        Ok(Json(History {
            ok: true,
            wallet_address: agent.wallet_address,
            backings,
        }))
    }

    /// Agents ranked by realised PnL (`limit` default 50, 1–200, and `offset`).
    #[oai(path = "/leaderboard", method = "get")]
    async fn leaderboard(
        &self,
        limit: poem_openapi::param::Query<Option<i64>>,
        offset: poem_openapi::param::Query<Option<i64>>,
    ) -> ApiResult<Json<Leaderboard>> {
        let (limit, offset) = crate::validate::page(limit.0, offset.0, 50, 200);
        let db = self.state.store.db();
        let all = agents::Entity::find()
            .all(db)
            .await
            .map_err(ApiError::from)?;
        let wallets: Vec<String> = all.iter().map(|a| a.wallet_address.clone()).collect();
        // (backings, staked, realised) per wallet.
        let mut totals: HashMap<String, (u64, i64, i64)> = HashMap::new();
        for b in backings::Entity::find()
            .filter(backings::Column::Backer.is_in(wallets))
            .all(db)
            .await
            .map_err(ApiError::from)?
        {
            let t = totals.entry(b.backer).or_default();
            t.0 += 1;
            t.1 = t.1.saturating_add(b.amount);
            if b.claimed {
                t.2 = t.2.saturating_add(b.payout.saturating_sub(b.amount));
            }
        }
        let mut entries: Vec<LeaderboardEntry> = all
            .into_iter()
            .map(|a| {
                let (count, staked, pnl) =
                    totals.get(&a.wallet_address).copied().unwrap_or_default();
                LeaderboardEntry {
                    total_backings: count,
                    total_volume_sol: sol(staked),
                    total_pnl_sol: sol(pnl),
                    created_at: iso(a.created_at),
                    id: a.id,
                    name: a.name,
                    wallet_address: a.wallet_address,
                }
            })
            .collect();
        entries.sort_by(|a, b| {
            b.total_pnl_sol
                .total_cmp(&a.total_pnl_sol)
                .then_with(|| a.id.cmp(&b.id))
        });
        let leaderboard = entries
            .into_iter()
            .skip(offset as usize)
            .take(limit as usize)
            .collect();
        Ok(Json(Leaderboard {
            ok: true,
            leaderboard,
        }))
    }

    /// Up to 50 narratives in `open`, `live` or `pending`, newest first, with their backing
    /// totals from the indexed markets.
    #[oai(path = "/feed", method = "get")]
    async fn feed(&self, auth: ApiKeyAuth) -> ApiResult<Json<AgentFeed>> {
        self.limit(&AGENT_FEED, &auth.0.key_id).await?;
        let db = self.state.store.db();
        let rows = narratives::Entity::find()
            .filter(narratives::Column::OracleStatus.is_in(FEED_STATES))
            .order_by_desc(narratives::Column::CreatedAt)
            .order_by_asc(narratives::Column::Id)
            .limit(FEED_SIZE)
            .all(db)
            .await
            .map_err(ApiError::from)?;
        let market_ids: Vec<String> = rows.iter().map(|n| n.market_id.clone()).collect();
        let totals = crate::indexed::markets_by_id(db, market_ids.clone())
            .await
            .map_err(ApiError::from)?;
        let backers = crate::indexed::distinct_backers(db, market_ids.clone(), None)
            .await
            .map_err(ApiError::from)?;
        let mut challenges: HashMap<String, i64> = HashMap::new();
        for dispute in disputes::Entity::find()
            .filter(disputes::Column::MarketId.is_in(market_ids))
            .all(db)
            .await
            .map_err(ApiError::from)?
        {
            *challenges.entry(dispute.market_id).or_default() += 1;
        }
        let narratives = rows
            .into_iter()
            .map(|n| {
                let market = totals.get(&n.market_id);
                AgentFeedItem {
                    total_backed_sol: market
                        .map_or(0.0, |m| sol(m.yes_total.saturating_add(m.no_total))),
                    backer_count: backers.get(&n.market_id).copied().unwrap_or(0),
                    challenge_count: challenges.get(&n.market_id).copied().unwrap_or(0),
                    id: n.id,
                    title: n.title,
                    thesis: n.thesis,
                    category: n.category,
                    oracle_status: n.oracle_status,
                    created_at: iso(n.created_at),
                }
            })
            .collect();
        Ok(Json(AgentFeed {
            ok: true,
            narratives,
        }))
    }
}
