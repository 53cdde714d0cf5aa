//! KYC (spec 4.9): a wallet opens a hosted inquiry with the KYC provider for a tier (1 basic,
//! 2 enhanced) and is sent to the provider's page; the provider's signed webhook reports how
//! the inquiry ended, and an approved inquiry raises the wallet's tier (and tells the wallet,
//! `kyc_tier_upgraded`). Nothing but a signed webhook of the provider writes a tier.
//!
//! Opening an inquiry needs the wallet's signature of [`start_statement`] (a [`wallet_proof`]
//! statement, fresh and used once): whoever completes an inquiry decides whose identity stands
//! behind the wallet, so only the wallet may open one.
//!
//! Screening: a wallet is screened by the screening provider when it starts KYC or when anyone
//! asks (`POST /v1/kyc/screen`), at most once per [`SCREENING_VALID_SECS`]. A flagged wallet is
//! blocked: every prepare refuses it with 403 `wallet_blocked` (`chain::blocks`), and so does
//! KYC, until an operator lifts the block. A lifted block stays lifted: the operator's review
//! stands over later screenings of the same wallet.

use std::net::IpAddr;

use narrative_store::entities::{
    blocked_wallets, kyc_inquiries, kyc_verifications, wallet_screenings,
};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
};
use serde_json::json;

use crate::chain::blocks::{is_blocked, wallet_blocked};
use crate::domain::admin::{self, Operator};
use crate::domain::notifications::{notices, notify};
use crate::domain::quota;
use crate::domain::wallet_proof::{self, Proof, Statement};
use crate::error::ApiError;
use crate::providers::kyc::{verify_signature, InquiryEvent, OpenedInquiry};
use crate::state::AppState;
use crate::values::Wallet;

/// What a wallet signs to open an inquiry, with its issued-at time:
/// `narrative-market-service:kyc-start:<wallet>:<tier>:issued-at:<secs>`.
pub fn start_statement(wallet: &Wallet, tier: u8) -> Statement {
    Statement::new("kyc-start").field(wallet).field(tier)
}

pub enum Started {
    /// An inquiry, and the tier the wallet holds meanwhile.
    Opened { inquiry: OpenedInquiry, tier: i32 },
    /// The wallet already holds this tier or a higher one.
    AlreadyVerified { tier: i32 },
}

/// The wallet's verified tier, 0 when none.
pub async fn tier_of(db: &impl ConnectionTrait, wallet: &str) -> Result<i32, DbErr> {
    Ok(kyc_verifications::Entity::find_by_id(wallet.to_owned())
        .one(db)
        .await?
        .map_or(0, |v| v.tier))
}

/// Opens a hosted inquiry for the proof's wallet at `tier`, with its signature of
/// [`start_statement`] (401 `invalid_signature` unless fresh and unused), asked by the caller
/// at `ip`: the wallet's screening counts against the IP's daily cap as `POST /v1/kyc/screen`
/// does, so fresh wallets cannot buy unbounded screenings and inquiries through this route.
/// 503 `kyc_unavailable` when the provider does not answer.
pub async fn start(
    state: &AppState,
    ip: Option<IpAddr>,
    proof: Proof<'_>,
    tier: u8,
) -> Result<Started, ApiError> {
    let wallet = proof.wallet;
    wallet_proof::prove(state, &start_statement(wallet, tier), proof).await?;
    if screen(state, ip, wallet).await?.blocked {
        return Err(wallet_blocked());
    }
    let db = state.store.db();
    let held = tier_of(db, &wallet.to_string()).await?;
    if held >= i32::from(tier) {
        return Ok(Started::AlreadyVerified { tier: held });
    }
    let opened = state
        .kyc
        .open_inquiry(&wallet.to_string(), tier)
        .await
        .map_err(|e| ApiError::provider_unavailable("kyc_unavailable", "the KYC provider", &e))?;
    let now = state.now();
    kyc_inquiries::Entity::insert(kyc_inquiries::ActiveModel {
        inquiry_id: Set(opened.inquiry_id.clone()),
        wallet: Set(wallet.to_string()),
        tier: Set(i32::from(tier)),
        provider: Set(state.kyc.name().to_owned()),
        status: Set("created".to_owned()),
        created_at: Set(now),
        updated_at: Set(now),
    })
    .exec_without_returning(db)
    .await?;
    Ok(Started::Opened {
        inquiry: opened,
        tier: held,
    })
}

/// How long a screening stands before the wallet is screened again.
pub const SCREENING_VALID_SECS: i64 = 24 * 3_600;

