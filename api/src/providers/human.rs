//! Human verification of `cf_token` (spec 4.13 `TURNSTILE_FAILED`): Cloudflare Turnstile's
//! `siteverify` in production, or a local verifier that accepts one configured token, for
//! development and tests.

use std::net::IpAddr;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
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
    secret: SecretString,
}

impl TurnstileVerifier {
    pub fn new(secret: SecretString, endpoint: Option<String>) -> anyhow::Result<Self> {
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
            ("secret", self.secret.expose_secret().to_owned()),
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

/// Accepts exactly one token (`HUMAN_VERIFICATION_LOCAL_TOKEN`); none when unset.
pub struct LocalVerifier {
    pub accepted: Option<SecretString>,
}

impl LocalVerifier {
    pub fn accepting(token: &str) -> LocalVerifier {
        LocalVerifier {
            accepted: Some(SecretString::from(token)),
        }
    }
}

#[async_trait::async_trait]
impl HumanVerifier for LocalVerifier {
    async fn verify(&self, token: &str, _: Option<IpAddr>) -> anyhow::Result<Verdict> {
        let accepted = self
            .accepted
            .as_ref()
            .map_or("", |secret| secret.expose_secret());
        let same: bool =
            subtle::ConstantTimeEq::ct_eq(token.as_bytes(), accepted.as_bytes()).into();
        Ok(if same && !token.is_empty() {
            Verdict::Human
        } else {
            Verdict::Refused(vec!["invalid-input-response".into()])
        })
    }
}
