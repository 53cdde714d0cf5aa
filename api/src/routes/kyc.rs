//! KYC (spec 4.9): opening a hosted inquiry with the provider, the wallet's status and tier,
//! the provider's signed webhook, wallet screening, and the operator's unblock.
//!
//! The status and the screening answer anyone who asks about any wallet, so without the admin
//! headers they show what a public page may: the tier, whether the wallet's writes are blocked
//! (every prepare for it says so anyway) and its inquiry's progress, never the provider's
//! inquiry id nor the screening's verdict, reason or provider. With the admin pair they add
//! those for the operator's review. The wallet's own user gets its inquiry id and session token
//! once, from its signed start.

use std::sync::Arc;

use poem::{Request, RequestBody};
use poem_openapi::param::{Header, Path};
use poem_openapi::payload::{Json, ParsePayload, Payload};
use poem_openapi::registry::{MetaSchema, MetaSchemaRef};
use poem_openapi::{Object, OpenApi};
use secrecy::ExposeSecret;

use crate::clock::iso;
use crate::domain::admin::Operator;
use crate::domain::kyc::{self, Recorded, Started};
use crate::domain::wallet_proof::Proof;
use crate::error::{refusals, Answer};
use crate::http::auth::{carries_admin, AdminAuth};
use crate::http::client_ip::client_ip;
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{Base58Signature, UnixSeconds, Wallet};

pub struct KycApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct KycStart {
    pub wallet: Wallet,
    /// 1 (basic, the default) or 2 (enhanced).
    #[oai(validator(minimum(value = "1"), maximum(value = "2")))]
    pub tier: Option<u8>,
    /// The wallet's ed25519 signature (base58) of
    /// `narrative-market-service:kyc-start:<wallet>:<tier>:issued-at:<issued_at>` (the tier as
    /// a digit, 1 when absent).
    pub signature: Base58Signature,
    /// When the wallet signed (unix seconds): accepted within 300 s before the server's time
    /// (60 s after), once.
    pub issued_at: UnixSeconds,
}

/// An inquiry to send the user to, or the tier the wallet already holds.
#[derive(Object)]
pub struct KycStarted {
    pub ok: bool,
    /// `true` when the wallet already holds the tier asked for (or a higher one): no inquiry
    /// is opened and only `kyc_tier` is set.
    pub already_verified: bool,
    /// The wallet's verified tier (0 none).
    pub kyc_tier: i32,
    /// The provider's hosted flow to redirect the user to.
    pub kyc_url: Option<String>,
    pub inquiry_id: Option<String>,
    /// Lets the user into the inquiry (also in `kyc_url`); for the wallet's user only.
    pub session_token: Option<String>,
}

#[derive(Object)]
pub struct KycInquiry {
    /// The provider's id of the inquiry: with the admin headers only.
    #[oai(skip_serializing_if_is_none)]
    pub inquiry_id: Option<String>,
    pub tier: i32,
    /// As the provider last reported it: `created`, `pending`, `completed`, `approved`,
    /// `declined`, `failed`, `expired`, `needs_review`.
    pub status: String,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Object)]
pub struct KycStatus {
    pub ok: bool,
    pub wallet: Wallet,
    /// The highest tier an approved inquiry gave (0 none).
    pub kyc_tier: i32,
    pub verified: bool,
    /// Whether screening blocked the wallet's protocol writes (until an operator lifts it).
    pub blocked: bool,
    /// The wallet's most recent inquiry.
    pub inquiry: Option<KycInquiry>,
    /// Its latest screening: with the admin headers only (and once it was screened).
    #[oai(skip_serializing_if_is_none)]
    pub screening: Option<ScreeningVerdict>,
}

/// What the screening provider said of a wallet: for the operator.
#[derive(Object)]
pub struct ScreeningVerdict {
    /// Whether the screening provider flagged the wallet.
    pub flagged: bool,
    pub reason: Option<String>,
    /// `chainalysis` or `local`.
    pub provider: String,
    pub screened_at: String,
}

#[derive(Object)]
pub struct ScreenRequest {
    pub wallet: Wallet,
}