/// A wallet's screening, and whether it is blocked now.
pub struct Screening {
    pub flagged: bool,
    pub reason: Option<String>,
    pub provider: String,
    pub screened_at: i64,
    pub blocked: bool,
}

/// Screens `wallet` (or answers its screening of the last [`SCREENING_VALID_SECS`]) for the
/// caller at `ip`; a flagged wallet is blocked unless an operator lifted its block. A
/// screening that asks the provider counts against the IP's daily cap
/// (`SCREENING_PER_IP_DAILY`; one that stands is free, which is the per-wallet bound: one
/// provider call per wallet per day). 503 `screening_unavailable` when the provider does not
/// answer.
pub async fn screen(
    state: &AppState,
    ip: Option<IpAddr>,
    wallet: &Wallet,
) -> Result<Screening, ApiError> {
    let db = state.store.db();
    let key = wallet.to_string();
    let now = state.now();
    let kept = wallet_screenings::Entity::find_by_id(key.clone())
        .one(db)
        .await?
        .filter(|row| now - row.screened_at < SCREENING_VALID_SECS);
    let row = match kept {
        Some(row) => row,
        None => {
            quota::charge_cost_per_ip(state, &state.cost_caps.screening, ip, "screenings").await?;
            let screened = state.screening.screen(&key).await.map_err(|e| {
                ApiError::provider_unavailable(
                    "screening_unavailable",
                    "the screening provider",
                    &e,
                )
            })?;
            let row = wallet_screenings::Model {
                wallet: key.clone(),
                flagged: screened.flagged,
                reason: screened.reason,
                provider: state.screening.name().to_owned(),
                screened_at: now,
            };
            let txn = state.store.begin_write().await?;
            wallet_screenings::Entity::insert(wallet_screenings::ActiveModel::from(row.clone()))
                .on_conflict(
                    OnConflict::column(wallet_screenings::Column::Wallet)
                        .update_columns([
                            wallet_screenings::Column::Flagged,
                            wallet_screenings::Column::Reason,
                            wallet_screenings::Column::Provider,
                            wallet_screenings::Column::ScreenedAt,
                        ])
                        .to_owned(),
                )
                .exec_without_returning(&txn)
                .await?;
            if row.flagged {
                // A block an operator lifted keeps its row, so this inserts nothing for it.
                blocked_wallets::Entity::insert(blocked_wallets::ActiveModel {
                    wallet: Set(key.clone()),
                    reason: Set(row.reason.clone().unwrap_or_else(|| "flagged".to_owned())),
                    source: Set("screening".to_owned()),
                    blocked_at: Set(now),
                    lifted_at: Set(None),
                    lifted_by: Set(None),
                })
                .on_conflict(
                    OnConflict::column(blocked_wallets::Column::Wallet)
                        .do_nothing()
                        .to_owned(),
                )
                .exec_without_returning(&txn)
                .await?;
                tracing::warn!(wallet = %key, "screening flagged the wallet");
            }
            txn.commit().await?;
            row
        }
    };
    Ok(Screening {
        blocked: is_blocked(db, &key).await?,
        flagged: row.flagged,
        reason: row.reason,
        provider: row.provider,
        screened_at: row.screened_at,
    })
}

/// Lifts `wallet`'s block (an operator's decision, by `operator`); whether it was blocked.
pub async fn unblock(
    state: &AppState,
    operator: &Operator,
    wallet: &Wallet,
) -> Result<bool, ApiError> {
    let now = state.now();
    let txn = state.store.begin_write().await?;
    let lifted = blocked_wallets::Entity::update_many()
        .col_expr(blocked_wallets::Column::LiftedAt, Expr::value(Some(now)))
        .col_expr(
            blocked_wallets::Column::LiftedBy,
            Expr::value(Some(operator.0.clone())),
        )
        .filter(blocked_wallets::Column::Wallet.eq(wallet.to_string()))
        .filter(blocked_wallets::Column::LiftedAt.is_null())
        .exec(&txn)
        .await?;
    if lifted.rows_affected > 0 {
        admin::log(
            &txn,
            operator,
            "wallet.unblock",
            &wallet.to_string(),
            json!({"lifted": lifted.rows_affected}),
            now,
        )
        .await?;
    }
    txn.commit().await?;
    if lifted.rows_affected > 0 {
        tracing::info!(wallet = %wallet, operator = %operator.0, "wallet block lifted");
    }
    Ok(lifted.rows_affected > 0)
}

/// A wallet's KYC state.
pub struct Status {
    pub tier: i32,
    pub blocked: bool,
    /// Its most recent inquiry.
    pub latest: Option<kyc_inquiries::Model>,
}

