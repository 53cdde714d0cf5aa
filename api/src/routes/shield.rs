//! Shield (spec 4.14): protocols and their pool state, the terms acknowledgement every backer
//! signs first, backing (prepare and confirm), partnership applications, and for operators the
//! gate's log, its blocked addresses and the cover resolution vote (spec 5 rule 6).

use std::net::IpAddr;
use std::sync::Arc;

use narrative_store::entities::{shield_coverages, shield_positions};
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::{Json, Response};
use poem_openapi::{ApiResponse, Object, OpenApi};

use crate::clock::iso;
use crate::domain::admin::Operator;
use crate::domain::shield::backing::{self, BackShield, ShieldAmount};
use crate::domain::shield::partners::{self, Application};
use crate::domain::shield::{gate, probe_log, protocols, resolution, terms};
use crate::domain::wallet_proof::Proof;
use crate::error::{refusals, Answer};
use crate::http::auth::AdminAuth;
use crate::http::cache::fresh_until;
use crate::routes::{BackRefusals, ConfirmRefusals, ConfirmRequest, Tag};
use crate::state::AppState;
use crate::values::{
    page, sol, sol_u64, Base58Signature, PreparedId, ProtocolId, ShieldSide, Text, UnixSeconds,
    Wallet,
};

pub struct ShieldApi {
    pub state: Arc<AppState>,
}

/// One side's book (spec 4.14 per-side state).
#[derive(Object)]
pub struct ShieldPool {
    pub principal_lamports: i64,
    pub principal_sol: f64,
    pub total_assets_lamports: i64,
    /// u128 share count as decimal text.
    pub shares_total: String,
    pub yield_harvested_lamports: i64,
    pub yield_paid_lamports: i64,
    pub backers: i32,
}

#[derive(Object)]
pub struct ShieldProtocol {
    /// The coverage period's protocol_id (64 hex characters).
    pub id: String,
    /// The `shield_state` account.
    pub address: String,
    /// `partnership` or `community`.
    pub kind: String,
    pub protocol_wallet: Option<String>,
    pub period_days: i32,
    pub period_start: String,
    pub period_end: String,
    pub fee_lamports: i64,
    /// `active`, `resolved` or `refunding`.
    pub status: String,
    /// `safe` or `exploit` once proposed.
    pub outcome: Option<String>,
    pub safe_votes: i32,
    pub exploit_votes: i32,
    /// Whether a backing can be placed now.
    pub backing_open: bool,
    pub safe: ShieldPool,
    pub exploit: ShieldPool,
    pub total_backed_sol: f64,
    /// While a proposed outcome waits out its timelock: when it may be finalised (the keeper
    /// finalises it then).
    pub finalizes_at: Option<String>,
    /// While nobody has resolved the coverage: when it may be sent to refund after its period
    /// (the keeper sends it then).
    pub refundable_at: Option<String>,
    /// A resolved exploit's seam share for the Echo Pool, once there is one.
    pub seam_share: Option<ForwardedShare>,
    /// A resolved coverage's share for the treasury, once there is one.
    pub treasury_share: Option<ForwardedShare>,
    /// A resolved partnership coverage's share for its protocol wallet, once there is one.
    pub protocol_share: Option<ForwardedShare>,
}

/// A share of the losing principal that finalisation leaves in the losing vault; the keeper
/// (or anyone) forwards it to its one recipient in a transaction of its own.
#[derive(Object)]
pub struct ForwardedShare {
    pub lamports: i64,
    /// `pending_forward` (waiting in the losing vault) or `forwarded`.
    pub stage: String,
}

impl From<protocols::HeldShare> for ForwardedShare {
    fn from(share: protocols::HeldShare) -> Self {
        ForwardedShare {
            lamports: share.lamports,
            stage: share.stage().into(),
        }
    }
}

