//! Validation shared by the programs' role settings.

use anchor_lang::prelude::Pubkey;

/// An oracle set is valid with 1 to `max` distinct non-zero keys and a threshold of at least
/// one vote and at most the set's size.
pub fn oracle_set_is_valid(oracles: &[Pubkey], threshold: u8, max: usize) -> bool {
    let distinct = oracles
        .iter()
        .enumerate()
        .all(|(i, key)| *key != Pubkey::default() && !oracles[..i].contains(key));
    distinct
        && !oracles.is_empty()
        && oracles.len() <= max
        && threshold >= 1
        && threshold as usize <= oracles.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_and_invalid_sets() {
        let keys: Vec<Pubkey> = (0..6).map(|_| Pubkey::new_unique()).collect();
        assert!(oracle_set_is_valid(&keys[..3], 2, 5));
        assert!(oracle_set_is_valid(&keys[..5], 5, 5));
        assert!(!oracle_set_is_valid(&keys, 1, 5), "too many");
        assert!(!oracle_set_is_valid(&[], 0, 5), "empty");
        assert!(
            !oracle_set_is_valid(&keys[..2], 3, 5),
            "threshold above size"
        );
        assert!(!oracle_set_is_valid(&keys[..2], 0, 5), "zero threshold");
        assert!(!oracle_set_is_valid(&[keys[0], keys[0]], 1, 5), "duplicate");
        assert!(!oracle_set_is_valid(&[Pubkey::default()], 1, 5), "zero key");
    }
}
