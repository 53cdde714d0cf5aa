//! Auth classes of spec 5 as security schemes: the agent key (`x-api-key`) and the operator pair
//! (`x-admin-wallet` + `x-admin-secret`). The admin secret is compared as a SHA-256 digest in
//! constant time, so neither its content nor its length leaks through timing.

use std::sync::Arc;

use poem::Request;
use poem_openapi::auth::ApiKey;
use poem_openapi::SecurityScheme;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::ApiError;
use crate::keys::{self, Caller};
use crate::state::AppState;

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
    let state = req
        .data::<Arc<AppState>>()
        .ok_or_else(|| poem::Error::from(ApiError::internal("state missing")))?;
    let wallet = req.header("x-admin-wallet").unwrap_or_default();
    if admin_matches(state, wallet, &secret.key) {
        Ok(wallet.to_owned())
    } else {
        tracing::warn!(wallet, "admin credentials refused");
        Err(ApiError::admin_unauthorized().into())
    }
}

pub fn admin_matches(state: &AppState, wallet: &str, secret: &str) -> bool {
    let Some(admin) = &state.admin else {
        return false;
    };
    let digest: [u8; 32] = Sha256::digest(secret.as_bytes()).into();
    let secret_ok: bool = digest.ct_eq(&admin.secret_sha256).into();
    secret_ok && wallet == admin.wallet
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
    let state = req
        .data::<Arc<AppState>>()
        .ok_or_else(|| poem::Error::from(ApiError::internal("state missing")))?;
    match keys::verify(state.store.db(), &key.key).await? {
        Some(caller) => Ok(caller),
        None => Err(ApiError::invalid_api_key().into()),
    }
}

/// Inbound webhooks (spec 4.12): the shared secret in `x-webhook-secret`, compared as a digest
/// in constant time.
#[derive(SecurityScheme)]
#[oai(
    ty = "api_key",
    key_name = "x-webhook-secret",
    key_in = "header",
    checker = "check_webhook"
)]
pub struct WebhookAuth(pub ());

async fn check_webhook(req: &Request, secret: ApiKey) -> poem::Result<()> {
    let state = req
        .data::<Arc<AppState>>()
        .ok_or_else(|| poem::Error::from(ApiError::internal("state missing")))?;
    let Some(expected) = &state.webhook_secret_sha256 else {
        return Err(ApiError::webhook_unauthorized().into());
    };
    let digest: [u8; 32] = Sha256::digest(secret.key.as_bytes()).into();
    if bool::from(digest.ct_eq(expected)) {
        Ok(())
    } else {
        tracing::warn!("webhook secret refused");
        Err(ApiError::webhook_unauthorized().into())
    }
}
