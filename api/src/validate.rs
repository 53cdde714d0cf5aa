//! Input types that cannot hold invalid values: base58 wallets, UUIDs, SOL amounts, and caps that
//! clamp rather than reject (spec 8).

use narrative_sdk::Pubkey;
use uuid::Uuid;

use crate::error::ApiError;

pub const LAMPORTS_PER_SOL: u64 = 1_000_000_000;

/// A base58 public key from field `field`.
pub fn wallet(field: &str, value: &str) -> Result<Pubkey, ApiError> {
    let key: Pubkey = value
        .trim()
        .parse()
        .map_err(|_| ApiError::validation(format!("{field} must be a base58 public key")))?;
    Ok(key)
}

pub fn uuid(field: &str, value: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(value.trim())
        .map_err(|_| ApiError::validation(format!("{field} must be a UUID")))
}

/// SOL (decimal) to lamports, refusing negatives, non-numbers and sub-lamport precision.
pub fn lamports(field: &str, sol: f64) -> Result<u64, ApiError> {
    if !sol.is_finite() || sol <= 0.0 {
        return Err(ApiError::validation(format!(
            "{field} must be a positive number of SOL"
        )));
    }
    let exact = sol * LAMPORTS_PER_SOL as f64;
    let lamports = exact.round();
    // Float noise of the multiplication is far below a lamport; anything more is real precision.
    let tolerance = (exact * 1e-15).max(1e-3);
    if lamports < 1.0 || lamports > u64::MAX as f64 || (exact - lamports).abs() > tolerance {
        return Err(ApiError::validation(format!(
            "{field} has more precision than a lamport"
        )));
    }
    Ok(lamports as u64)
}

pub fn sol(lamports: i64) -> f64 {
    lamports as f64 / LAMPORTS_PER_SOL as f64
}

/// A cap that clamps: absent → `default`, outside `min..=max` → the nearest bound.
pub fn clamp(value: Option<i64>, default: i64, min: i64, max: i64) -> i64 {
    value.unwrap_or(default).clamp(min, max)
}

/// `limit` and `offset` query values as a page: the limit clamped to `1..=max` (absent →
/// `default`), a negative or absent offset → 0.
pub fn page(limit: Option<i64>, offset: Option<i64>, default: i64, max: i64) -> (u64, u64) {
    (
        clamp(limit, default, 1, max) as u64,
        offset.unwrap_or(0).max(0) as u64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wallets_must_be_base58_keys() {
        assert!(wallet("wallet", "11111111111111111111111111111111").is_ok());
        let err = wallet("wallet", "not-a-key").unwrap_err();
        assert_eq!(err.body["error"], "wallet must be a base58 public key");
        assert_eq!(err.body["ok"], false);
    }

    #[test]
    fn sol_amounts_become_exact_lamports() {
        assert_eq!(lamports("amount_sol", 0.1).unwrap(), 100_000_000);
        assert_eq!(
            lamports("amount_sol", 12.345678901).unwrap(),
            12_345_678_901
        );
        assert!(lamports("amount_sol", 0.0).is_err());
        assert!(lamports("amount_sol", -1.0).is_err());
        assert!(lamports("amount_sol", f64::NAN).is_err());
        assert!(lamports("amount_sol", 0.0000000001).is_err());
    }

    #[test]
    fn caps_clamp() {
        assert_eq!(clamp(None, 20, 1, 100), 20);
        assert_eq!(clamp(Some(500), 20, 1, 100), 100);
        assert_eq!(clamp(Some(0), 20, 1, 100), 1);
        assert_eq!(clamp(Some(-5), 20, 1, 100), 1);
    }

    #[test]
    fn pages_clamp_limit_and_offset() {
        assert_eq!(page(None, None, 50, 200), (50, 0));
        assert_eq!(page(Some(10_000), Some(-3), 50, 200), (200, 0));
        assert_eq!(page(Some(0), Some(7), 50, 200), (1, 7));
    }
}
