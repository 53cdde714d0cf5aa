//! `refresh_accounts`: re-read accounts a confirmed transaction changed and write them through
//! the store's batch writer, so a read right after a confirm shows the new state without waiting
//! for the indexer. Run by `chain::refresh`.

use narrative_sdk::Pubkey;
use serde::{Deserialize, Serialize};

use super::JobKind;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefreshAccounts {
    #[serde(with = "base58_keys")]
    pub addresses: Vec<Pubkey>,
}

impl JobKind for RefreshAccounts {
    const NAME: &'static str = "refresh_accounts";
}

/// Addresses as base58 strings in the payload.
mod base58_keys {
    use narrative_sdk::Pubkey;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(keys: &[Pubkey], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(keys.iter().map(Pubkey::to_string))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<Pubkey>, D::Error> {
        Vec::<String>::deserialize(deserializer)?
            .iter()
            .map(|k| k.parse().map_err(serde::de::Error::custom))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_lists_base58_addresses() {
        let job = RefreshAccounts {
            addresses: vec![Pubkey::new_from_array([1; 32])],
        };
        let json = serde_json::to_value(&job).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"addresses": [Pubkey::new_from_array([1; 32]).to_string()]})
        );
        assert_eq!(
            serde_json::from_value::<RefreshAccounts>(json).unwrap(),
            job
        );
    }
}
