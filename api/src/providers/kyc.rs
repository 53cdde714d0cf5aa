//! The KYC provider (spec 4.9): Persona's hosted inquiries in production (its sandbox ahead of
//! mainnet), or a local provider for development and tests, chosen by configuration
//! (`PERSONA_API_KEY`). Both report outcomes the same way: Persona's signed webhook
//! (`Persona-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed with the webhook
//! secret), so nothing is verified until a signed event says so.
//!
//! Persona's protocol as spoken here: `POST /api/v1/inquiries` with
//! `{data:{attributes:{inquiry-template-id, reference-id}}, meta:{auto-create-inquiry-session}}`
//! answers the inquiry (`data.id`) and a session token (`meta.session-token`; without one,
//! `POST /api/v1/inquiries/<id>/resume` makes one); the user is sent to the hosted flow at
//! `<hosted>/verify?inquiry-id=…&session-token=…`.

use std::time::Duration;

use anyhow::Context;
use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// Persona's API.
pub const PERSONA_API: &str = "https://api.withpersona.com";
/// Persona's hosted flow.
pub const PERSONA_HOSTED: &str = "https://inquiry.withpersona.com";
/// The API version this client speaks.
pub const PERSONA_VERSION: &str = "2025-10-27";
/// How old a signed webhook may be.
pub const SIGNATURE_TOLERANCE_SECS: i64 = 300;

/// An inquiry the provider opened: where to send the user, and the token that lets them in.
pub struct OpenedInquiry {
    pub inquiry_id: String,
    pub url: String,
    pub session_token: SecretString,
}

impl OpenedInquiry {
    /// The inquiry, with the user sent to `page` carrying its id and session token.
    fn at(page: &str, inquiry_id: String, token: String) -> anyhow::Result<OpenedInquiry> {
        let url = reqwest::Url::parse_with_params(
            page,
            [
                ("inquiry-id", inquiry_id.as_str()),
                ("session-token", &token),
            ],
        )?
        .to_string();
        Ok(OpenedInquiry {
            inquiry_id,
            url,
            session_token: SecretString::from(token),
        })
    }
}

#[async_trait::async_trait]
pub trait KycProvider: Send + Sync {
    /// `persona` or `local`, as recorded with each inquiry.
    fn name(&self) -> &'static str;

    /// Opens a hosted inquiry for `wallet` at `tier` (1 or 2).
    async fn open_inquiry(&self, wallet: &str, tier: u8) -> anyhow::Result<OpenedInquiry>;
}

/// Persona over HTTPS.
pub struct PersonaClient {
    http: reqwest::Client,
    api: String,
    hosted: String,
    key: SecretString,
    /// The inquiry template of tier 1 and of tier 2.
    templates: [String; 2],
}

impl PersonaClient {
    pub fn new(
        key: SecretString,
        api: Option<String>,
        hosted: Option<String>,
        templates: [String; 2],
    ) -> anyhow::Result<PersonaClient> {
        anyhow::ensure!(
            templates.iter().all(|t| !t.trim().is_empty()),
            "PERSONA_TEMPLATE_TIER1 and PERSONA_TEMPLATE_TIER2 are needed with PERSONA_API_KEY"
        );
        Ok(PersonaClient {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()?,
            api: api.unwrap_or_else(|| PERSONA_API.to_owned()),
            hosted: hosted.unwrap_or_else(|| PERSONA_HOSTED.to_owned()),
            key,
            templates,
        })
    }

    async fn call(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        let answer = self
            .http
            .post(format!("{}{path}", self.api.trim_end_matches('/')))
            .bearer_auth(self.key.expose_secret())
            .header("Persona-Version", PERSONA_VERSION)
            .header("Key-Inflection", "kebab")
            .json(&body)
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("Persona did not answer: {}", e.without_url()))?;
        let status = answer.status();
        anyhow::ensure!(status.is_success(), "Persona answered {status}");
        Ok(answer.json().await?)
    }
}

