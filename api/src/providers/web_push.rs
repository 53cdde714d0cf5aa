//! The Web Push protocol as a sender speaks it to a browser's push service:
//!
//! - RFC 8291 message encryption (`aes128gcm`, one record) to the subscription's P-256 key and
//!   auth secret, by the `web-push-native` crate;
//! - RFC 8292 VAPID: an ES256 JWT `{aud: <endpoint origin>, exp, sub}` signed with the service's
//!   P-256 key, sent as `Authorization: vapid t=<jwt>, k=<public key>`. It is signed here rather
//!   than by the crate's VAPID feature so that `exp` comes from the injected clock and `aud`
//!   keeps a non-default port, as the origin does.
//!
//! Sending goes through the outbound guard (`providers::outbound`): push endpoints are URLs
//! that clients supplied, and only endpoints of a known push service ([`PushServices`]) are
//! taken, so a subscription cannot aim the service's deliveries at an arbitrary host.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use serde_json::json;
use tokio::sync::OnceCell;

use crate::values::{PushAuth, PushPublicKey};

/// How long a VAPID token is valid (RFC 8292 allows at most 24 hours).
pub const VAPID_VALIDITY_SECS: i64 = 12 * 3_600;
/// How long the push service keeps a message for a browser that is offline (`TTL`).
pub const MESSAGE_TTL_SECS: i64 = 24 * 3_600;
/// The largest plaintext one `aes128gcm` record carries within the 4,096 bytes every push
/// service accepts: 4,096 − 86 (salt, record size, key id) − 16 (tag) − 1 (padding delimiter).
pub const MAX_PLAINTEXT: usize = 3_993;

/// The hosts push endpoints may be at: exact names, or `*.<suffix>` for any name under
/// `<suffix>` (not `<suffix>` itself). Names compare case-insensitively.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushServices {
    exact: Vec<String>,
    suffixes: Vec<String>,
}

impl PushServices {
    /// The allowlist of `patterns` (blank ones ignored); an error names a malformed one.
    pub fn new<'a>(patterns: impl IntoIterator<Item = &'a str>) -> Result<PushServices, String> {
        let (mut exact, mut suffixes) = (Vec::new(), Vec::new());
        for pattern in patterns {
            let pattern = pattern.trim().to_ascii_lowercase();
            if pattern.is_empty() {
                continue;
            }
            match pattern.strip_prefix("*.") {
                Some(suffix) if !suffix.is_empty() && !suffix.contains('*') => {
                    suffixes.push(format!(".{suffix}"))
                }
                None if !pattern.contains('*') && !pattern.contains('/') => exact.push(pattern),
                _ => return Err(format!("`{pattern}` is not a host nor `*.<domain>`")),
            }
        }
        Ok(PushServices { exact, suffixes })
    }

    /// Whether `host` (a URL's host) is a known push service's.
    pub fn allows(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.exact.contains(&host)
            || self
                .suffixes
                .iter()
                .any(|suffix| host.ends_with(suffix.as_str()) && host.len() > suffix.len())
    }
}

/// The service's VAPID key pair (application server key). The private half never prints.
pub struct VapidKeys {
    signing: SigningKey,
    public: String,
}

impl VapidKeys {
    /// A fresh pair from the operating system's randomness.
    pub fn generate() -> VapidKeys {
        VapidKeys::from_signing(SigningKey::random(&mut rand::rngs::OsRng))
    }

    /// The pair whose private scalar is `secret` (base64url of 32 bytes).
    pub fn from_secret(secret: &str) -> anyhow::Result<VapidKeys> {
        let bytes = URL_SAFE_NO_PAD
            .decode(secret)
            .map_err(|_| anyhow::anyhow!("the stored VAPID key is not base64url"))?;
        let signing = SigningKey::from_slice(&bytes)
            .map_err(|_| anyhow::anyhow!("the stored VAPID key is not a P-256 scalar"))?;
        Ok(VapidKeys::from_signing(signing))
    }

    fn from_signing(signing: SigningKey) -> VapidKeys {
        let point = signing.verifying_key().to_encoded_point(false);
        VapidKeys {
            public: URL_SAFE_NO_PAD.encode(point.as_bytes()),
            signing,
        }
    }

