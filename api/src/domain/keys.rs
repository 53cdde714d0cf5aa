//! Agent API keys (spec 5.4–5.5): `<prefix>_<4 hex>_<64 hex>`, shown once at creation and stored
//! only as a SHA-256 digest. The 4-hex part is public (it is listed), the 64-hex part is the
//! secret: 256 random bits, so a digest lookup leaks nothing worth timing.

use narrative_store::entities::api_keys;
use poem::http::StatusCode;
use rand::RngCore;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder,
};
use serde_json::json;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::domain::admin::{self, Operator};
use crate::domain::wallet_proof::{self, Proof, Statement};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{enum_value, KeyId, Wallet};

/// The prefix of keys this service issues.
pub const KEY_PREFIX: &str = "nms";

enum_value!(
    /// An access tier of spec 8.
    AccessTier,
    "access_tier",
    "An API key's access tier: `free` (60 requests a minute), `pro` (300), `enterprise` (1000).",
    [Free => "free", Pro => "pro", Enterprise => "enterprise"]
);

impl AccessTier {
    /// Requests per minute (spec 8).
    pub fn limit_per_minute(self) -> u32 {
        match self {
            AccessTier::Free => 60,
            AccessTier::Pro => 300,
            AccessTier::Enterprise => 1000,
        }
    }
}

/// Who presented a valid key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub key_id: String,
    pub tier: AccessTier,
    pub wallet: Option<String>,
    /// The key came from its caller's own registration (an agent's), not from an operator.
    pub self_registered: bool,
}

/// Who a key was issued by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOrigin {
    /// An operator (`POST /v1/admin/apikeys`).
    Operator,
    /// The caller's own agent registration, which anyone may make.
    SelfRegistered,
}

/// A key in the spec's shape: `<prefix>_<4 hex>_<64 hex>`, lower-case hex.
pub fn well_formed(key: &str) -> bool {
    let mut parts = key.split('_');
    let (Some(prefix), Some(short), Some(secret), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let hex = |s: &str, len: usize| {
        s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    !prefix.is_empty()
        && prefix.bytes().all(|b| b.is_ascii_alphanumeric())
        && hex(short, 4)
        && hex(secret, 64)
}

/// The stored form of a key: the hex of its [`digest`].
fn digest_hex(key: &str) -> String {
    hex::encode(digest(key))
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    hex::encode(buf)
}

pub struct IssuedKey {
    pub row: api_keys::Model,
    pub tier: AccessTier,
    /// The whole key; never stored, never shown again.
    pub key: String,
}

pub async fn issue(
    db: &impl sea_orm::ConnectionTrait,
    tier: AccessTier,
    origin: KeyOrigin,
    wallet: Option<Wallet>,
    name: Option<String>,
    now: i64,
) -> Result<IssuedKey, ApiError> {
    let public = format!("{KEY_PREFIX}_{}", random_hex(2));
    let key = format!("{public}_{}", random_hex(32));
    let row = api_keys::Model {
        id: uuid::Uuid::new_v4().to_string(),
        prefix: public,
        key_hash: digest_hex(&key),
        tier: tier.as_str().to_owned(),
        wallet: wallet.map(|w| w.to_string()),
        name,
        created_at: now,
        revoked_at: None,
        last_used_at: None,
        self_registered: origin == KeyOrigin::SelfRegistered,
    };
    api_keys::Entity::insert(api_keys::ActiveModel {
        id: Set(row.id.clone()),
        prefix: Set(row.prefix.clone()),
        key_hash: Set(row.key_hash.clone()),
        tier: Set(row.tier.clone()),
        wallet: Set(row.wallet.clone()),
        name: Set(row.name.clone()),
        created_at: Set(row.created_at),
        revoked_at: Set(None),
        last_used_at: Set(None),
        self_registered: Set(row.self_registered),
    })
    .exec(db)
    .await?;
    Ok(IssuedKey { row, tier, key })
}

/// A key issued by the operator (`POST /v1/admin/apikeys`). While the paid tiers are inactive
/// (spec 5 rule 5, 8: the beta, until `PAID_TIERS_ACTIVE`), only Free keys: 403
/// `tier_inactive` for Pro and Enterprise, and nothing is issued.
pub async fn issue_by_operator(
    state: &AppState,
    operator: &Operator,
    tier: AccessTier,
    wallet: Option<Wallet>,
    name: Option<String>,
) -> Result<IssuedKey, ApiError> {
    if tier != AccessTier::Free && !state.paid_tiers_active {
        return Err(ApiError::coded(
            StatusCode::FORBIDDEN,
            "tier_inactive",
            format!(
                "the {} tier is inactive during the beta: only free keys are issued until \
                 PAID_TIERS_ACTIVE is set",
                tier.as_str()
            ),
        )
        .with("tier", tier.as_str()));
    }
    let now = state.now();
    let txn = state.store.begin_write().await?;
    let issued = issue(&txn, tier, KeyOrigin::Operator, wallet, name, now).await?;
    admin::log(
        &txn,
        operator,
        "apikey.issue",
        &issued.row.id,
        json!({
            "prefix": issued.row.prefix,
            "tier": tier.as_str(),
            "wallet": issued.row.wallet,
            "name": issued.row.name,
        }),
        now,
    )
    .await?;
    txn.commit().await?;
    tracing::info!(id = %issued.row.id, prefix = %issued.row.prefix, tier = tier.as_str(), "api key issued");
    Ok(issued)
}

/// The keys issued to `wallet`, newest first.
pub async fn list(state: &AppState, wallet: &Wallet) -> Result<Vec<api_keys::Model>, ApiError> {
    Ok(api_keys::Entity::find()
        .filter(api_keys::Column::Wallet.eq(wallet.to_string()))
        .order_by_desc(api_keys::Column::CreatedAt)
        .order_by_asc(api_keys::Column::Id)
        .all(state.store.db())
        .await?)
}

/// Revokes key `id` of `wallet` for its owner with `proof`, the wallet's fresh, unused
/// signature of [`revoke_statement`], or for the operator (logged), who may also revoke a key
/// issued to no wallet (which no owner can); 401 `invalid_signature` for anyone else, 404 when
/// the wallet has no such key.
pub async fn revoke_by_owner(
    state: &AppState,
    id: KeyId,
    wallet: &Wallet,
    proof: Option<Proof<'_>>,
    operator: Option<&Operator>,
) -> Result<(), ApiError> {
    if operator.is_none() {
        let proof = proof.ok_or_else(|| {
            ApiError::invalid_signature(format!(
                "revoking needs the admin headers or the wallet's signature of `{}` with its \
                 issued_at",
                revoke_statement(id, wallet).template(&state.proof_domain)
            ))
        })?;
        wallet_proof::prove(state, &revoke_statement(id, wallet), proof).await?;
    }
    let now = state.now();
    let txn = state.store.begin_write().await?;
    let Some(row) = api_keys::Entity::find_by_id(id.to_string())
        .one(&txn)
        .await?
    else {
        return Err(ApiError::not_found("api key"));
    };
    let owned = match row.wallet.as_deref() {
        Some(owner) => owner == wallet.to_string(),
        None => operator.is_some(),
    };
    if !owned {
        return Err(ApiError::not_found("api key"));
    }
    let revoked = api_keys::Entity::update_many()
        .col_expr(api_keys::Column::RevokedAt, Expr::value(Some(now)))
        .filter(api_keys::Column::Id.eq(row.id.as_str()))
        .filter(api_keys::Column::RevokedAt.is_null())
        .exec(&txn)
        .await?
        .rows_affected;
    if let (Some(operator), 1) = (operator, revoked) {
        admin::log(
            &txn,
            operator,
            "apikey.revoke",
            &row.id,
            json!({"prefix": row.prefix, "wallet": row.wallet}),
            now,
        )
        .await?;
    }
    txn.commit().await?;
    Ok(())
}

/// The SHA-256 digest of a key, as [`verify_digest`] looks it up.
pub fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.trim().as_bytes()).into()
}

