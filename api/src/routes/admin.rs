//! The operators' surface under `/v1/admin` (spec 5.6, 9.2), every operation behind the admin
//! header pair: the dashboard, Classic market review, narrative moderation (also served at the
//! spec's `/admin/narratives/…`), score recalculation and agents' oracle grants. The job queue's page is
//! `crate::routes::queues_page`.

use std::sync::Arc;

use narrative_store::entities::{market_creations, narratives};
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::admin::{dashboard, moderation, rescore, review, Operator};
use crate::domain::agents::oracle;
use crate::error::{refusals, Answer};
use crate::http::auth::AdminAuth;
use crate::routes::system::ComponentStatus;
use crate::routes::{ConfirmRequest, Tag};
use crate::state::AppState;
use crate::values::{
    AgentId, Base58Signature, CreationId, NarrativeId, NarrativeSide, PreparedId, Text,
};

pub struct AdminApi {
    pub state: Arc<AppState>,
}

fn operator(auth: AdminAuth) -> Operator {
    Operator(auth.0)
}

#[derive(Object)]
pub struct JobCountBody {
    pub kind: String,
    /// `queued`, `running`, `dead`, `done` or `cancelled`.
    pub status: String,
    pub count: i64,
}

#[derive(Object)]
pub struct QueueHealthBody {
    /// `ok`, or `degraded` while a job is dead or a due job waited over 300 s.
    pub status: String,
    pub dead: i64,
    /// Seconds the oldest due job has waited past its time.
    pub oldest_due_secs: i64,
}

#[derive(Object)]
pub struct IndexerLagBody {
    pub name: String,
    pub slot: i64,
    pub updated_at: String,
    /// Seconds since the checkpoint last moved.
    pub lag_secs: i64,
}

#[derive(Object)]
pub struct AdminDashboard {
    pub ok: bool,
    pub jobs: Vec<JobCountBody>,
    pub queue: QueueHealthBody,
    pub indexer: Vec<IndexerLagBody>,
    /// Each component's halt flag, as `GET /v1/system/status` shows it.
    pub halts: Vec<ComponentStatus>,
    /// The Solana RPC node answered a blockhash request within 2 s (one the prepares fetched
    /// in the last 10 s counts).
    pub node_reachable: bool,
    /// The programs' admin changes waiting for their 259,200 s timelock, as indexed.
    pub pending_admin_changes: Vec<PendingAdminChangeBody>,
}

/// A program's proposed admin change and when it can apply.
#[derive(Object)]
pub struct PendingAdminChangeBody {
    /// `binary_vault`, `shield_vault` or `crucible_pool`.
    pub program: String,
    /// The change as indexed (its fields and `proposed_at`).
    pub change: serde_json::Value,
    pub proposed_at: String,
    /// From when the admin may apply it.
    pub applies_at: String,
    /// From when it can no longer be applied (7 days after `applies_at`): propose it again.
    pub expires_at: String,
}

/// A fee-gated market creation as the review sees it.
#[derive(Object)]
pub struct MarketCreationBody {
    /// The creation's id (what approve and reject name).
    pub id: String,
    pub market_id: String,
    pub question: String,
    pub variant: String,
    pub creator: String,
    pub deadline: String,
    /// `pending_review`, `open` or `rejected` (or `prepared` before its confirm).
    pub status: String,
    pub created_at: String,
}

impl From<market_creations::Model> for MarketCreationBody {
    fn from(m: market_creations::Model) -> Self {
        MarketCreationBody {
            id: m.id,
            market_id: m.market_id,
            question: m.question,
            variant: m.variant,
            creator: m.creator,
            deadline: iso(m.deadline),
            status: m.status,
            created_at: iso(m.created_at),
        }
    }
}

#[derive(Object)]
pub struct PendingMarkets {
    pub ok: bool,
    pub markets: Vec<MarketCreationBody>,
}