#[async_trait::async_trait]
impl KycProvider for PersonaClient {
    fn name(&self) -> &'static str {
        "persona"
    }

    async fn open_inquiry(&self, wallet: &str, tier: u8) -> anyhow::Result<OpenedInquiry> {
        let template = &self.templates[usize::from(tier.clamp(1, 2) - 1)];
        let created = self
            .call(
                "/api/v1/inquiries",
                json!({
                    "data": {"attributes": {
                        "inquiry-template-id": template,
                        "reference-id": wallet,
                    }},
                    "meta": {"auto-create-inquiry-session": true},
                }),
            )
            .await?;
        let inquiry_id = created["data"]["id"]
            .as_str()
            .filter(|id| !id.is_empty())
            .context("Persona's inquiry has no id")?
            .to_owned();
        let token = match created["meta"]["session-token"].as_str() {
            Some(token) => token.to_owned(),
            None => self
                .call(
                    &format!("/api/v1/inquiries/{inquiry_id}/resume"),
                    json!({"meta": {}}),
                )
                .await?["meta"]["session-token"]
                .as_str()
                .context("Persona's resume has no session token")?
                .to_owned(),
        };
        OpenedInquiry::at(
            &format!("{}/verify", self.hosted.trim_end_matches('/')),
            inquiry_id,
            token,
        )
    }
}

/// Development and tests: opens inquiries in the service's own records only. Its inquiries
/// are completed by the same signed webhook as Persona's (the operator signs it with the
/// webhook secret), never by themselves.
pub struct LocalKyc {
    /// The page the local "hosted flow" points at (documentation of the webhook to send).
    pub hosted: String,
}

#[async_trait::async_trait]
impl KycProvider for LocalKyc {
    fn name(&self) -> &'static str {
        "local"
    }

    async fn open_inquiry(&self, wallet: &str, tier: u8) -> anyhow::Result<OpenedInquiry> {
        let nonce: [u8; 16] = rand::random();
        let digest = Sha256::new()
            .chain_update(wallet.as_bytes())
            .chain_update([tier])
            .chain_update(nonce)
            .finalize();
        let inquiry_id = format!("inq_local_{}", hex::encode(&digest[..12]));
        let token = format!("local_{}", hex::encode(&digest[12..]));
        OpenedInquiry::at(&self.hosted, inquiry_id, token)
    }
}

/// `Persona-Signature` for `body` signed at `timestamp` with `secret` (what Persona sends; the
/// tests and the local provider's operator sign with it).
pub fn signature_header(body: &[u8], secret: &str, timestamp: i64) -> String {
    format!(
        "t={timestamp},v1={}",
        hex::encode(hmac(secret, timestamp, body))
    )
}

fn hmac(secret: &str, timestamp: i64, body: &[u8]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.finalize().into_bytes().into()
}

/// Whether `header` (`t=<unix>,v1=<hex>`, or several such sets separated by spaces while the
/// secret rotates) signs `body` with `secret`, within [`SIGNATURE_TOLERANCE_SECS`] of `now`.
/// Compared in constant time.
pub fn verify_signature(header: &str, body: &[u8], secret: &SecretString, now: i64) -> bool {
    header.split_whitespace().any(|set| {
        let mut timestamp = None;
        let mut signatures = Vec::new();
        for part in set.split(',') {
            match part.split_once('=') {
                Some(("t", t)) => timestamp = t.parse::<i64>().ok(),
                Some(("v1", v)) => signatures.extend(hex::decode(v).ok()),
                _ => {}
            }
        }
        let Some(timestamp) = timestamp else {
            return false;
        };
        // The header is the caller's: `abs_diff` cannot overflow on a timestamp near i64's
        // ends, where `(now - timestamp).abs()` panicked before the signature was looked at.
        if now.abs_diff(timestamp) > SIGNATURE_TOLERANCE_SECS.unsigned_abs() {
            return false;
        }
        let expected = hmac(secret.expose_secret(), timestamp, body);
        signatures.iter().any(|signature| {
            subtle::ConstantTimeEq::ct_eq(signature.as_slice(), expected.as_slice()).into()
        })
    })
}