/// The caller behind `key`, if it is a live key of this service.
pub async fn verify(db: &DatabaseConnection, key: &str) -> Result<Option<Caller>, ApiError> {
    let key = key.trim();
    if !well_formed(key) {
        return Ok(None);
    }
    verify_digest(db, &digest(key)).await
}

/// The caller behind the key whose digest is `digest` (of a well-formed key), if it is live.
pub async fn verify_digest(
    db: &DatabaseConnection,
    digest: &[u8; 32],
) -> Result<Option<Caller>, ApiError> {
    let digest = hex::encode(digest);
    let Some(row) = api_keys::Entity::find()
        .filter(api_keys::Column::KeyHash.eq(digest.clone()))
        .one(db)
        .await?
    else {
        return Ok(None);
    };
    let same: bool = row.key_hash.as_bytes().ct_eq(digest.as_bytes()).into();
    if !same || row.revoked_at.is_some() {
        return Ok(None);
    }
    Ok(Some(Caller {
        key_id: row.id,
        tier: row.tier.parse().map_err(ApiError::internal)?,
        wallet: row.wallet,
        self_registered: row.self_registered,
    }))
}

/// What a wallet signs to revoke one of its keys without the operator, with its issued-at
/// time: `narrative-market-service:revoke-api-key:<id>:<wallet>:issued-at:<secs>`.
pub fn revoke_statement(id: KeyId, wallet: &Wallet) -> Statement {
    Statement::new("revoke-api-key").field(id).field(wallet)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_format_is_prefix_4hex_64hex() {
        let good = format!("nms_0a1b_{}", "f".repeat(64));
        assert!(well_formed(&good));
        assert!(!well_formed(&format!("nms_0a1_{}", "f".repeat(64))));
        assert!(!well_formed(&format!("nms_0a1b_{}", "f".repeat(63))));
        assert!(!well_formed(&format!("nms_0A1B_{}", "f".repeat(64))));
        assert!(!well_formed(&format!("_0a1b_{}", "f".repeat(64))));
        assert!(!well_formed(&format!("nms_0a1b_{}_x", "f".repeat(64))));
        assert!(!well_formed(""));
    }

    #[test]
    fn random_parts_have_the_right_length() {
        assert_eq!(random_hex(2).len(), 4);
        assert_eq!(random_hex(32).len(), 64);
        assert_ne!(random_hex(32), random_hex(32));
    }

    #[test]
    fn tiers_have_the_spec_limits() {
        assert_eq!(AccessTier::Free.limit_per_minute(), 60);
        assert_eq!(AccessTier::Pro.limit_per_minute(), 300);
        assert_eq!(AccessTier::Enterprise.limit_per_minute(), 1000);
        assert!("platinum".parse::<AccessTier>().is_err());
    }
}