    /// The private scalar, base64url: only for keeping it in the store.
    pub fn secret(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.signing.to_bytes())
    }

    /// The public key browsers subscribe with: base64url of the 65-byte uncompressed point.
    pub fn public_key(&self) -> &str {
        &self.public
    }

    /// The VAPID JWT for a push service at `endpoint`, valid from `now` for
    /// [`VAPID_VALIDITY_SECS`].
    pub fn token(&self, endpoint: &reqwest::Url, subject: &str, now: i64) -> String {
        let header = URL_SAFE_NO_PAD.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let claims = json!({
            "aud": endpoint.origin().ascii_serialization(),
            "exp": now + VAPID_VALIDITY_SECS,
            "sub": subject,
        });
        let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signing_input = format!("{header}.{claims}");
        // ES256 is r ‖ s, 32 bytes each (RFC 7518 3.4), not DER.
        let signature: Signature = self.signing.sign(signing_input.as_bytes());
        format!(
            "{signing_input}.{}",
            URL_SAFE_NO_PAD.encode(signature.to_bytes())
        )
    }

    /// The `Authorization` header value of RFC 8292.
    pub fn authorization(&self, endpoint: &reqwest::Url, subject: &str, now: i64) -> String {
        format!(
            "vapid t={}, k={}",
            self.token(endpoint, subject, now),
            self.public
        )
    }
}

impl fmt::Debug for VapidKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VapidKeys")
            .field("public", &self.public)
            .field("private", &"<redacted>")
            .finish()
    }
}

/// The process's copy of the VAPID pair, loaded once (where from is the caller's business:
/// `domain::notifications::push` keeps it in the store).
#[derive(Clone, Default)]
pub struct Vapid(Arc<OnceCell<Arc<VapidKeys>>>);

impl Vapid {
    /// The pair, loaded by `load` the first time (a failed load is tried again next time).
    pub async fn get_or_load<F, Fut>(&self, load: F) -> anyhow::Result<Arc<VapidKeys>>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = anyhow::Result<VapidKeys>>,
    {
        self.0
            .get_or_try_init(|| async { load().await.map(Arc::new) })
            .await
            .cloned()
    }
}

/// What the push services answered, counted for `/metrics`.
#[derive(Debug, Default)]
pub struct DeliveryCounts {
    /// 2xx: the push service took the message.
    pub delivered: AtomicU64,
    /// 404/410: the browser dropped the subscription, which was deleted.
    pub gone: AtomicU64,
    /// 429, 5xx, no answer: the job is retried.
    pub retried: AtomicU64,
    /// Any other answer, or an endpoint the guard refused: not retried.
    pub refused: AtomicU64,
}

impl DeliveryCounts {
    /// Its lines of the Prometheus text format.
    pub fn render(&self) -> String {
        let mut text = String::from(
            "# HELP push_deliveries_total Web Push attempts, by what the push service answered.\n\
             # TYPE push_deliveries_total counter\n",
        );
        for (outcome, count) in [
            ("delivered", &self.delivered),
            ("gone", &self.gone),
            ("retried", &self.retried),
            ("refused", &self.refused),
        ] {
            text += &format!(
                "push_deliveries_total{{outcome=\"{outcome}\"}} {}\n",
                count.load(Ordering::Relaxed)
            );
        }
        text
    }
}