impl ShieldProtocol {
    fn from_row(c: shield_coverages::Model, now: i64) -> Self {
        ShieldProtocol {
            backing_open: protocols::backing_open(&c, now),
            finalizes_at: protocols::finalizes_at(&c).map(iso),
            refundable_at: protocols::refundable_at(&c).map(iso),
            seam_share: protocols::seam_share(&c).map(Into::into),
            treasury_share: protocols::treasury_share(&c).map(Into::into),
            protocol_share: protocols::protocol_share(&c).map(Into::into),
            total_backed_sol: sol(c.safe_principal.saturating_add(c.exploit_principal)),
            safe: ShieldPool {
                principal_lamports: c.safe_principal,
                principal_sol: sol(c.safe_principal),
                total_assets_lamports: c.safe_total_assets,
                shares_total: c.safe_shares_total,
                yield_harvested_lamports: c.safe_yield_harvested,
                yield_paid_lamports: c.safe_yield_paid,
                backers: c.safe_backers,
            },
            exploit: ShieldPool {
                principal_lamports: c.exploit_principal,
                principal_sol: sol(c.exploit_principal),
                total_assets_lamports: c.exploit_total_assets,
                shares_total: c.exploit_shares_total,
                yield_harvested_lamports: c.exploit_yield_harvested,
                yield_paid_lamports: c.exploit_yield_paid,
                backers: c.exploit_backers,
            },
            id: c.protocol_id,
            address: c.address,
            kind: c.kind,
            protocol_wallet: c.protocol_wallet,
            period_days: c.period_days,
            period_start: iso(c.period_start),
            period_end: iso(c.period_end),
            fee_lamports: c.fee_lamports,
            status: c.status,
            outcome: c.outcome,
            safe_votes: c.safe_votes,
            exploit_votes: c.exploit_votes,
        }
    }
}

#[derive(Object)]
pub struct ProtocolList {
    pub ok: bool,
    pub protocols: Vec<ShieldProtocol>,
    pub total: u64,
}

#[derive(Object)]
pub struct ProtocolDetail {
    pub ok: bool,
    pub protocol: ShieldProtocol,
}

#[derive(Object)]
pub struct TermsAck {
    /// The backer's wallet.
    pub wallet: Wallet,
    /// The wallet's signature of
    /// `narrative-market-service:shield-terms:<terms_version>:<wallet>:issued-at:<issued_at>`.
    pub signature: Base58Signature,
    /// When the wallet signed (unix seconds): accepted within 300 s before the server's time
    /// (60 s after), once.
    pub issued_at: UnixSeconds,
    /// Defaults to the current version; another version is refused.
    pub terms_version: Option<Text<100>>,
}

#[derive(Object)]
pub struct TermsAcknowledged {
    pub ok: bool,
    pub wallet: Wallet,
    pub terms_version: String,
    pub acknowledged_at: String,
}

#[derive(Object)]
pub struct ShieldBack {
    /// The backer's wallet; it signs and pays the fee.
    pub wallet: Wallet,
    pub protocol_id: ProtocolId,
    pub side: ShieldSide,
    /// 0.1 to 100 SOL.
    pub amount_sol: ShieldAmount,
    /// Confidential amounts (not on devnet): recorded on the position.
    pub arcium_enabled: Option<bool>,
}

#[derive(Object)]
pub struct ShieldBackPrepared {
    pub ok: bool,
    /// Base64 unsigned transaction; the wallet is the fee payer.
    pub transaction: String,
    /// `ready_to_confirm`: sign, send, then confirm with the signature.
    pub status: String,
    pub prepared_id: PreparedId,
    pub blockhash: String,
    pub protocol_id: ProtocolId,
    pub side: ShieldSide,
    pub amount_lamports: u64,
    pub amount_sol: f64,
}

