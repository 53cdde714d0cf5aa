//! The identity pass (spec 4.8, `idpass`): a biometric pass the user obtains in the provider's
//! flow, which hands the wallet a token; the service asks the provider whether that token is a
//! live pass issued to this wallet. Chosen by configuration (`IDPASS_INTROSPECTION_URL`):
//!
//! - The provider's OAuth 2.0 token introspection endpoint (RFC 7662): `POST` the form
//!   `token=<token>&token_type_hint=access_token`, authenticated as this service with HTTP Basic
//!   (`IDPASS_CLIENT_ID`, `IDPASS_CLIENT_SECRET`); the answer's `active` says whether the pass
//!   is live, `sub` whose wallet it was issued to, `exp` until when and `jti` which pass it is.
//! - Development and tests: a local pass that accepts one configured token
//!   (`IDPASS_LOCAL_TOKEN`) for any wallet; without it, every token is refused.

use std::time::Duration;

use base64::Engine;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

/// What the provider said of a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PassCheck {
    /// A live pass issued to the wallet.
    Valid {
        /// The pass's id, kept as the verification's reference.
        pass_id: String,
        /// When the pass lapses (unix seconds), if it does.
        expires_at: Option<i64>,
    },
    /// Not a pass of this wallet, and why.
    Refused(String),
}

#[async_trait::async_trait]
pub trait IdentityPass: Send + Sync {
    /// The provider's page where a user obtains a pass.
    fn flow_url(&self) -> &str;

    /// Whether `token` is a live pass of `wallet` at `now`; `Err` when the provider could not
    /// be asked.
    async fn check(&self, token: &str, wallet: &str, now: i64) -> anyhow::Result<PassCheck>;
}

/// RFC 7662 token introspection at the provider.
pub struct IntrospectedPass {
    http: reqwest::Client,
    endpoint: String,
    flow: String,
    /// `Basic <base64(client_id:client_secret)>`.
    authorization: SecretString,
}

impl IntrospectedPass {
    pub fn new(
        endpoint: String,
        flow: String,
        client_id: &str,
        client_secret: &SecretString,
    ) -> anyhow::Result<IntrospectedPass> {
        let credentials = base64::engine::general_purpose::STANDARD
            .encode(format!("{client_id}:{}", client_secret.expose_secret()));
        Ok(IntrospectedPass {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()?,
            endpoint,
            flow,
            authorization: format!("Basic {credentials}").into(),
        })
    }
}

/// The members of an introspection answer this service reads (RFC 7662 section 2.2).
#[derive(Deserialize)]
struct Introspection {
    active: bool,
    sub: Option<String>,
    exp: Option<i64>,
    jti: Option<String>,
}

/// The verdict on an introspection answer: live, issued to `wallet`, unexpired at `now`.
fn judge(answer: Introspection, wallet: &str, now: i64) -> PassCheck {
    if !answer.active {
        return PassCheck::Refused("the identity pass is not active".into());
    }
    match answer.sub.as_deref() {
        Some(subject) if subject == wallet => {}
        Some(_) => return PassCheck::Refused("the identity pass belongs to another wallet".into()),
        None => return PassCheck::Refused("the identity pass names no wallet".into()),
    }
    if answer.exp.is_some_and(|exp| exp <= now) {
        return PassCheck::Refused("the identity pass has expired".into());
    }
    PassCheck::Valid {
        pass_id: answer.jti.unwrap_or_else(|| "introspected".to_owned()),
        expires_at: answer.exp,
    }
}

#[async_trait::async_trait]
impl IdentityPass for IntrospectedPass {
    fn flow_url(&self) -> &str {
        &self.flow
    }

    async fn check(&self, token: &str, wallet: &str, now: i64) -> anyhow::Result<PassCheck> {
        let answer = self
            .http
            .post(&self.endpoint)
            .header("Authorization", self.authorization.expose_secret())
            .header("Accept", "application/json")
            .form(&[("token", token), ("token_type_hint", "access_token")])
            .send()
            .await
            .map_err(|e| {
                anyhow::anyhow!(
                    "the identity pass provider did not answer: {}",
                    e.without_url()
                )
            })?;
        let status = answer.status();
        anyhow::ensure!(
            status.is_success(),
            "the identity pass provider answered {status}"
        );
        Ok(judge(answer.json().await?, wallet, now))
    }
}

/// Development and tests: one accepted token, for any wallet.
pub struct LocalPass {
    pub accepted: Option<SecretString>,
    pub flow: String,
}

#[async_trait::async_trait]
impl IdentityPass for LocalPass {
    fn flow_url(&self) -> &str {
        &self.flow
    }

    async fn check(&self, token: &str, _wallet: &str, _now: i64) -> anyhow::Result<PassCheck> {
        let accepted = self.accepted.as_ref().is_some_and(|accepted| {
            subtle::ConstantTimeEq::ct_eq(accepted.expose_secret().as_bytes(), token.as_bytes())
                .into()
        });
        Ok(if accepted {
            PassCheck::Valid {
                pass_id: "local".to_owned(),
                expires_at: None,
            }
        } else {
            PassCheck::Refused("not the local identity pass token".into())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(active: bool, sub: Option<&str>, exp: Option<i64>) -> Introspection {
        Introspection {
            active,
            sub: sub.map(str::to_owned),
            exp,
            jti: Some("pass-1".into()),
        }
    }

    #[test]
    fn only_a_live_unexpired_pass_of_the_wallet_is_valid() {
        assert_eq!(
            judge(answer(true, Some("w"), Some(101)), "w", 100),
            PassCheck::Valid {
                pass_id: "pass-1".into(),
                expires_at: Some(101)
            }
        );
        for (refused, why) in [
            (answer(false, Some("w"), None), "not active"),
            (answer(true, Some("other"), None), "another wallet"),
            (answer(true, None, None), "names no wallet"),
            (answer(true, Some("w"), Some(100)), "expired"),
        ] {
            match judge(refused, "w", 100) {
                PassCheck::Refused(reason) => assert!(reason.contains(why), "{reason}"),
                valid => panic!("{why}: {valid:?}"),
            }
        }
    }
}
