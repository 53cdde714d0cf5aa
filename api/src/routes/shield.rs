//! Shield (spec 4.14): protocols and their pool state from the index, the terms
//! acknowledgement every backer signs first, and partnership applications.

use std::sync::Arc;

use narrative_store::entities::{
    shield_coverages, shield_partner_applications, shield_terms_acknowledgements,
};
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect,
};

use poem::Request;

use crate::auth::AdminAuth;
use crate::client::client_ip;
use crate::error::{ApiError, ApiResult};
use crate::probe_log;
use crate::routes::Tag;
use crate::shield_backing::{
    self, ConfirmRequest, ShieldBack, ShieldBackConfirmed, ShieldBackPrepared,
};
use crate::signature::{shield_terms_message, verify};
use crate::state::AppState;
use crate::system::ensure_running;
use crate::time::{iso, now};
use crate::validate::{page, sol, wallet};

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
}

impl ShieldProtocol {
    fn from_row(c: shield_coverages::Model, now: i64) -> Self {
        ShieldProtocol {
            backing_open: c.status == "active" && now >= c.period_start && now < c.period_end,
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
    /// The backer's wallet (base58).
    pub wallet: String,
    /// Base58 ed25519 signature by `wallet` of
    /// `narrative-market-service:shield-terms:<terms_version>:<wallet>`.
    pub signature: String,
    /// Defaults to the current version; another version is refused.
    pub terms_version: Option<String>,
}

#[derive(Object)]
pub struct TermsAcknowledged {
    pub ok: bool,
    pub wallet: String,
    pub terms_version: String,
    pub acknowledged_at: String,
}

#[derive(Object)]
pub struct ProbeEntry {
    pub id: i64,
    /// The caller's address as the server saw it.
    pub ip: Option<String>,
    pub route: String,
    /// The wallet the request named, as given.
    pub wallet: Option<String>,
    /// `acknowledged` or the error code the request got.
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
    pub protocol_name: String,
    /// Email, handle or other way to reach the applicant.
    pub contact: String,
    pub wallet: Option<String>,
    pub website: Option<String>,
    pub message: Option<String>,
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

/// Longest accepted free-text fields, in characters.
const MAX_NAME_CHARS: usize = 200;
const MAX_MESSAGE_CHARS: usize = 5000;

fn required_text(field: &str, value: &str, max: usize) -> Result<String, ApiError> {
    let value = value.trim();
    if value.is_empty() {
        return Err(ApiError::validation(format!("{field} required")));
    }
    if value.chars().count() > max {
        return Err(ApiError::validation(format!(
            "{field} is longer than {max} characters"
        )));
    }
    Ok(value.to_owned())
}

fn optional_text(
    field: &str,
    value: Option<String>,
    max: usize,
) -> Result<Option<String>, ApiError> {
    match value.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => required_text(field, v, max).map(Some),
    }
}

#[OpenApi(prefix_path = "/shield", tag = "Tag::Shield")]
impl ShieldApi {
    /// Active coverage periods with their pool state, newest period first.
    #[oai(path = "/protocols", method = "get")]
    async fn protocols(
        &self,
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
    ) -> ApiResult<Json<ProtocolList>> {
        let (limit, offset) = page(limit.0, offset.0, 50, 200);
        let db = self.state.store.db();
        let query = shield_coverages::Entity::find()
            .filter(shield_coverages::Column::Closed.eq(false))
            .filter(shield_coverages::Column::Status.eq("active"));
        let total = query.clone().count(db).await.map_err(ApiError::from)?;
        let rows = query
            .order_by_desc(shield_coverages::Column::PeriodStart)
            .order_by_asc(shield_coverages::Column::ProtocolId)
            .limit(limit)
            .offset(offset)
            .all(db)
            .await
            .map_err(ApiError::from)?;
        let now = now();
        Ok(Json(ProtocolList {
            ok: true,
            protocols: rows
                .into_iter()
                .map(|c| ShieldProtocol::from_row(c, now))
                .collect(),
            total,
        }))
    }

    /// One coverage period (any status) and its pool state.
    #[oai(path = "/protocols/:id", method = "get")]
    async fn protocol(&self, id: Path<String>) -> ApiResult<Json<ProtocolDetail>> {
        let id = id.0.trim().to_ascii_lowercase();
        if id.len() != 64 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(
                ApiError::validation("id must be a protocol_id of 64 hex characters").into(),
            );
        }
        let row = shield_coverages::Entity::find()
            .filter(shield_coverages::Column::ProtocolId.eq(id))
            .filter(shield_coverages::Column::Closed.eq(false))
            .one(self.state.store.db())
            .await
            .map_err(ApiError::from)?
            .ok_or_else(|| ApiError::not_found("protocol"))?;
        Ok(Json(ProtocolDetail {
            ok: true,
            protocol: ShieldProtocol::from_row(row, now()),
        }))
    }

    /// Record the wallet's signed acknowledgement of the shield terms (required before backing).
    /// Every attempt, accepted or not, goes to the probe log.
    #[oai(path = "/terms-ack", method = "post")]
    async fn terms_ack(
        &self,
        req: &Request,
        body: Json<TermsAck>,
    ) -> ApiResult<Json<TermsAcknowledged>> {
        let claimed_wallet: String = body.wallet.trim().chars().take(64).collect();
        let result = self.acknowledge(body.0).await;
        let outcome = match &result {
            Ok(_) => "acknowledged".to_owned(),
            Err(e) => e.code(),
        };
        probe_log::record(
            self.state.store.db(),
            client_ip(req),
            "/v1/shield/terms-ack",
            Some(claimed_wallet),
            &outcome,
        )
        .await;
        Ok(Json(result?))
    }

    /// Prepare a `back_shield` transaction for the wallet to sign (terms acknowledged first;
    /// 0.1 to 100 SOL; the coverage period must be open).
    #[oai(path = "/back", method = "post")]
    async fn back(&self, body: Json<ShieldBack>) -> ApiResult<Json<ShieldBackPrepared>> {
        Ok(Json(shield_backing::prepare(&self.state, body.0).await?))
    }

    /// Confirm a sent backing by its signature: recorded once the ledger shows the prepared
    /// transaction landed without error; a replayed signature answers the same and changes
    /// nothing.
    #[oai(path = "/back/confirm", method = "post")]
    async fn back_confirm(
        &self,
        body: Json<ConfirmRequest>,
    ) -> ApiResult<Json<ShieldBackConfirmed>> {
        Ok(Json(shield_backing::confirm(&self.state, body.0).await?))
    }

    /// The gate's access log, newest first (admin).
    #[oai(path = "/probe-log", method = "get")]
    async fn probe_log(
        &self,
        _admin: AdminAuth,
        limit: Query<Option<i64>>,
        offset: Query<Option<i64>>,
    ) -> ApiResult<Json<ProbeLog>> {
        let (limit, offset) = page(limit.0, offset.0, 50, 200);
        let (rows, total) = probe_log::page(self.state.store.db(), limit, offset).await?;
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

    /// A protocol's application for a partnership shield.
    #[oai(path = "/partner-apply", method = "post")]
    async fn partner_apply(&self, body: Json<PartnerApplication>) -> ApiResult<PartnerApplied> {
        let db = self.state.store.db();
        ensure_running(db, "shield").await?;
        let body = body.0;
        let protocol_name = required_text("protocol_name", &body.protocol_name, MAX_NAME_CHARS)?;
        let contact = required_text("contact", &body.contact, MAX_NAME_CHARS)?;
        let applicant = match body.wallet.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(w) => Some(wallet("wallet", w)?.to_string()),
        };
        let website = optional_text("website", body.website, MAX_NAME_CHARS)?;
        let message = optional_text("message", body.message, MAX_MESSAGE_CHARS)?;
        let id = uuid::Uuid::new_v4().to_string();
        shield_partner_applications::Entity::insert(shield_partner_applications::ActiveModel {
            id: Set(id.clone()),
            protocol_name: Set(protocol_name),
            contact: Set(contact),
            wallet: Set(applicant),
            website: Set(website),
            message: Set(message),
            created_at: Set(now()),
        })
        .exec(db)
        .await
        .map_err(ApiError::from)?;
        Ok(PartnerApplied::Created(Json(ApplicationReceived {
            ok: true,
            id,
        })))
    }
}

impl ShieldApi {
    async fn acknowledge(&self, body: TermsAck) -> Result<TermsAcknowledged, ApiError> {
        let db = self.state.store.db();
        ensure_running(db, "shield").await?;
        let owner = wallet("wallet", &body.wallet)?;
        let current = &self.state.shield_terms_version;
        if let Some(version) = body.terms_version.as_deref() {
            if version != current {
                return Err(ApiError::validation(format!(
                    "terms_version must be the current version {current}"
                )));
            }
        }
        if !verify(
            &owner,
            shield_terms_message(current, &owner).as_bytes(),
            &body.signature,
        ) {
            return Err(ApiError::coded(
                poem::http::StatusCode::UNAUTHORIZED,
                "invalid_signature",
                "signature is not the wallet's signature of the terms message",
            ));
        }
        let at = now();
        shield_terms_acknowledgements::Entity::insert(shield_terms_acknowledgements::ActiveModel {
            wallet: Set(owner.to_string()),
            terms_version: Set(current.clone()),
            acknowledged_at: Set(at),
        })
        .on_conflict(
            OnConflict::column(shield_terms_acknowledgements::Column::Wallet)
                .update_columns([
                    shield_terms_acknowledgements::Column::TermsVersion,
                    shield_terms_acknowledgements::Column::AcknowledgedAt,
                ])
                .to_owned(),
        )
        .exec(db)
        .await
        .map_err(ApiError::from)?;
        Ok(TermsAcknowledged {
            ok: true,
            wallet: owner.to_string(),
            terms_version: current.clone(),
            acknowledged_at: iso(at),
        })
    }
}
