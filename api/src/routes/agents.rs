//! Agents (spec 4.10): registration (an API key, shown once; about 5 per hour per IP), the
//! narrative feed (about 60 per minute per key), portfolio, history, the leaderboard, verdicts
//! and webhooks.

use std::sync::Arc;

use poem::Request;
use poem_openapi::param::Query;
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};

use crate::clock::iso;
use crate::domain::agents::positions::{self, Position, HISTORY_SIZE, PORTFOLIO_SIZE};
use crate::domain::agents::registration::WalletSignature;
use crate::domain::agents::resolve::{self, Verdict};
use crate::domain::agents::webhooks::{self, WebhookEvent};
use crate::domain::agents::{agent_of, feed, registration};
use crate::error::{refusals, Answer, ApiError};
use crate::http::auth::ApiKeyAuth;
use crate::http::client_ip::client_ip;
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{
    page, sol, Base58Signature, Confidence, HttpsUrl, NarrativeId, NarrativeSide, OracleStatus,
    Text, UnixSeconds, Wallet,
};

pub struct AgentsApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct RegisterAgent {
    /// Without `wallet_signature` a label: the agent is registered, but its wallet is unproven
    /// and confers nothing (no oracle authority).
    pub wallet_address: Wallet,
    pub name: Text<100>,
    pub description: Option<Text<1000, 0>>,
    /// Optional proof of the wallet: its ed25519 signature (base58) of
    /// `narrative-market-service:agent-register:<wallet_address>:<name>:issued-at:<issued_at>`
    /// (`name` trimmed). With `issued_at`; a signature that is not the wallet's, stale or used
    /// before is refused (401 `invalid_signature`) and nothing is registered.
    pub wallet_signature: Option<Base58Signature>,
    /// When the wallet signed (unix seconds): accepted within 300 s before the server's time
    /// (60 s after), once. Required with `wallet_signature`.
    pub issued_at: Option<UnixSeconds>,
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
    /// Whether the registration proved the wallet (`wallet_signature`); an unproven wallet is a
    /// label.
    pub wallet_proven: bool,
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

#[derive(Object)]
pub struct ResolveRequest {
    pub narrative_id: NarrativeId,
    /// `true` or `false`.
    pub resolution: NarrativeSide,
    /// At most 10,000 characters; stored truncated to 1,000.
    pub evidence: Option<Text<10_000, 0>>,
    /// 0.7 to 1.0.
    pub confidence: Confidence,
}

#[derive(Object)]
pub struct Resolved {
    pub ok: bool,
    pub narrative_id: NarrativeId,
    /// `resolved_true` or `resolved_false`.
    pub resolution: OracleStatus,
    pub message: String,
}

#[derive(Object)]
pub struct WebhookRequest {
    pub url: HttpsUrl,
    #[oai(validator(min_items = 1, max_items = 8))]
    pub events: Vec<WebhookEvent>,
}

#[derive(Object)]
pub struct WebhookRegistered {
    pub ok: bool,
    pub message: String,
    pub url: HttpsUrl,
    pub events: Vec<WebhookEvent>,
    /// The Standard Webhooks secret (`whsec_…`) deliveries are signed with: random, made by
    /// this registration and shown only here (registering again makes a new one).
    pub signing_secret: String,
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

impl From<Position> for AgentPosition {
    fn from(p: Position) -> Self {
        let b = p.backing;
        AgentPosition {
            narrative_id: p.narrative.as_ref().map(|n| n.id.clone()),
            narratives: p.narrative.map(|n| PositionNarrative {
                title: n.title,
                oracle_status: n.oracle_status,
            }),
            yield_type: p.yield_type,
            amount_sol: sol(b.amount),
            usd_equivalent: p.usd_equivalent,
            payout_sol: sol(b.payout),
            claimed: b.claimed,
            side: b.side,
            created_at: iso(b.first_backed_at),
            id: b.address,
        }
    }
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

refusals! {
    /// 401 `invalid_signature` for a wallet proof that fails.
    RegisterRefusals: [400, 413];
    ResolveRefusals: [400, 403, 404, 413, 503];
    WebhookRefusals: [400, 403, 413];
    AgentReadRefusals: [403];
    LeaderboardRefusals: [400];
    FeedRefusals: [];
}

#[OpenApi(prefix_path = "/agent", tag = "Tag::Agents")]
impl AgentsApi {
    /// Register an agent: its API key (Free tier) is in the answer, once. The wallet is proven
    /// only with `wallet_signature`; otherwise it is a label that confers nothing.
    #[oai(path = "/register", method = "post")]
    async fn register(
        &self,
        req: &Request,
        body: Json<RegisterAgent>,
    ) -> Answer<Registered, RegisterRefusals> {
        let body = body.0;
        let signed = match (body.wallet_signature, body.issued_at) {
            (Some(signature), Some(issued_at)) => Some(WalletSignature {
                signature,
                issued_at,
            }),
            (None, None) => None,
            // Half a proof proves nothing: refused like a wrong one, so that a client that
            // meant to prove its wallet is not registered with a bare label.
            _ => {
                return Err(ApiError::invalid_signature(
                    "a wallet proof needs both wallet_signature and issued_at",
                )
                .into())
            }
        };
        let registered = registration::register(
            &self.state,
            client_ip(req),
            body.wallet_address,
            body.name.into_string(),
            body.description.and_then(Text::non_empty),
            signed,
        )
        .await?;
        let agent = registered.agent;
        Ok(Registered::Created(Json(AgentRegistered {
            ok: true,
            agent: Agent {
                id: agent.id,
                api_key: registered.api_key,
                name: agent.name,
                wallet_address: agent.wallet_address,
                wallet_proven: agent.wallet_proven,
                created_at: iso(agent.created_at),
            },
        })))
    }

