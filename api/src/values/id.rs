//! Identifiers: UUIDs (narratives, prepared transactions, API keys, drafts), a binary market as
//! its UUID or its 32-byte id, an agent's `ag_…` id and a shield coverage's protocol_id.

use std::fmt;
use std::str::FromStr;

use uuid::Uuid;

use super::{string_schema, string_value};

/// A hyphenated UUID, any case: the only spelling the api accepts (spec 4.0).
const UUID_PATTERN: &str =
    "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";

fn parse_uuid(text: &str) -> Result<Uuid, &'static str> {
    const REFUSED: &str = "must be a hyphenated UUID";
    let hyphens = [8, 13, 18, 23];
    let shaped = text.len() == 36
        && text.char_indices().all(|(i, c)| {
            if hyphens.contains(&i) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
    if !shaped {
        return Err(REFUSED);
    }
    Uuid::parse_str(text).map_err(|_| REFUSED)
}

fn parse_hex32(text: &str) -> Option<[u8; 32]> {
    let mut bytes = [0u8; 32];
    hex::decode_to_slice(text, &mut bytes).ok()?;
    Some(bytes)
}

/// A UUID naming one kind of thing; each kind is its own type so that ids cannot be mixed up.
macro_rules! uuid_id {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $description:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $ty(pub Uuid);

        impl $ty {
            pub fn new_random() -> Self {
                $ty(Uuid::new_v4())
            }
        }

        impl FromStr for $ty {
            type Err = &'static str;

            fn from_str(text: &str) -> Result<Self, Self::Err> {
                parse_uuid(text).map($ty)
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.hyphenated().fmt(f)
            }
        }

        string_value!(
            $ty,
            $name,
            string_schema($description, &format!("^{UUID_PATTERN}$"), Some("uuid"))
        );
    };
}

uuid_id!(
    /// A narrative (spec 2.1); its market's 32-byte id is derived from it.
    NarrativeId,
    "narrative_id",
    "A narrative's id: a hyphenated UUID."
);
uuid_id!(
    /// A transaction prepared for a wallet to sign.
    PreparedId,
    "prepared_id",
    "The id of a prepared transaction: a hyphenated UUID."
);
impl PreparedId {
    /// A time-ordered id (UUID version 7) at `unix_seconds`, random within the second: the
    /// prepared transactions' primary key then grows at its right edge instead of touching a
    /// random index page per row (on Postgres, a full-page image in the WAL for each after a
    /// checkpoint: 9x the WAL of a 16-row insert, measured with `EXPLAIN (ANALYZE, WAL)`).
    pub fn new_ordered(unix_seconds: i64) -> PreparedId {
        let millis = u64::try_from(unix_seconds)
            .unwrap_or(0)
            .saturating_mul(1000);
        PreparedId(
            uuid::Builder::from_unix_timestamp_millis(millis, &rand::random::<[u8; 10]>())
                .into_uuid(),
        )
    }
}

uuid_id!(
    /// An API key (its public id, never the secret).
    KeyId,
    "key_id",
    "An API key's id: a hyphenated UUID."
);
uuid_id!(
    /// A fee-gated market creation (`POST /v1/markets`), which Classic review names.
    CreationId,
    "creation_id",
    "A market creation's id: a hyphenated UUID."
);
uuid_id!(
    /// An AI draft of a narrative (`generate`'s `jobId`).
    GenerationId,
    "generation_id",
    "A draft's id: a hyphenated UUID."
);

impl NarrativeId {
    /// The 32-byte `market_id` of the narrative's market (ARCHITECTURE §2).
    pub fn market_id(&self) -> [u8; 32] {
        narrative_sdk::market_id::market_id_from_uuid(&self.0)
    }
}

/// A binary market, named by its UUID (narratives, native markets) or its 32-byte `market_id`
/// in hex.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MarketRef([u8; 32]);

impl MarketRef {
    pub fn market_id(&self) -> [u8; 32] {
        self.0
    }

    /// The `market_id` as the store keeps it.
    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }
}

impl From<[u8; 32]> for MarketRef {
    fn from(id: [u8; 32]) -> Self {
        MarketRef(id)
    }
}

impl FromStr for MarketRef {
    type Err = &'static str;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if let Ok(uuid) = parse_uuid(text) {
            return Ok(MarketRef(narrative_sdk::market_id::market_id_from_uuid(
                &uuid,
            )));
        }
        parse_hex32(text)
            .map(MarketRef)
            .ok_or("must be a hyphenated UUID or 64 hex characters")
    }
}

impl fmt::Display for MarketRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