#[derive(Object)]
pub struct ScreeningResult {
    pub ok: bool,
    pub wallet: Wallet,
    /// When it was screened (a screening stands for 24 hours).
    pub screened_at: String,
    /// Whether its protocol writes are refused (403 `wallet_blocked`) now.
    pub blocked: bool,
    /// Whether the screening provider flagged the wallet: with the admin headers only (an
    /// operator's lifted block leaves a flagged wallet unblocked).
    #[oai(skip_serializing_if_is_none)]
    pub flagged: Option<bool>,
    /// Why it was flagged: with the admin headers only.
    #[oai(skip_serializing_if_is_none)]
    pub reason: Option<String>,
    /// `chainalysis` or `local`: with the admin headers only.
    #[oai(skip_serializing_if_is_none)]
    pub provider: Option<String>,
}

#[derive(Object)]
pub struct UnblockRequest {
    pub wallet: Wallet,
}

#[derive(Object)]
pub struct Unblocked {
    pub ok: bool,
    pub wallet: Wallet,
    /// `false` when the wallet was not blocked.
    pub unblocked: bool,
}

#[derive(Object)]
pub struct KycTier {
    pub ok: bool,
    pub wallet: Wallet,
    pub kyc_tier: i32,
}

#[derive(Object)]
pub struct KycWebhookRecorded {
    pub ok: bool,
    /// `updated` (an inquiry of this service), `unknown_inquiry` or `ignored` (another event).
    pub outcome: String,
    /// The tier the event raised the wallet to.
    pub raised_to: Option<i32>,
}

/// A JSON body kept as the bytes that were sent, for a signature over exactly them.
pub struct SignedJson(Vec<u8>);

impl Payload for SignedJson {
    const CONTENT_TYPE: &'static str = "application/json";

    fn check_content_type(content_type: &str) -> bool {
        let essence = content_type.split(';').next().unwrap_or("").trim();
        essence.eq_ignore_ascii_case("application/json")
    }

    fn schema_ref() -> MetaSchemaRef {
        MetaSchemaRef::Inline(Box::new(MetaSchema {
            description: Some("A Persona webhook event (`data.attributes.name`, `payload`)."),
            ..MetaSchema::new("object")
        }))
    }
}

impl ParsePayload for SignedJson {
    const IS_REQUIRED: bool = true;

    async fn from_request(request: &Request, body: &mut RequestBody) -> poem::Result<Self> {
        Ok(SignedJson(
            <Vec<u8> as poem::FromRequest>::from_request(request, body).await?,
        ))
    }
}

// The two-argument form: the one-argument form names the macro unqualified.
poem_openapi::impl_apirequest_for_payload!(SignedJson,);

refusals! {
    /// A signature that is not the wallet's (401); a blocked wallet (403 `wallet_blocked`); the
    /// provider unreachable (503 `kyc_unavailable`, `screening_unavailable`).
    StartRefusals: [400, 403, 413, 503];
    /// The screening provider unreachable (503 `screening_unavailable`).
    ScreenRefusals: [400, 413, 503];
    UnblockRefusals: [400, 413];
    ReadRefusals: [400];
    /// Unsigned, badly signed or stale (401).
    WebhookRefusals: [400, 413];
}

#[OpenApi(tag = "Tag::Kyc")]
impl KycApi {
    /// Open a hosted KYC inquiry for the wallet (with its signature), or learn that it already
    /// holds the tier.
    #[oai(path = "/kyc/start", method = "post")]
    async fn start(
        &self,
        req: &Request,
        body: Json<KycStart>,
    ) -> Answer<Json<KycStarted>, StartRefusals> {
        let body = body.0;
        let tier = body.tier.unwrap_or(1);
        let proof = Proof {
            wallet: &body.wallet,
            signature: &body.signature,
            issued_at: body.issued_at,
        };
        Ok(Json(
            match kyc::start(&self.state, client_ip(req), proof, tier).await? {
                Started::AlreadyVerified { tier } => KycStarted {
                    ok: true,
                    already_verified: true,
                    kyc_tier: tier,
                    kyc_url: None,
                    inquiry_id: None,
                    session_token: None,
                },
                Started::Opened { inquiry, tier } => KycStarted {
                    ok: true,
                    already_verified: false,
                    kyc_tier: tier,
                    kyc_url: Some(inquiry.url),
                    inquiry_id: Some(inquiry.inquiry_id),
                    session_token: Some(inquiry.session_token.expose_secret().to_owned()),
                },
            },
        ))
    }