/// A push message ready to POST: its headers and encrypted body (`application/octet-stream`).
pub struct PushRequest {
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// Encrypts `plaintext` (at most [`MAX_PLAINTEXT`] bytes) to a subscription and signs the
/// request for its endpoint.
pub fn push_request(
    endpoint: &reqwest::Url,
    browser_key: &PushPublicKey,
    auth: &PushAuth,
    plaintext: Vec<u8>,
    vapid: &VapidKeys,
    subject: &str,
    now: i64,
) -> anyhow::Result<PushRequest> {
    anyhow::ensure!(
        plaintext.len() <= MAX_PLAINTEXT,
        "a push message carries at most {MAX_PLAINTEXT} bytes, not {}",
        plaintext.len()
    );
    let body = web_push_native::encrypt(
        plaintext,
        browser_key.key(),
        &web_push_native::Auth::clone_from_slice(auth.bytes()),
    )
    .map_err(|e| anyhow::anyhow!("encrypting the push message: {e}"))?;
    Ok(PushRequest {
        headers: vec![
            ("authorization", vapid.authorization(endpoint, subject, now)),
            ("content-encoding", "aes128gcm".to_owned()),
            ("ttl", MESSAGE_TTL_SECS.to_string()),
            ("urgency", "normal".to_owned()),
        ],
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_endpoints_must_be_at_a_known_push_service() {
        // As the configuration's defaults (`PUSH_SERVICE_HOSTS`).
        let known = PushServices::new([
            "fcm.googleapis.com",
            "updates.push.services.mozilla.com",
            "*.notify.windows.com",
            "web.push.apple.com",
        ])
        .unwrap();
        for host in [
            "fcm.googleapis.com",
            "updates.push.services.mozilla.com",
            "wns2-by3p.notify.windows.com",
            "web.push.apple.com",
            "FCM.googleapis.com.",
        ] {
            assert!(known.allows(host), "{host}");
        }
        for host in [
            "evil.example",
            "notify.windows.com",
            "fcm.googleapis.com.evil.example",
            "xfcm.googleapis.com",
            "evilnotify.windows.com",
            "127.0.0.1",
        ] {
            assert!(!known.allows(host), "{host}");
        }
        let local = PushServices::new(["127.0.0.1", " "]).unwrap();
        assert!(local.allows("127.0.0.1"));
        assert!(!local.allows("fcm.googleapis.com"));
        assert!(PushServices::new(["*"]).is_err());
        assert!(PushServices::new(["a.*.example"]).is_err());
    }
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::VerifyingKey;

    #[test]
    fn a_stored_key_comes_back_as_the_same_pair() {
        let keys = VapidKeys::generate();
        let again = VapidKeys::from_secret(&keys.secret()).unwrap();
        assert_eq!(again.public_key(), keys.public_key());
        assert_eq!(URL_SAFE_NO_PAD.decode(keys.public_key()).unwrap().len(), 65);
        assert!(!format!("{keys:?}").contains(&keys.secret()));
        assert!(VapidKeys::from_secret("not a key").is_err());
        assert!(VapidKeys::from_secret(&URL_SAFE_NO_PAD.encode([0u8; 32])).is_err());
    }

    #[test]
    fn the_token_is_an_es256_jwt_for_the_endpoint_origin() {
        let keys = VapidKeys::generate();
        let endpoint: reqwest::Url = "https://push.example:8443/send/abc?x=1".parse().unwrap();
        let token = keys.token(&endpoint, "mailto:ops@example.com", 1_000);
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        assert_eq!(header, json!({"typ": "JWT", "alg": "ES256"}));
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(
            claims,
            json!({"aud": "https://push.example:8443", "exp": 1_000 + VAPID_VALIDITY_SECS,
                   "sub": "mailto:ops@example.com"})
        );
        let public = URL_SAFE_NO_PAD.decode(keys.public_key()).unwrap();
        let verifier = VerifyingKey::from_sec1_bytes(&public).unwrap();
        let signature = Signature::from_slice(&URL_SAFE_NO_PAD.decode(parts[2]).unwrap()).unwrap();
        let signed = format!("{}.{}", parts[0], parts[1]);
        assert!(verifier.verify(signed.as_bytes(), &signature).is_ok());
        assert!(verifier.verify(b"something else", &signature).is_err());
        // The default port is not part of an origin.
        let default_port: reqwest::Url = "https://push.example:443/x".parse().unwrap();
        let claims = keys.token(&default_port, "mailto:a@b", 0);
        let claims: serde_json::Value = serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(claims.split('.').nth(1).unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_eq!(claims["aud"], "https://push.example");
    }

    #[test]
    fn a_message_over_one_record_is_refused() {
        let keys = VapidKeys::generate();
        let browser: PushPublicKey =
            "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
                .parse()
                .unwrap();
        let auth: PushAuth = "BTBZMqHH6r4Tts7J_aSIgg".parse().unwrap();
        let endpoint: reqwest::Url = "https://push.example/x".parse().unwrap();
        let fits = push_request(
            &endpoint,
            &browser,
            &auth,
            vec![b'a'; MAX_PLAINTEXT],
            &keys,
            "mailto:a@b",
            0,
        )
        .unwrap();
        assert_eq!(fits.body.len(), 4_096);
        assert!(push_request(
            &endpoint,
            &browser,
            &auth,
            vec![b'a'; MAX_PLAINTEXT + 1],
            &keys,
            "mailto:a@b",
            0
        )
        .is_err());
    }
}