#[derive(Object)]
pub struct ShieldBackConfirmed {
    pub ok: bool,
    /// `confirmed`.
    pub status: String,
    pub position_id: String,
    pub prepared_id: PreparedId,
    pub signature: Base58Signature,
    pub wallet: String,
    pub protocol_id: String,
    pub side: String,
    pub amount_lamports: i64,
    pub amount_sol: f64,
    /// `discovery` (first 20 % of the period, 2.0x conviction multiplier) or `standard`.
    pub window: String,
    pub arcium_enabled: bool,
}

impl ShieldBackConfirmed {
    fn from_position(
        prepared_id: PreparedId,
        signature: Base58Signature,
        position: shield_positions::Model,
    ) -> Self {
        ShieldBackConfirmed {
            ok: true,
            status: "confirmed".into(),
            position_id: position.id,
            prepared_id,
            signature,
            wallet: position.wallet,
            protocol_id: position.protocol,
            side: position.side,
            amount_lamports: position.amount_lamports,
            amount_sol: sol(position.amount_lamports),
            window: position.window,
            arcium_enabled: position.arcium_enabled,
        }
    }
}

#[derive(Object)]
pub struct ProbeEntry {
    pub id: i64,
    /// The caller's address as the server saw it.
    pub ip: Option<String>,
    pub route: String,
    /// The wallet the request named, as given.
    pub wallet: Option<String>,
    /// `acknowledged` or the error the request got.
    pub outcome: String,
    pub created_at: String,
}

#[derive(Object)]
pub struct ProbeLog {
    pub ok: bool,
    pub entries: Vec<ProbeEntry>,
    pub total: u64,
}

#[derive(Object)]
pub struct PartnerApplication {
    pub protocol_name: Text<200>,
    /// Email, handle or other way to reach the applicant.
    pub contact: Text<200>,
    pub wallet: Option<Wallet>,
    pub website: Option<Text<200, 0>>,
    pub message: Option<Text<5000, 0>>,
}

#[derive(Object)]
pub struct ApplicationReceived {
    pub ok: bool,
    pub id: String,
}

#[derive(ApiResponse)]
pub enum PartnerApplied {
    /// Recorded.
    #[oai(status = 201)]
    Created(Json<ApplicationReceived>),
}

/// An address the gate blocks.
#[derive(Object)]
pub struct BlockedIp {
    pub ip: String,
    /// Refused attempts counted when it was blocked.
    pub failures: i32,
    pub reason: String,
    pub blocked_at: String,
}

#[derive(Object)]
pub struct BlockedIps {
    pub ok: bool,
    pub blocked: Vec<BlockedIp>,
}

#[derive(Object)]
pub struct UnblockIp {
    /// As listed; any form of the same address (an IPv6 address expanded, say) is the same.
    pub ip: IpAddr,
}

#[derive(Object)]
pub struct IpUnblocked {
    pub ok: bool,
    pub ip: String,
    pub lifted_at: Option<String>,
}

#[derive(Object)]
pub struct CoverVoteRequest {
    /// The service oracle's vote: `safe` or `exploit`.
    pub vote: ShieldSide,
}

#[derive(Object)]
pub struct CoverVoted {
    pub ok: bool,
    pub protocol_id: ProtocolId,
    pub vote: ShieldSide,
    /// The oracle key that voted.
    pub oracle: String,
    pub signature: String,
    /// The coverage as re-read after the vote: `active` until the threshold proposes an
    /// outcome, then its status.
    pub status: String,
    pub safe_votes: i32,
    pub exploit_votes: i32,
    pub outcome: Option<String>,
}

refusals! {
    BlockedRefusals: [];
    UnblockRefusals: [400, 404, 413];
    CoverVoteRefusals: [400, 404, 409, 413, 503];
    ListRefusals: [400];
    DetailRefusals: [400, 404];
    TermsRefusals: [400, 413, 503];
    ProbeLogRefusals: [400];
    ApplyRefusals: [400, 413, 503];
}