/// An inquiry event of Persona's webhook: `data.attributes.name` (`inquiry.approved`…) and the
/// inquiry in `data.attributes.payload.data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InquiryEvent {
    pub name: String,
    pub inquiry_id: String,
    /// The inquiry's status (`approved`, `declined`, `failed`, `completed`, `expired`…).
    pub status: String,
}

impl InquiryEvent {
    /// The inquiry event in `body`; `None` for events about other objects.
    pub fn parse(body: &[u8]) -> Result<Option<InquiryEvent>, String> {
        let event: Value =
            serde_json::from_slice(body).map_err(|e| format!("the event is not JSON: {e}"))?;
        let attributes = &event["data"]["attributes"];
        let name = attributes["name"]
            .as_str()
            .ok_or("the event has no data.attributes.name")?;
        let inquiry = &attributes["payload"]["data"];
        if !name.starts_with("inquiry.") || inquiry["type"] != "inquiry" {
            return Ok(None);
        }
        let inquiry_id = inquiry["id"].as_str().ok_or("the inquiry has no id")?;
        let status = inquiry["attributes"]["status"]
            .as_str()
            .ok_or("the inquiry has no status")?;
        Ok(Some(InquiryEvent {
            name: name.to_owned(),
            inquiry_id: inquiry_id.to_owned(),
            status: status.to_owned(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_only_its_body_secret_and_time() {
        let secret = SecretString::from("wbhsec_test");
        let body = br#"{"data":{}}"#;
        let header = signature_header(body, "wbhsec_test", 1_000);
        assert!(verify_signature(&header, body, &secret, 1_000));
        assert!(verify_signature(&header, body, &secret, 1_300));
        assert!(!verify_signature(&header, body, &secret, 1_301), "too old");
        assert!(
            !verify_signature(&header, b"{}", &secret, 1_000),
            "another body"
        );
        assert!(!verify_signature(
            &header,
            body,
            &SecretString::from("other"),
            1_000
        ));
        // While the secret rotates, either set may sign.
        let rotating = format!("{} {header}", signature_header(body, "old", 1_000));
        assert!(verify_signature(&rotating, body, &secret, 1_000));
        // Timestamps at i64's ends are refused, not a panic (overflow checks are on in
        // release too).
        for extreme in [i64::MIN, i64::MAX] {
            let header = format!("t={extreme},v1=00");
            assert!(
                !verify_signature(&header, body, &secret, 1_000),
                "{extreme}"
            );
            assert!(
                !verify_signature(&header, body, &secret, -1_000),
                "{extreme}"
            );
        }
        for malformed in ["", "t=1000", "v1=00", "t=x,v1=zz", "garbage"] {
            assert!(
                !verify_signature(malformed, body, &secret, 1_000),
                "{malformed}"
            );
        }
    }

    #[test]
    fn the_hmac_is_over_timestamp_dot_body() {
        // HMAC-SHA256("key", "1.{}") computed independently (Python's hmac module).
        assert_eq!(
            signature_header(b"{}", "key", 1),
            "t=1,v1=1ba6b8171186efc613e8bcc0cbdab2748f24984d7c5a84faa2637afa0e40d224"
        );
    }

    #[test]
    fn inquiry_events_are_read_from_the_payload() {
        let body = json!({"data": {"type": "event", "id": "evt_1", "attributes": {
            "name": "inquiry.approved",
            "payload": {"data": {"type": "inquiry", "id": "inq_9",
                                 "attributes": {"status": "approved", "reference-id": "w"}}}}}});
        assert_eq!(
            InquiryEvent::parse(body.to_string().as_bytes()).unwrap(),
            Some(InquiryEvent {
                name: "inquiry.approved".into(),
                inquiry_id: "inq_9".into(),
                status: "approved".into()
            })
        );
        let other = json!({"data": {"attributes": {"name": "account.created",
            "payload": {"data": {"type": "account", "id": "act_1"}}}}});
        assert_eq!(
            InquiryEvent::parse(other.to_string().as_bytes()).unwrap(),
            None
        );
        assert!(InquiryEvent::parse(b"not json").is_err());
        assert!(InquiryEvent::parse(br#"{"data":{}}"#).is_err());
    }
}
