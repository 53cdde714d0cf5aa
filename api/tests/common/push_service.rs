//! A push service on this machine that speaks what browsers' push services speak (RFC 8030):
//! it accepts a message only with a valid RFC 8292 VAPID token for its own origin and decrypts
//! the RFC 8291 `aes128gcm` body with the subscription's private key, as the browser would.
//! The decryption is written here from the RFC, apart from the crate the service encrypts
//! with, and checked against the RFC's own example.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes128Gcm, Nonce};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hkdf::Hkdf;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use poem::http::StatusCode;
use poem::web::{Data, Path};
use poem::{handler, post, EndpointExt, Request, Route};
use serde_json::{json, Value};
use sha2::Sha256;

/// A browser's side of one subscription: its key pair and auth secret.
pub struct Browser {
    pub endpoint: String,
    secret: p256::SecretKey,
    auth: [u8; 16],
}

impl Browser {
    /// `other`'s keys at another endpoint.
    pub fn at(endpoint: &str, other: &Browser) -> Browser {
        Browser {
            endpoint: endpoint.to_owned(),
            secret: other.secret.clone(),
            auth: other.auth,
        }
    }

    /// The subscription as `PushSubscription.toJSON()` gives it.
    pub fn subscription(&self) -> Value {
        json!({
            "endpoint": self.endpoint,
            "keys": {
                "p256dh": URL_SAFE_NO_PAD.encode(self.secret.public_key().to_encoded_point(false).as_bytes()),
                "auth": URL_SAFE_NO_PAD.encode(self.auth),
            },
        })
    }
}

/// A message the service accepted: decrypted, with what its VAPID token said.
#[derive(Debug, Clone)]
pub struct Delivered {
    /// The subscription's name (the endpoint's last segment).
    pub name: String,
    pub message: Value,
    pub vapid_key: String,
    pub subject: String,
    pub ttl: u64,
}

#[derive(Default)]
struct Inner {
    /// Per subscription name: the browsers' secrets.
    browsers: HashMap<String, (p256::SecretKey, [u8; 16])>,
    /// Per subscription name: statuses to answer, in order (then 201).
    script: HashMap<String, VecDeque<u16>>,
    delivered: Vec<Delivered>,
    /// Messages refused for a bad token or a body that does not decrypt, with the reason.
    rejected: Vec<String>,
    /// Every request, answered or not, by subscription name.
    attempts: HashMap<String, usize>,
}

#[derive(Clone)]
pub struct PushService {
    pub base: String,
    inner: Arc<Mutex<Inner>>,
}

impl PushService {
    pub async fn start() -> PushService {
        let inner = Arc::new(Mutex::new(Inner::default()));
        let base = super::serve_locally(
            Route::new()
                .at("/push/:name", post(receive))
                .data(inner.clone()),
        )
        .await;
        PushService { base, inner }
    }

    /// A new browser subscribed at this service under `name`.
    pub fn browser(&self, name: &str) -> Browser {
        let secret = p256::SecretKey::random(&mut rand::rngs::OsRng);
        let auth: [u8; 16] = rand::random();
        self.inner
            .lock()
            .unwrap()
            .browsers
            .insert(name.to_owned(), (secret.clone(), auth));
        Browser {
            endpoint: format!("{}/push/{name}", self.base),
            secret,
            auth,
        }
    }

    /// Answers `statuses` to the next requests for `name`, in order.
    pub fn answer(&self, name: &str, statuses: &[u16]) {
        self.inner
            .lock()
            .unwrap()
            .script
            .entry(name.to_owned())
            .or_default()
            .extend(statuses);
    }

    pub fn delivered(&self) -> Vec<Delivered> {
        self.inner.lock().unwrap().delivered.clone()
    }

    pub fn rejected(&self) -> Vec<String> {
        self.inner.lock().unwrap().rejected.clone()
    }

    pub fn attempts(&self, name: &str) -> usize {
        self.inner
            .lock()
            .unwrap()
            .attempts
            .get(name)
            .copied()
            .unwrap_or(0)
    }
}

#[handler]
async fn receive(
    Path(name): Path<String>,
    request: &Request,
    body: Vec<u8>,
    Data(inner): Data<&Arc<Mutex<Inner>>>,
) -> StatusCode {
    let origin = format!(
        "http://{}",
        request
            .headers()
            .get("host")
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default()
    );
    let mut inner = inner.lock().unwrap();
    *inner.attempts.entry(name.clone()).or_default() += 1;
    let Some((secret, auth)) = inner.browsers.get(&name).cloned() else {
        return StatusCode::NOT_FOUND;
    };
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let checked = (|| -> Result<Delivered, String> {
        if header("content-encoding").as_deref() != Some("aes128gcm") {
            return Err("Content-Encoding is not aes128gcm".into());
        }
        let ttl: u64 = header("ttl").and_then(|t| t.parse().ok()).ok_or("no TTL")?;
        let (vapid_key, subject) =
            check_vapid(&header("authorization").ok_or("no Authorization")?, &origin)?;
        let plaintext = decrypt(&body, &secret, &auth)?;
        let message = serde_json::from_slice(&plaintext).map_err(|e| format!("not JSON: {e}"))?;
        Ok(Delivered {
            name: name.clone(),
            message,
            vapid_key,
            subject,
            ttl,
        })
    })();
    match checked {
        Err(reason) => {
            inner.rejected.push(reason);
            StatusCode::UNAUTHORIZED
        }
        Ok(delivered) => {
            let status = inner
                .script
                .get_mut(&name)
                .and_then(VecDeque::pop_front)
                .unwrap_or(201);
            if (200..300).contains(&status) {
                inner.delivered.push(delivered);
            }
            StatusCode::from_u16(status).unwrap()
        }
    }
}

