//! KYC (spec 4.9): opening a hosted inquiry with the provider, the wallet's status and tier,
//! the provider's signed webhook, wallet screening, and the operator's unblock.

use std::sync::Arc;

use poem::{Request, RequestBody};
use poem_openapi::param::{Header, Path};
use poem_openapi::payload::{Json, ParsePayload, Payload};
use poem_openapi::registry::{MetaSchema, MetaSchemaRef};
use poem_openapi::{Object, OpenApi};
use secrecy::ExposeSecret;

use crate::clock::iso;
use crate::domain::kyc::{self, Recorded, Started};
use crate::error::{refusals, Answer};
use crate::http::auth::AdminAuth;
use crate::http::client_ip::client_ip;
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::{Base58Signature, Wallet};

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
    /// `narrative-market-service:kyc-start:<wallet>:<tier>` (the tier as a digit, 1 when
    /// absent).
    pub signature: Base58Signature,
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
    pub inquiry_id: String,
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
}

#[derive(Object)]
pub struct ScreenRequest {
    pub wallet: Wallet,
}

#[derive(Object)]
pub struct ScreeningResult {
    pub ok: bool,
    pub wallet: Wallet,
    /// Whether the screening provider flagged the wallet.
    pub flagged: bool,
    pub reason: Option<String>,
    /// `chainalysis` or `local`.
    pub provider: String,
    /// When it was screened (a screening stands for 24 hours).
    pub screened_at: String,
    /// Whether its protocol writes are refused (403 `wallet_blocked`) now.
    pub blocked: bool,
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
    async fn start(&self, body: Json<KycStart>) -> Answer<Json<KycStarted>, StartRefusals> {
        let body = body.0;
        let tier = body.tier.unwrap_or(1);
        Ok(Json(
            match kyc::start(&self.state, &body.wallet, tier, &body.signature).await? {
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

    /// The wallet's KYC tier and its most recent inquiry.
    #[oai(path = "/kyc/status/:wallet", method = "get")]
    async fn status(&self, wallet: Path<Wallet>) -> Answer<Json<KycStatus>, ReadRefusals> {
        let status = kyc::status(&self.state, &wallet.0).await?;
        Ok(Json(KycStatus {
            ok: true,
            wallet: wallet.0,
            kyc_tier: status.tier,
            verified: status.tier > 0,
            blocked: status.blocked,
            inquiry: status.latest.map(|i| KycInquiry {
                inquiry_id: i.inquiry_id,
                tier: i.tier,
                status: i.status,
                created_at: iso(i.created_at),
                updated_at: iso(i.updated_at),
            }),
        }))
    }

    /// Screen the wallet with the screening provider (its screening of the last 24 hours
    /// stands). A flagged wallet is blocked from protocol writes until an operator lifts it.
    #[oai(path = "/kyc/screen", method = "post")]
    async fn screen(
        &self,
        req: &Request,
        body: Json<ScreenRequest>,
    ) -> Answer<Json<ScreeningResult>, ScreenRefusals> {
        let wallet = body.0.wallet;
        let screening = kyc::screen_for(&self.state, client_ip(req), &wallet).await?;
        Ok(Json(ScreeningResult {
            ok: true,
            wallet,
            flagged: screening.flagged,
            reason: screening.reason,
            provider: screening.provider,
            screened_at: iso(screening.screened_at),
            blocked: screening.blocked,
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
        let unblocked = kyc::unblock(&self.state, &admin.0, &wallet).await?;
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