#[derive(Object)]
pub struct ApprovalPrepared {
    pub ok: bool,
    /// Base64 `approve_market`, for the operator's (the program admin's) wallet to sign.
    pub transaction: String,
    /// `ready_to_confirm`.
    pub status: String,
    pub prepared_id: PreparedId,
    pub blockhash: String,
    pub market: MarketCreationBody,
}

#[derive(Object)]
pub struct ApprovalConfirmed {
    pub ok: bool,
    pub signature: Base58Signature,
    pub market: MarketCreationBody,
}

#[derive(Object)]
pub struct ReviewNote {
    /// Why, for the log; at most 500 characters.
    pub reason: Option<Text<500, 0>>,
}

#[derive(Object)]
pub struct Reviewed {
    pub ok: bool,
    pub market: MarketCreationBody,
}

#[derive(Object)]
pub struct Moderated {
    pub ok: bool,
    pub narrative_id: String,
    /// The narrative's status now (`hidden`, or the one restored).
    pub status: String,
    pub oracle_status: String,
}

impl From<narratives::Model> for Moderated {
    fn from(n: narratives::Model) -> Self {
        Moderated {
            ok: true,
            narrative_id: n.id,
            status: n.status,
            oracle_status: n.oracle_status,
        }
    }
}

#[derive(Object)]
pub struct ForcedVerdict {
    /// `true` or `false`.
    pub outcome: NarrativeSide,
    /// Kept in the audit log, up to 1,000 characters.
    pub evidence: Option<Text<5000, 0>>,
}

#[derive(Object)]
pub struct VerdictRecorded {
    pub ok: bool,
    pub narrative_id: NarrativeId,
    /// `resolved_true` or `resolved_false`; settlement on chain is queued.
    pub oracle_status: String,
}

#[derive(Object)]
pub struct Recalculate {
    /// One narrative; every narrative open for resolution when absent.
    pub narrative_id: Option<NarrativeId>,
}

#[derive(Object)]
pub struct Recalculated {
    pub ok: bool,
    /// Scoring jobs queued.
    pub queued: u64,
}

/// An agent's oracle authority, after a grant or a revocation.
#[derive(Object)]
pub struct OracleAuthority {
    pub ok: bool,
    pub agent_id: String,
    pub wallet_address: String,
    /// Whether the agent proved its wallet at registration.
    pub wallet_proven: bool,
    /// Whether the agent may submit verdicts now.
    pub oracle: bool,
    /// Why it may: `grant` (an operator's) or `bootstrap` (its proven wallet is listed in
    /// `ORACLE_AGENT_WALLETS`); absent when it may not.
    pub authority: Option<String>,
    /// False when the agent already stood so: nothing was written or logged.
    pub changed: bool,
    /// Its last grant: when, and by which operator.
    pub granted_at: Option<String>,
    pub granted_by: Option<String>,
    /// When it was revoked (no authority while set, until a new grant).
    pub revoked_at: Option<String>,
}

refusals! {
    DashboardRefusals: [];
    PendingRefusals: [];
    ApproveRefusals: [400, 404, 409, 413, 503];
    RejectRefusals: [400, 404, 409, 413];
    ModerateRefusals: [400, 404, 409, 413];
    RecalculateRefusals: [400, 404, 413];
    OracleGrantRefusals: [400, 404];
}