/// Checks `Authorization: vapid t=<jwt>, k=<key>` (RFC 8292) for `origin`; the key and the
/// token's subject.
fn check_vapid(authorization: &str, origin: &str) -> Result<(String, String), String> {
    let rest = authorization
        .strip_prefix("vapid ")
        .ok_or("not the vapid scheme")?;
    let mut token = None;
    let mut key = None;
    for part in rest.split(',') {
        let part = part.trim();
        if let Some(t) = part.strip_prefix("t=") {
            token = Some(t);
        } else if let Some(k) = part.strip_prefix("k=") {
            key = Some(k);
        }
    }
    let (token, key) = (token.ok_or("no t=")?, key.ok_or("no k=")?);
    let public = URL_SAFE_NO_PAD
        .decode(key)
        .map_err(|_| "k is not base64url")?;
    let verifier = VerifyingKey::from_sec1_bytes(&public).map_err(|_| "k is not a P-256 key")?;
    let parts: Vec<&str> = token.split('.').collect();
    let [head, claims, signature] = parts[..] else {
        return Err("the token is not a JWT".into());
    };
    let decode = |part: &str| -> Result<Value, String> {
        let bytes = URL_SAFE_NO_PAD.decode(part).map_err(|_| "not base64url")?;
        serde_json::from_slice(&bytes).map_err(|e| e.to_string())
    };
    if decode(head)?["alg"] != "ES256" {
        return Err("alg is not ES256".into());
    }
    let signature = URL_SAFE_NO_PAD
        .decode(signature)
        .ok()
        .and_then(|s| Signature::from_slice(&s).ok())
        .ok_or("the signature is not r‖s")?;
    verifier
        .verify(format!("{head}.{claims}").as_bytes(), &signature)
        .map_err(|_| "the token's signature does not verify with k")?;
    let claims = decode(claims)?;
    if claims["aud"] != origin {
        return Err(format!("aud {} is not {origin}", claims["aud"]));
    }
    let exp = claims["exp"].as_i64().ok_or("no exp")?;
    let now = chrono::Utc::now().timestamp();
    if exp <= now || exp > now + 24 * 3_600 {
        return Err(format!("exp {exp} is not within 24 h of {now}"));
    }
    let subject = claims["sub"].as_str().ok_or("no sub")?.to_owned();
    if !(subject.starts_with("mailto:") || subject.starts_with("https:")) {
        return Err(format!("sub {subject} is neither mailto: nor https:"));
    }
    Ok((key.to_owned(), subject))
}

/// RFC 8291 decryption of a one-record `aes128gcm` body (RFC 8188) by the user agent.
pub fn decrypt(body: &[u8], secret: &p256::SecretKey, auth: &[u8; 16]) -> Result<Vec<u8>, String> {
    if body.len() < 21 {
        return Err("shorter than the header".into());
    }
    let salt = &body[..16];
    let record_size = u32::from_be_bytes(body[16..20].try_into().unwrap()) as usize;
    let id_len = body[20] as usize;
    if id_len != 65 || body.len() < 21 + id_len {
        return Err("the key id is not a 65-byte P-256 key".into());
    }
    let sender_public = &body[21..21 + id_len];
    let ciphertext = &body[21 + id_len..];
    if ciphertext.len() > record_size {
        return Err("more than one record".into());
    }
    let sender = p256::PublicKey::from_sec1_bytes(sender_public).map_err(|_| "bad key id")?;
    let shared = p256::ecdh::diffie_hellman(secret.to_nonzero_scalar(), sender.as_affine());
    let receiver_public = secret.public_key().to_encoded_point(false);
    let mut key_info = b"WebPush: info\0".to_vec();
    key_info.extend_from_slice(receiver_public.as_bytes());
    key_info.extend_from_slice(sender_public);
    let mut ikm = [0u8; 32];
    Hkdf::<Sha256>::new(Some(auth), shared.raw_secret_bytes().as_slice())
        .expand(&key_info, &mut ikm)
        .map_err(|e| e.to_string())?;
    let prk = Hkdf::<Sha256>::new(Some(salt), &ikm);
    let mut cek = [0u8; 16];
    let mut nonce = [0u8; 12];
    prk.expand(b"Content-Encoding: aes128gcm\0", &mut cek)
        .map_err(|e| e.to_string())?;
    prk.expand(b"Content-Encoding: nonce\0", &mut nonce)
        .map_err(|e| e.to_string())?;
    let mut padded = Aes128Gcm::new_from_slice(&cek)
        .map_err(|e| e.to_string())?
        .decrypt(Nonce::from_slice(&nonce), ciphertext)
        .map_err(|_| "the record does not decrypt")?;
    // The last record ends in 0x02 followed by zero padding.
    while padded.last() == Some(&0) {
        padded.pop();
    }
    if padded.pop() != Some(2) {
        return Err("the record is not marked last".into());
    }
    Ok(padded)
}