string_value!(
    MarketRef,
    "market_ref",
    string_schema(
        "A binary market: its hyphenated UUID, or its 32-byte market_id as 64 hex characters.",
        &format!("^({UUID_PATTERN}|[0-9a-fA-F]{{64}})$"),
        None,
    )
);

/// An agent (spec 2.7): `ag_` and 32 lower-case hex characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AgentId(String);

impl AgentId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for AgentId {
    type Err = &'static str;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let shaped = text.strip_prefix("ag_").is_some_and(|hex| {
            hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        });
        if !shaped {
            return Err("must be `ag_` and 32 lower-case hex characters");
        }
        Ok(AgentId(text.to_owned()))
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

string_value!(
    AgentId,
    "agent_id",
    string_schema(
        "An agent's id: `ag_` and 32 lower-case hex characters.",
        "^ag_[0-9a-f]{32}$",
        None,
    )
);

/// A shield coverage's `protocol_id`: 32 bytes, 64 hex characters (written lower case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProtocolId(pub [u8; 32]);

impl FromStr for ProtocolId {
    type Err = &'static str;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_hex32(text)
            .map(ProtocolId)
            .ok_or("must be 64 hex characters")
    }
}

impl fmt::Display for ProtocolId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0))
    }
}

string_value!(
    ProtocolId,
    "protocol_id",
    string_schema(
        "A coverage period's protocol_id: 32 bytes as 64 hex characters.",
        "^[0-9a-fA-F]{64}$",
        None,
    )
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepared_ids_sort_by_their_second_and_parse_back() {
        let earlier = PreparedId::new_ordered(1_800_000_000);
        let later = PreparedId::new_ordered(1_800_000_001);
        assert_eq!(earlier.0.get_version_num(), 7);
        assert!(earlier.to_string() < later.to_string());
        assert_ne!(
            PreparedId::new_ordered(1_800_000_000),
            PreparedId::new_ordered(1_800_000_000)
        );
        assert_eq!(earlier.to_string().parse::<PreparedId>(), Ok(earlier));
        let (seconds, _) = earlier.0.get_timestamp().unwrap().to_unix();
        assert_eq!(seconds, 1_800_000_000);
    }

    #[test]
    fn uuids_are_hyphenated_only() {
        let id: NarrativeId = "8F14E45F-CEEA-467F-A0E6-5B1F9B7A0C3D".parse().unwrap();
        assert_eq!(id.to_string(), "8f14e45f-ceea-467f-a0e6-5b1f9b7a0c3d");
        for refused in [
            "8f14e45fceea467fa0e65b1f9b7a0c3d",
            "{8f14e45f-ceea-467f-a0e6-5b1f9b7a0c3d}",
            "urn:uuid:8f14e45f-ceea-467f-a0e6-5b1f9b7a0c3d",
            "8f14e45f-ceea-467f-a0e6-5b1f9b7a0c3",
            "8f14e45f-ceea-467f-a0e6-5b1f9b7a0c3g",
            "",
        ] {
            assert!(refused.parse::<NarrativeId>().is_err(), "{refused}");
        }
    }

    #[test]
    fn a_market_is_named_by_uuid_or_hex() {
        let by_uuid: MarketRef = "8f14e45f-ceea-467f-a0e6-5b1f9b7a0c3d".parse().unwrap();
        let id: NarrativeId = "8f14e45f-ceea-467f-a0e6-5b1f9b7a0c3d".parse().unwrap();
        assert_eq!(by_uuid.market_id(), id.market_id());
        let by_hex: MarketRef = by_uuid.hex().to_uppercase().parse().unwrap();
        assert_eq!(by_hex, by_uuid);
        assert!("ab".repeat(31).parse::<MarketRef>().is_err());
    }

    #[test]
    fn agent_ids_are_ag_and_32_lower_case_hex() {
        let id: AgentId = format!("ag_{}", "0a".repeat(16)).parse().unwrap();
        assert_eq!(id.as_str(), format!("ag_{}", "0a".repeat(16)));
        for refused in [
            format!("ag_{}", "0A".repeat(16)),
            format!("ag_{}", "0a".repeat(15)),
            format!("xx_{}", "0a".repeat(16)),
            "0a".repeat(16),
            String::new(),
        ] {
            assert!(refused.parse::<AgentId>().is_err(), "{refused}");
        }
    }

    #[test]
    fn protocol_ids_are_64_hex_characters_written_lower_case() {
        let id: ProtocolId = "AB".repeat(32).parse().unwrap();
        assert_eq!(id.to_string(), "ab".repeat(32));
        assert!("ab".repeat(33).parse::<ProtocolId>().is_err());
        assert!("zz".repeat(32).parse::<ProtocolId>().is_err());
    }
}