#[OpenApi(prefix_path = "/admin", tag = "Tag::Admin")]
impl AdminApi {
    /// The operators' dashboard: jobs by kind and status with the queue's health, the
    /// indexer's lag, the halt flags and the ledger's reachability.
    #[oai(path = "/dashboard", method = "get")]
    async fn dashboard(
        &self,
        _admin: AdminAuth,
    ) -> Answer<Json<AdminDashboard>, DashboardRefusals> {
        let d = dashboard::dashboard(&self.state).await?;
        Ok(Json(AdminDashboard {
            ok: true,
            jobs: d
                .jobs
                .into_iter()
                .map(|j| JobCountBody {
                    kind: j.kind,
                    status: j.status,
                    count: j.count,
                })
                .collect(),
            queue: QueueHealthBody {
                status: d.queue.status.to_owned(),
                dead: d.queue.dead,
                oldest_due_secs: d.queue.oldest_due_secs,
            },
            indexer: d
                .indexer
                .into_iter()
                .map(|i| IndexerLagBody {
                    name: i.name,
                    slot: i.slot,
                    updated_at: iso(i.updated_at),
                    lag_secs: i.lag_secs,
                })
                .collect(),
            halts: d
                .components
                .into_iter()
                .map(ComponentStatus::from)
                .collect(),
            node_reachable: d.node_reachable,
            pending_admin_changes: d
                .pending_admin_changes
                .into_iter()
                .map(|p| PendingAdminChangeBody {
                    program: p.program.to_owned(),
                    change: p.change,
                    proposed_at: iso(p.proposed_at),
                    applies_at: iso(p.applies_at),
                    expires_at: iso(p.expires_at),
                })
                .collect(),
        }))
    }

    /// Classic markets waiting for review, oldest first.
    #[oai(path = "/markets/pending", method = "get")]
    async fn pending(&self, _admin: AdminAuth) -> Answer<Json<PendingMarkets>, PendingRefusals> {
        let markets = review::pending(&self.state).await?;
        Ok(Json(PendingMarkets {
            ok: true,
            markets: markets.into_iter().map(Into::into).collect(),
        }))
    }

    /// Prepare the approval of a pending Classic market: `approve_market`, signed and paid by
    /// the operator's wallet (the program admin).
    #[oai(path = "/markets/:id/approve", method = "post")]
    async fn approve(
        &self,
        admin: AdminAuth,
        id: Path<CreationId>,
    ) -> Answer<Json<ApprovalPrepared>, ApproveRefusals> {
        let prepared =
            review::prepare_approval(&self.state, &operator(admin), &id.0.to_string()).await?;
        Ok(Json(ApprovalPrepared {
            ok: true,
            transaction: prepared.unsigned.transaction,
            status: "ready_to_confirm".into(),
            prepared_id: prepared.unsigned.id,
            blockhash: prepared.unsigned.blockhash,
            market: prepared.creation.into(),
        }))
    }

    /// Confirm a sent approval: the market opens once the ledger shows it landed.
    #[oai(path = "/markets/approval/confirm", method = "post")]
    async fn approval_confirm(
        &self,
        _admin: AdminAuth,
        body: Json<ConfirmRequest>,
    ) -> Answer<Json<ApprovalConfirmed>, ApproveRefusals> {
        let ConfirmRequest {
            prepared_id,
            signature,
        } = body.0;
        let market = review::confirm_approval(&self.state, prepared_id, signature).await?;
        Ok(Json(ApprovalConfirmed {
            ok: true,
            signature,
            market: market.into(),
        }))
    }

    /// Reject a pending Classic market.
    #[oai(path = "/markets/:id/reject", method = "post")]
    async fn reject(
        &self,
        admin: AdminAuth,
        id: Path<CreationId>,
        body: Json<ReviewNote>,
    ) -> Answer<Json<Reviewed>, RejectRefusals> {
        let reason = body.0.reason.and_then(Text::non_empty);
        let market =
            review::reject(&self.state, &operator(admin), &id.0.to_string(), reason).await?;
        Ok(Json(Reviewed {
            ok: true,
            market: market.into(),
        }))
    }

    /// Hide a narrative from every public read (also `POST /admin/narratives/{id}/hide`).
    #[oai(path = "/narratives/:id/hide", method = "post")]
    async fn hide(
        &self,
        admin: AdminAuth,
        id: Path<NarrativeId>,
        body: Json<ReviewNote>,
    ) -> Answer<Json<Moderated>, ModerateRefusals> {
        let reason = body.0.reason.and_then(Text::non_empty);
        let n = moderation::hide(&self.state, &operator(admin), id.0, reason).await?;
        Ok(Json(n.into()))
    }

