//! Human verification of `cf_token` (spec 4.13 `TURNSTILE_FAILED`): Cloudflare Turnstile's
//! `siteverify` in production, or a local verifier that accepts one configured token, for
//! development and tests.

use std::net::IpAddr;
use std::time::Duration;

use serde::Deserialize;

/// Cloudflare's verification endpoint.
pub const TURNSTILE_SITEVERIFY: &str = "https://challenges.cloudflare.com/turnstile/v0/siteverify";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Human,
    /// Refused, with the provider's error codes.
    Refused(Vec<String>),
}

#[async_trait::async_trait]
pub trait HumanVerifier: Send + Sync {
    /// Checks `token`; `Err` when the provider could not be asked.
    async fn verify(&self, token: &str, remote_ip: Option<IpAddr>) -> anyhow::Result<Verdict>;
}

/// Turnstile over HTTPS.
pub struct TurnstileVerifier {
    http: reqwest::Client,
    endpoint: String,
    secret: String,
}

impl TurnstileVerifier {
    pub fn new(secret: String, endpoint: Option<String>) -> anyhow::Result<Self> {
        Ok(TurnstileVerifier {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()?,
            endpoint: endpoint.unwrap_or_else(|| TURNSTILE_SITEVERIFY.to_owned()),
            secret,
        })
    }
}

#[derive(Deserialize)]
struct SiteverifyAnswer {
    success: bool,
    #[serde(default, rename = "error-codes")]
    error_codes: Vec<String>,
}

#[async_trait::async_trait]
impl HumanVerifier for TurnstileVerifier {
    async fn verify(&self, token: &str, remote_ip: Option<IpAddr>) -> anyhow::Result<Verdict> {
        let mut form = vec![
            ("secret", self.secret.clone()),
            ("response", token.to_owned()),
        ];
        if let Some(ip) = remote_ip {
            form.push(("remoteip", ip.to_string()));
        }
        let answer: SiteverifyAnswer = self
            .http
            .post(&self.endpoint)
            .form(&form)
            .send()
            .await?
            .error_for_status()?
            .json()
            .await?;
        Ok(if answer.success {
            Verdict::Human
        } else {
            Verdict::Refused(answer.error_codes)
        })
    }
}

/// Accepts exactly one token (`HUMAN_VERIFICATION_LOCAL_TOKEN`).
pub struct LocalVerifier {
    pub accepted: String,
}

#[async_trait::async_trait]
impl HumanVerifier for LocalVerifier {
    async fn verify(&self, token: &str, _: Option<IpAddr>) -> anyhow::Result<Verdict> {
        let same: bool =
            subtle::ConstantTimeEq::ct_eq(token.as_bytes(), self.accepted.as_bytes()).into();
        Ok(if same && !token.is_empty() {
            Verdict::Human
        } else {
            Verdict::Refused(vec!["invalid-input-response".into()])
        })
    }
}

fn turnstile_failed() -> crate::error::ApiError {
    crate::error::ApiError::coded(
        poem::http::StatusCode::BAD_REQUEST,
        "TURNSTILE_FAILED",
        "missing or invalid human-verification token",
    )
}

/// The `cf_token` check every human-gated write makes: 400 `TURNSTILE_FAILED` when it is
/// missing or refused, 503 `human_verification_unavailable` when the provider is unreachable.
pub async fn require_human(
    verifier: &dyn HumanVerifier,
    token: Option<&str>,
    remote_ip: Option<IpAddr>,
) -> Result<(), crate::error::ApiError> {
    let token = token.map(str::trim).unwrap_or_default();
    if token.is_empty() {
        return Err(turnstile_failed());
    }
    match verifier.verify(token, remote_ip).await {
        Ok(Verdict::Human) => Ok(()),
        Ok(Verdict::Refused(codes)) => Err(turnstile_failed().with("provider_codes", codes)),
        Err(error) => {
            tracing::warn!(error = %format!("{error:#}"), "human verification unavailable");
            Err(crate::error::ApiError::coded(
                poem::http::StatusCode::SERVICE_UNAVAILABLE,
                "human_verification_unavailable",
                "the human-verification provider could not be reached; retry shortly",
            ))
        }
    }
}
