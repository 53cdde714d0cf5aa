//! Agent API keys (spec 5.4–5.5): `<prefix>_<4 hex>_<64 hex>`, shown once at creation and stored
//! only as a SHA-256 digest. The 4-hex part is public (it is listed), the 64-hex part is the
//! secret: 256 random bits, so a digest lookup leaks nothing worth timing.

use narrative_store::entities::api_keys;
use rand::RngCore;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder,
};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::ApiError;
use crate::time::now;

/// The prefix of keys this service issues.
pub const KEY_PREFIX: &str = "nms";

/// Access tiers of spec 8 and their requests per minute.
pub const TIERS: [(&str, u32); 3] = [("free", 60), ("pro", 300), ("enterprise", 1000)];

pub fn tier_limit(tier: &str) -> Option<u32> {
    TIERS
        .iter()
        .find(|(name, _)| *name == tier)
        .map(|(_, limit)| *limit)
}

/// Who presented a valid key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub key_id: String,
    pub tier: String,
    pub wallet: Option<String>,
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

fn digest_hex(key: &str) -> String {
    Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rngs::OsRng.fill_bytes(&mut buf);
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

pub struct IssuedKey {
    pub row: api_keys::Model,
    /// The whole key; never stored, never shown again.
    pub key: String,
}

pub async fn issue(
    db: &impl sea_orm::ConnectionTrait,
    tier: &str,
    wallet: Option<String>,
    name: Option<String>,
) -> Result<IssuedKey, ApiError> {
    if tier_limit(tier).is_none() {
        return Err(ApiError::validation("tier must be free, pro or enterprise"));
    }
    let public = format!("{KEY_PREFIX}_{}", random_hex(2));
    let key = format!("{public}_{}", random_hex(32));
    let row = api_keys::Model {
        id: uuid::Uuid::new_v4().to_string(),
        prefix: public,
        key_hash: digest_hex(&key),
        tier: tier.to_owned(),
        wallet,
        name,
        created_at: now(),
        revoked_at: None,
        last_used_at: None,
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
    })
    .exec(db)
    .await?;
    Ok(IssuedKey { row, key })
}

/// The caller behind `key`, if it is a live key of this service.
pub async fn verify(db: &DatabaseConnection, key: &str) -> Result<Option<Caller>, ApiError> {
    let key = key.trim();
    if !well_formed(key) {
        return Ok(None);
    }
    let digest = digest_hex(key);
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
        tier: row.tier,
        wallet: row.wallet,
    }))
}

pub async fn list_for_wallet(
    db: &DatabaseConnection,
    wallet: &str,
) -> Result<Vec<api_keys::Model>, ApiError> {
    Ok(api_keys::Entity::find()
        .filter(api_keys::Column::Wallet.eq(wallet))
        .order_by_desc(api_keys::Column::CreatedAt)
        .order_by_asc(api_keys::Column::Id)
        .all(db)
        .await?)
}

/// Revokes key `id` of `wallet`; false when there is no such key.
pub async fn revoke(db: &DatabaseConnection, id: &str, wallet: &str) -> Result<bool, ApiError> {
    let Some(row) = api_keys::Entity::find_by_id(id.to_owned()).one(db).await? else {
        return Ok(false);
    };
    if row.wallet.as_deref() != Some(wallet) {
        return Ok(false);
    }
    if row.revoked_at.is_none() {
        api_keys::Entity::update(api_keys::ActiveModel {
            id: Set(row.id),
            revoked_at: Set(Some(now())),
            ..Default::default()
        })
        .exec(db)
        .await?;
    }
    Ok(true)
}

/// What a wallet signs to revoke one of its keys without the operator.
pub fn revoke_message(id: &str, wallet: &str) -> String {
    format!("narrative-market-service:revoke-api-key:{id}:{wallet}")
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
        assert_eq!(tier_limit("free"), Some(60));
        assert_eq!(tier_limit("pro"), Some(300));
        assert_eq!(tier_limit("enterprise"), Some(1000));
        assert_eq!(tier_limit("platinum"), None);
    }
}