    /// The wallet's KYC tier and its most recent inquiry's progress (public); with the admin
    /// headers also the inquiry's id and the latest screening.
    #[oai(path = "/kyc/status/:wallet", method = "get")]
    async fn status(
        &self,
        req: &Request,
        wallet: Path<Wallet>,
    ) -> Answer<Json<KycStatus>, ReadRefusals> {
        let operator = carries_admin(req, &self.state);
        let status = kyc::status(&self.state, &wallet.0).await?;
        let screening = if operator {
            kyc::latest_screening(&self.state, &wallet.0)
                .await?
                .map(|s| ScreeningVerdict {
                    flagged: s.flagged,
                    reason: s.reason,
                    provider: s.provider,
                    screened_at: iso(s.screened_at),
                })
        } else {
            None
        };
        Ok(Json(KycStatus {
            ok: true,
            wallet: wallet.0,
            kyc_tier: status.tier,
            verified: status.tier > 0,
            blocked: status.blocked,
            inquiry: status.latest.map(|i| KycInquiry {
                inquiry_id: operator.then_some(i.inquiry_id),
                tier: i.tier,
                status: i.status,
                created_at: iso(i.created_at),
                updated_at: iso(i.updated_at),
            }),
            screening,
        }))
    }

    /// Screen the wallet with the screening provider (its screening of the last 24 hours
    /// stands). A flagged wallet is blocked from protocol writes until an operator lifts it.
    /// The answer says whether the wallet is blocked; the verdict (`flagged`, `reason`,
    /// `provider`) only with the admin headers.
    #[oai(path = "/kyc/screen", method = "post")]
    async fn screen(
        &self,
        req: &Request,
        body: Json<ScreenRequest>,
    ) -> Answer<Json<ScreeningResult>, ScreenRefusals> {
        let operator = carries_admin(req, &self.state);
        let wallet = body.0.wallet;
        let screening = kyc::screen(&self.state, client_ip(req), &wallet).await?;
        Ok(Json(ScreeningResult {
            ok: true,
            wallet,
            screened_at: iso(screening.screened_at),
            blocked: screening.blocked,
            flagged: operator.then_some(screening.flagged),
            reason: screening.reason.filter(|_| operator),
            provider: operator.then_some(screening.provider),
        }))
    }

    /// Lift a wallet's block after review (admin). The review stands over later screenings.
    #[oai(path = "/admin/kyc/unblock", method = "post")]
    async fn unblock(
        &self,
        admin: AdminAuth,
        body: Json<UnblockRequest>,
    ) -> Answer<Json<Unblocked>, UnblockRefusals> {
        let wallet = body.0.wallet;
        let operator = Operator(admin.0);
        let unblocked = kyc::unblock(&self.state, &operator, &wallet).await?;
        Ok(Json(Unblocked {
            ok: true,
            wallet,
            unblocked,
        }))
    }

    /// The wallet's KYC tier (0 none).
    #[oai(path = "/kyc/tier/:wallet", method = "get")]
    async fn tier(&self, wallet: Path<Wallet>) -> Answer<Json<KycTier>, ReadRefusals> {
        let tier = kyc::tier(&self.state, &wallet.0).await?;
        Ok(Json(KycTier {
            ok: true,
            wallet: wallet.0,
            kyc_tier: tier,
        }))
    }

    /// The KYC provider's webhook: Persona's inquiry events, signed in `Persona-Signature`
    /// (`t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">` with `KYC_WEBHOOK_SECRET`, at most
    /// five minutes old). An approved inquiry raises the wallet's tier.
    #[oai(path = "/kyc/webhook", method = "post")]
    async fn webhook(
        &self,
        #[oai(name = "Persona-Signature")] signature: Header<Option<String>>,
        body: SignedJson,
    ) -> Answer<Json<KycWebhookRecorded>, WebhookRefusals> {
        let recorded = kyc::record_webhook(&self.state, signature.0.as_deref(), &body.0).await?;
        let (outcome, raised_to) = match recorded {
            Recorded::Updated { raised_to, .. } => ("updated", raised_to),
            Recorded::UnknownInquiry => ("unknown_inquiry", None),
            Recorded::Ignored => ("ignored", None),
        };
        Ok(Json(KycWebhookRecorded {
            ok: true,
            outcome: outcome.to_owned(),
            raised_to,
        }))
    }
}