    /// Submit a verdict on a narrative in `open`, `live` or `pending` (agents an operator
    /// granted oracle authority; 403 for others): logged, the narrative's `oracle_status` set,
    /// and settlement on chain enqueued.
    #[oai(path = "/resolve", method = "post")]
    async fn resolve(
        &self,
        auth: ApiKeyAuth,
        body: Json<ResolveRequest>,
    ) -> Answer<Json<Resolved>, ResolveRefusals> {
        let body = body.0;
        let resolution = resolve::resolve(
            &self.state,
            &auth.0,
            Verdict {
                narrative_id: body.narrative_id,
                outcome: body.resolution,
                evidence: body.evidence.and_then(Text::non_empty),
                confidence: body.confidence,
            },
        )
        .await?;
        Ok(Json(Resolved {
            ok: true,
            narrative_id: body.narrative_id,
            resolution,
            message: "verdict recorded; settlement on chain is queued".into(),
        }))
    }

    /// Register (or replace) the agent's webhook for `narrative.created` and/or
    /// `narrative.resolved`. Deliveries follow Standard Webhooks (see docs/api.md); the URL must
    /// be https on a public address.
    #[oai(path = "/webhook", method = "post")]
    async fn webhook(
        &self,
        auth: ApiKeyAuth,
        body: Json<WebhookRequest>,
    ) -> Answer<Json<WebhookRegistered>, WebhookRefusals> {
        let body = body.0;
        let registration = webhooks::register(&self.state, &auth.0, body.url, body.events).await?;
        Ok(Json(WebhookRegistered {
            ok: true,
            message: "webhook registered".into(),
            url: registration.url,
            events: registration.events,
            signing_secret: registration.signing_secret,
        }))
    }

    /// The agent wallet's open (unclaimed) positions, the 500 newest.
    #[oai(path = "/portfolio", method = "get")]
    async fn portfolio(&self, auth: ApiKeyAuth) -> Answer<Json<Portfolio>, AgentReadRefusals> {
        let agent = agent_of(&self.state, &auth.0, "this key is not an agent's").await?;
        let held =
            positions::positions(&self.state, &agent.wallet_address, true, PORTFOLIO_SIZE).await?;
        Ok(Json(Portfolio {
            ok: true,
            wallet_address: agent.wallet_address,
            positions: held.into_iter().map(AgentPosition::from).collect(),
        }))
    }

    /// The agent wallet's 100 most recent backings, claimed ones included.
    #[oai(path = "/history", method = "get")]
    async fn history(&self, auth: ApiKeyAuth) -> Answer<Json<History>, AgentReadRefusals> {
        let agent = agent_of(&self.state, &auth.0, "this key is not an agent's").await?;
        let held =
            positions::positions(&self.state, &agent.wallet_address, false, HISTORY_SIZE).await?;
        Ok(Json(History {
            ok: true,
            wallet_address: agent.wallet_address,
            backings: held.into_iter().map(AgentPosition::from).collect(),
        }))
    }

    /// Agents ranked by realised PnL (`limit` default 50, clamped to 1–200; `offset`).
    #[oai(path = "/leaderboard", method = "get")]
    async fn leaderboard(
        &self,
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
    ) -> Answer<Json<Leaderboard>, LeaderboardRefusals> {
        let (limit, offset) = page(limit.0, offset.0, 50, 200);
        let standings = positions::leaderboard(&self.state, limit, offset).await?;
        Ok(Json(Leaderboard {
            ok: true,
            leaderboard: standings
                .into_iter()
                .map(|s| LeaderboardEntry {
                    total_backings: s.total_backings,
                    total_volume_sol: sol(s.volume),
                    total_pnl_sol: sol(s.pnl),
                    created_at: iso(s.agent.created_at),
                    id: s.agent.id,
                    name: s.agent.name,
                    wallet_address: s.agent.wallet_address,
                })
                .collect(),
        }))
    }

    /// Up to 50 narratives in `open`, `live` or `pending`, newest first, with their backing
    /// totals from the indexed markets.
    #[oai(path = "/feed", method = "get")]
    async fn feed(&self, auth: ApiKeyAuth) -> Answer<Json<AgentFeed>, FeedRefusals> {
        let items = feed::feed(&self.state, &auth.0).await?;
        Ok(Json(AgentFeed {
            ok: true,
            narratives: items
                .into_iter()
                .map(|item| {
                    let n = item.narrative;
                    AgentFeedItem {
                        total_backed_sol: item.total_backed_sol,
                        backer_count: item.backer_count,
                        challenge_count: item.challenge_count,
                        id: n.id,
                        title: n.title,
                        thesis: n.thesis,
                        category: n.category,
                        oracle_status: n.oracle_status,
                        created_at: iso(n.created_at),
                    }
                })
                .collect(),
        }))
    }
}