#[OpenApi(prefix_path = "/shield", tag = "Tag::Shield")]
impl ShieldApi {
    /// Active coverage periods with their pool state, newest period first (`limit` default 50,
    /// clamped to 1–200; `offset`).
    #[oai(path = "/protocols", method = "get")]
    async fn protocols(
        &self,
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
    ) -> Answer<Response<Json<ProtocolList>>, ListRefusals> {
        let (limit, offset) = page(limit.0, offset.0, 50, 200);
        let (rows, total) = protocols::active(&self.state, limit, offset).await?;
        let now = self.state.now();
        // `backing_open` changes when a period starts or ends, without a write.
        let changes = rows
            .iter()
            .filter_map(|c| protocols::next_change(c, now))
            .min();
        Ok(fresh_until(
            Json(ProtocolList {
                ok: true,
                protocols: rows
                    .into_iter()
                    .map(|c| ShieldProtocol::from_row(c, now))
                    .collect(),
                total,
            }),
            changes,
        ))
    }

    /// One coverage period (any status) and its pool state.
    #[oai(path = "/protocols/:id", method = "get")]
    async fn protocol(
        &self,
        id: Path<ProtocolId>,
    ) -> Answer<Response<Json<ProtocolDetail>>, DetailRefusals> {
        let row = protocols::get(&self.state, id.0).await?;
        let now = self.state.now();
        let changes = protocols::next_change(&row, now);
        Ok(fresh_until(
            Json(ProtocolDetail {
                ok: true,
                protocol: ShieldProtocol::from_row(row, now),
            }),
            changes,
        ))
    }

    /// Record the wallet's signed acknowledgement of the shield terms (required before
    /// backing). Every attempt, accepted or not, goes to the gate's log.
    #[oai(path = "/terms-ack", method = "post")]
    async fn terms_ack(
        &self,
        body: Json<TermsAck>,
    ) -> Answer<Json<TermsAcknowledged>, TermsRefusals> {
        let body = body.0;
        let at = terms::acknowledge(
            &self.state,
            Proof {
                wallet: &body.wallet,
                signature: &body.signature,
                issued_at: body.issued_at,
            },
            body.terms_version.as_ref().map(Text::as_str),
        )
        .await?;
        Ok(Json(TermsAcknowledged {
            ok: true,
            wallet: body.wallet,
            terms_version: self.state.shield_terms_version.clone(),
            acknowledged_at: iso(at),
        }))
    }

    /// Prepare a `back_shield` transaction for the wallet to sign (terms acknowledged first;
    /// 0.1 to 100 SOL; the coverage period must be open).
    #[oai(path = "/back", method = "post")]
    async fn back(&self, body: Json<ShieldBack>) -> Answer<Json<ShieldBackPrepared>, BackRefusals> {
        let body = body.0;
        let prepared = backing::prepare(
            &self.state,
            BackShield {
                wallet: body.wallet,
                protocol_id: body.protocol_id,
                side: body.side,
                amount: body.amount_sol,
                arcium_enabled: body.arcium_enabled.unwrap_or(false),
            },
        )
        .await?;
        Ok(Json(ShieldBackPrepared {
            ok: true,
            transaction: prepared.unsigned.transaction,
            status: "ready_to_confirm".into(),
            prepared_id: prepared.unsigned.id,
            blockhash: prepared.unsigned.blockhash,
            protocol_id: prepared.params.protocol_id,
            side: prepared.params.side,
            amount_lamports: prepared.params.amount_lamports,
            amount_sol: sol_u64(body.amount_sol.lamports()),
        }))
    }

    /// Confirm a sent backing by its signature: recorded once the ledger shows the prepared
    /// transaction landed without error; a replayed signature answers the same and changes
    /// nothing.
    #[oai(path = "/back/confirm", method = "post")]
    async fn back_confirm(
        &self,
        body: Json<ConfirmRequest>,
    ) -> Answer<Json<ShieldBackConfirmed>, ConfirmRefusals> {
        let confirmed = backing::confirm(&self.state, body.0.prepared_id, body.0.signature).await?;
        Ok(Json(ShieldBackConfirmed::from_position(
            confirmed.prepared_id,
            confirmed.signature,
            confirmed.position,
        )))
    }