pub async fn status(state: &AppState, wallet: &Wallet) -> Result<Status, ApiError> {
    let db = state.store.db();
    let wallet = wallet.to_string();
    Ok(Status {
        tier: tier_of(db, &wallet).await?,
        blocked: is_blocked(db, &wallet).await?,
        latest: kyc_inquiries::Entity::find()
            .filter(kyc_inquiries::Column::Wallet.eq(wallet.as_str()))
            .order_by_desc(kyc_inquiries::Column::CreatedAt)
            .order_by_desc(kyc_inquiries::Column::InquiryId)
            .one(db)
            .await?,
    })
}

/// The wallet's latest screening, however old, without screening it (the operator's view).
pub async fn latest_screening(
    state: &AppState,
    wallet: &Wallet,
) -> Result<Option<wallet_screenings::Model>, ApiError> {
    Ok(wallet_screenings::Entity::find_by_id(wallet.to_string())
        .one(state.store.db())
        .await?)
}

pub async fn tier(state: &AppState, wallet: &Wallet) -> Result<i32, ApiError> {
    Ok(tier_of(state.store.db(), &wallet.to_string()).await?)
}

/// What a webhook came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Recorded {
    /// The inquiry's new status, and the wallet's tier if this event raised it.
    Updated {
        status: String,
        raised_to: Option<i32>,
    },
    /// Not an inquiry this service opened (another integration on the same account).
    UnknownInquiry,
    /// An event about something other than an inquiry's outcome.
    Ignored,
}

/// Records the provider's webhook: `signature_header` must sign `body` with the configured
/// secret (401 otherwise, and while no secret is configured). An approved inquiry raises the
/// wallet's tier to the inquiry's, once however often the event is delivered.
pub async fn record_webhook(
    state: &AppState,
    signature_header: Option<&str>,
    body: &[u8],
) -> Result<Recorded, ApiError> {
    let signed = match (&state.kyc_webhook_secret, signature_header) {
        (Some(secret), Some(header)) => verify_signature(header, body, secret, state.now()),
        _ => false,
    };
    if !signed {
        tracing::warn!("KYC webhook signature refused");
        return Err(ApiError::invalid_signature(
            "the webhook is not signed with the configured KYC webhook secret",
        ));
    }
    let Some(event) = InquiryEvent::parse(body).map_err(ApiError::validation)? else {
        return Ok(Recorded::Ignored);
    };
    let now = state.now();
    let txn = state.store.begin_write().await?;
    let Some(inquiry) = kyc_inquiries::Entity::find_by_id(event.inquiry_id.clone())
        .one(&txn)
        .await?
    else {
        return Ok(Recorded::UnknownInquiry);
    };
    kyc_inquiries::Entity::update_many()
        .col_expr(
            kyc_inquiries::Column::Status,
            Expr::value(event.status.clone()),
        )
        .col_expr(kyc_inquiries::Column::UpdatedAt, Expr::value(now))
        .filter(kyc_inquiries::Column::InquiryId.eq(inquiry.inquiry_id.as_str()))
        .exec(&txn)
        .await?;
    let raised_to = if event.status == "approved" {
        raise_tier(&txn, &inquiry, now).await?
    } else {
        None
    };
    txn.commit().await?;
    Ok(Recorded::Updated {
        status: event.status,
        raised_to,
    })
}

/// Raises the wallet's tier to `inquiry`'s when that is higher, and notifies it; the new tier.
async fn raise_tier(
    txn: &impl ConnectionTrait,
    inquiry: &kyc_inquiries::Model,
    now: i64,
) -> Result<Option<i32>, DbErr> {
    if tier_of(txn, &inquiry.wallet).await? >= inquiry.tier {
        return Ok(None);
    }
    kyc_verifications::Entity::insert(kyc_verifications::ActiveModel {
        wallet: Set(inquiry.wallet.clone()),
        tier: Set(inquiry.tier),
        inquiry_id: Set(inquiry.inquiry_id.clone()),
        verified_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(kyc_verifications::Column::Wallet)
            .update_columns([
                kyc_verifications::Column::Tier,
                kyc_verifications::Column::InquiryId,
                kyc_verifications::Column::VerifiedAt,
            ])
            .to_owned(),
    )
    .exec_without_returning(txn)
    .await?;
    notify(
        txn,
        notices::kyc_tier_upgraded(&inquiry.wallet, inquiry.tier, &inquiry.inquiry_id),
        now,
    )
    .await?;
    Ok(Some(inquiry.tier))
}
