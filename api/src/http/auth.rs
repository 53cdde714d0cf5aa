//! Auth classes of spec 5 as security schemes: the agent key (`x-api-key`), the operator pair
//! (`x-admin-wallet` + `x-admin-secret`) and the inbound webhooks' shared secret
//! (`x-webhook-secret`). Secrets are compared as SHA-256 digests in constant time, so neither
//! their content nor their length leaks through timing.

use std::sync::Arc;

use poem::Request;
use poem_openapi::auth::ApiKey;
use poem_openapi::SecurityScheme;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::domain::keys::{self, Caller};
use crate::error::ApiError;
use crate::state::AppState;

fn state(req: &Request) -> poem::Result<&Arc<AppState>> {
    req.data::<Arc<AppState>>()
        .ok_or_else(|| ApiError::internal("state missing").into())
}

/// Whether `secret` has the SHA-256 digest `expected`, compared in constant time.
fn digest_matches(secret: &str, expected: &[u8; 32]) -> bool {
    let digest: [u8; 32] = Sha256::digest(secret.as_bytes()).into();
    digest.ct_eq(expected).into()
}

/// Operator credentials: the secret in `x-admin-secret`, the wallet in `x-admin-wallet`.
#[derive(SecurityScheme)]
#[oai(
    ty = "api_key",
    key_name = "x-admin-secret",
    key_in = "header",
    checker = "check_admin"
)]
pub struct AdminAuth(pub String);

async fn check_admin(req: &Request, secret: ApiKey) -> poem::Result<String> {
    let wallet = req.header("x-admin-wallet").unwrap_or_default();
    if admin_matches(state(req)?, wallet, &secret.key) {
        Ok(wallet.to_owned())
    } else {
        tracing::warn!(wallet, "admin credentials refused");
        Err(ApiError::admin_unauthorized().into())
    }
}

fn admin_matches(state: &AppState, wallet: &str, secret: &str) -> bool {
    let Some(admin) = &state.admin else {
        return false;
    };
    digest_matches(secret, &admin.secret_sha256) && wallet == admin.wallet
}

/// Whether the request carries the operator pair (for routes where it is one way among others
/// to be allowed, such as revoking a key).
pub fn carries_admin(req: &Request, state: &AppState) -> bool {
    admin_wallet(req, state).is_some()
}

/// The operator's wallet when the request carries the operator pair.
pub fn admin_wallet(req: &Request, state: &AppState) -> Option<String> {
    let wallet = req.header("x-admin-wallet").unwrap_or_default();
    admin_matches(
        state,
        wallet,
        req.header("x-admin-secret").unwrap_or_default(),
    )
    .then(|| wallet.to_owned())
}

/// The job queue's page (spec 5 rule 6): HTTP Basic with the page's credentials, then the
/// admin pair; the operator's wallet when both hold. Basic is checked first, so that a browser
/// without it is asked for it (`WWW-Authenticate`). The pair cannot be sent by another site's
/// form, which is what keeps the page's buttons from being triggered cross-site.
pub fn queue_monitor_operator(req: &Request, state: &AppState) -> Result<String, QueueRefusal> {
    let basic_ok = state.queues_basic.as_ref().is_some_and(|expected| {
        basic_credentials(req).is_some_and(|(user, password)| {
            let user_ok: bool = Sha256::digest(user.as_bytes())
                .ct_eq(&Sha256::digest(expected.user.as_bytes()))
                .into();
            user_ok & digest_matches(&password, &expected.password_sha256)
        })
    });
    if !basic_ok {
        tracing::warn!("queue page: basic credentials refused");
        return Err(QueueRefusal::Basic);
    }
    if carries_admin(req, state) {
        Ok(req.header("x-admin-wallet").unwrap_or_default().to_owned())
    } else {
        tracing::warn!("queue page: admin credentials refused");
        Err(QueueRefusal::AdminPair)
    }
}

/// Why the queue page refused a request: both are 401 `Unauthorized`; a missing Basic also
/// asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueRefusal {
    Basic,
    AdminPair,
}

impl poem::IntoResponse for QueueRefusal {
    fn into_response(self) -> poem::Response {
        let mut refused = ApiError::admin_unauthorized().into_response();
        if self == QueueRefusal::Basic {
            refused.headers_mut().insert(
                "www-authenticate",
                poem::http::HeaderValue::from_static(
                    "Basic realm=\"narrative-market-service queues\", charset=\"UTF-8\"",
                ),
            );
        }
        refused
    }
}

/// `Authorization: Basic base64(user:password)`, decoded.
fn basic_credentials(req: &Request) -> Option<(String, String)> {
    use base64::Engine;
    let encoded = req
        .header("authorization")?
        .strip_prefix("Basic ")
        .or_else(|| req.header("authorization")?.strip_prefix("basic "))?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

/// An agent's API key, `<prefix>_<4 hex>_<64 hex>`.
#[derive(SecurityScheme)]
#[oai(
    ty = "api_key",
    key_name = "x-api-key",
    key_in = "header",
    checker = "check_api_key"
)]
pub struct ApiKeyAuth(pub Caller);

async fn check_api_key(req: &Request, key: ApiKey) -> poem::Result<Caller> {
    // The rate limiter has already verified the key of this request.
    if let Some(caller) = req.extensions().get::<Caller>() {
        return Ok(caller.clone());
    }
    match keys::verify(state(req)?.store.db(), &key.key).await? {
        Some(caller) => Ok(caller),
        None => Err(ApiError::invalid_api_key().into()),
    }
}

/// Inbound webhooks (spec 4.12): the shared secret in `x-webhook-secret`.
#[derive(SecurityScheme)]
#[oai(
    ty = "api_key",
    key_name = "x-webhook-secret",
    key_in = "header",
    checker = "check_webhook"
)]
pub struct WebhookAuth(pub ());

async fn check_webhook(req: &Request, secret: ApiKey) -> poem::Result<()> {
    match &state(req)?.webhook_secret_sha256 {
        Some(expected) if digest_matches(&secret.key, expected) => Ok(()),
        _ => {
            tracing::warn!("webhook secret refused");
            Err(ApiError::webhook_unauthorized().into())
        }
    }
}