    /// Restore a hidden narrative to the status it had (also
    /// `POST /admin/narratives/{id}/restore`).
    #[oai(path = "/narratives/:id/restore", method = "post")]
    async fn restore(
        &self,
        admin: AdminAuth,
        id: Path<NarrativeId>,
    ) -> Answer<Json<Moderated>, ModerateRefusals> {
        let n = moderation::restore(&self.state, &operator(admin), id.0).await?;
        Ok(Json(n.into()))
    }

    /// Force a verdict into settlement, as an oracle agent's would (also
    /// `POST /admin/narratives/{id}/verdict`).
    #[oai(path = "/narratives/:id/verdict", method = "post")]
    async fn verdict(
        &self,
        admin: AdminAuth,
        id: Path<NarrativeId>,
        body: Json<ForcedVerdict>,
    ) -> Answer<Json<VerdictRecorded>, ModerateRefusals> {
        let ForcedVerdict { outcome, evidence } = body.0;
        let evidence = evidence.and_then(Text::non_empty);
        let status =
            moderation::force_verdict(&self.state, &operator(admin), id.0, outcome, evidence)
                .await?;
        Ok(Json(VerdictRecorded {
            ok: true,
            narrative_id: id.0,
            oracle_status: status.as_str().to_owned(),
        }))
    }

    /// Recalculate narrative scores: one narrative, or every one open for resolution (at most
    /// 5,000 a call, newest first).
    #[oai(path = "/scores/recalculate", method = "post")]
    async fn recalculate(
        &self,
        admin: AdminAuth,
        body: Json<Recalculate>,
    ) -> Answer<Json<Recalculated>, RecalculateRefusals> {
        let queued =
            rescore::recalculate(&self.state, &operator(admin), body.0.narrative_id).await?;
        Ok(Json(Recalculated { ok: true, queued }))
    }

    /// Grant an agent oracle authority: its verdicts (`POST /v1/agent/resolve`) are accepted
    /// from now on. Logged; granting an agent that holds a grant changes nothing (`changed`
    /// false). A grant clears an earlier revocation.
    #[oai(path = "/agents/:agent_id/oracle", method = "post")]
    async fn grant_oracle(
        &self,
        admin: AdminAuth,
        agent_id: Path<AgentId>,
    ) -> Answer<Json<OracleAuthority>, OracleGrantRefusals> {
        let change = oracle::grant(&self.state, &operator(admin), &agent_id.0).await?;
        Ok(Json(self.oracle_authority(change)))
    }

    /// Revoke an agent's oracle authority, an operator's grant or the `ORACLE_AGENT_WALLETS`
    /// bootstrap: its verdicts are refused (403) from now on. Logged; revoking an agent without
    /// authority changes nothing (`changed` false).
    #[oai(path = "/agents/:agent_id/oracle", method = "delete")]
    async fn revoke_oracle(
        &self,
        admin: AdminAuth,
        agent_id: Path<AgentId>,
    ) -> Answer<Json<OracleAuthority>, OracleGrantRefusals> {
        let change = oracle::revoke(&self.state, &operator(admin), &agent_id.0).await?;
        Ok(Json(self.oracle_authority(change)))
    }
}

impl AdminApi {
    fn oracle_authority(&self, change: oracle::Change) -> OracleAuthority {
        let authority = change.authority;
        let agent = change.agent;
        OracleAuthority {
            ok: true,
            agent_id: agent.id,
            wallet_address: agent.wallet_address,
            wallet_proven: agent.wallet_proven,
            oracle: authority.is_some(),
            authority: authority.map(|a| a.as_str().to_owned()),
            changed: change.changed,
            granted_at: agent.oracle_granted_at.map(iso),
            granted_by: agent.oracle_granted_by,
            revoked_at: agent.oracle_revoked_at.map(iso),
        }
    }
}