    /// The gate's access log, newest first (admin; `limit` default 50, clamped to 1–200).
    #[oai(path = "/probe-log", method = "get")]
    async fn probe_log(
        &self,
        _admin: AdminAuth,
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
    ) -> Answer<Json<ProbeLog>, ProbeLogRefusals> {
        let (limit, offset) = page(limit.0, offset.0, 50, 200);
        let (rows, total) = probe_log::page(&self.state, limit, offset).await?;
        Ok(Json(ProbeLog {
            ok: true,
            entries: rows
                .into_iter()
                .map(|r| ProbeEntry {
                    id: r.id,
                    ip: r.ip,
                    route: r.route,
                    wallet: r.wallet,
                    outcome: r.outcome,
                    created_at: iso(r.created_at),
                })
                .collect(),
            total,
        }))
    }

    /// Addresses the gate blocks now (admin), most recent first.
    #[oai(path = "/blocked-ips", method = "get")]
    async fn blocked_ips(&self, _admin: AdminAuth) -> Answer<Json<BlockedIps>, BlockedRefusals> {
        let rows = gate::blocked(&self.state).await?;
        Ok(Json(BlockedIps {
            ok: true,
            blocked: rows
                .into_iter()
                .map(|b| BlockedIp {
                    ip: b.ip,
                    failures: b.failures,
                    reason: b.reason,
                    blocked_at: iso(b.blocked_at),
                })
                .collect(),
        }))
    }

    /// Lift an address's block (admin); its refusals count from zero again.
    #[oai(path = "/blocked-ips/unblock", method = "post")]
    async fn unblock_ip(
        &self,
        admin: AdminAuth,
        body: Json<UnblockIp>,
    ) -> Answer<Json<IpUnblocked>, UnblockRefusals> {
        let lifted = gate::unblock(&self.state, &Operator(admin.0), body.0.ip).await?;
        Ok(Json(IpUnblocked {
            ok: true,
            ip: lifted.ip,
            lifted_at: lifted.lifted_at.map(iso),
        }))
    }

    /// Protocol cover resolution (admin): the service's oracle key votes on a coverage whose
    /// period ended; the program's threshold and timelock decide the rest.
    #[oai(path = "/protocols/:id/resolve", method = "post")]
    async fn resolve_cover(
        &self,
        admin: AdminAuth,
        id: Path<ProtocolId>,
        body: Json<CoverVoteRequest>,
    ) -> Answer<Json<CoverVoted>, CoverVoteRefusals> {
        let vote = body.0.vote;
        let voted = resolution::resolve(&self.state, &Operator(admin.0), id.0, vote).await?;
        let coverage = voted.coverage;
        Ok(Json(CoverVoted {
            ok: true,
            protocol_id: id.0,
            vote,
            oracle: voted.oracle,
            signature: voted.signature,
            status: coverage.status,
            safe_votes: coverage.safe_votes,
            exploit_votes: coverage.exploit_votes,
            outcome: coverage.outcome,
        }))
    }

    /// A protocol's application for a partnership shield.
    #[oai(path = "/partner-apply", method = "post")]
    async fn partner_apply(
        &self,
        body: Json<PartnerApplication>,
    ) -> Answer<PartnerApplied, ApplyRefusals> {
        let body = body.0;
        let id = partners::apply(
            &self.state,
            Application {
                protocol_name: body.protocol_name.into_string(),
                contact: body.contact.into_string(),
                wallet: body.wallet,
                website: body.website.and_then(Text::non_empty),
                message: body.message.and_then(Text::non_empty),
            },
        )
        .await?;
        Ok(PartnerApplied::Created(Json(ApplicationReceived {
            ok: true,
            id,
        })))
    }
}
