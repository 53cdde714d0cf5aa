//! `market_id` ⇄ UUID: the 32-byte id is the UUID's 16 bytes followed by 16 zero bytes
//! (ARCHITECTURE §2), so a narrative's market is found from its UUID without a lookup table.

use uuid::Uuid;

use crate::SdkError;

pub fn market_id_from_uuid(uuid: &Uuid) -> [u8; 32] {
    let mut id = [0u8; 32];
    id[..16].copy_from_slice(uuid.as_bytes());
    id
}

pub fn uuid_from_market_id(market_id: &[u8; 32]) -> Result<Uuid, SdkError> {
    if market_id[16..] != [0u8; 16] {
        return Err(SdkError::MarketIdNotUuid);
    }
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&market_id[..16]);
    Ok(Uuid::from_bytes(bytes))
}

/// Parses a UUID string (any case, hyphenated or not) into a market id.
pub fn market_id_from_str(uuid: &str) -> Result<[u8; 32], SdkError> {
    Uuid::parse_str(uuid)
        .map(|u| market_id_from_uuid(&u))
        .map_err(|e| SdkError::InvalidUuid(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_a_v4_uuid() {
        let uuid = Uuid::parse_str("8f14e45f-ceea-467f-a0e6-5b1f9b7a0c3d").unwrap();
        let id = market_id_from_uuid(&uuid);
        assert_eq!(&id[..16], uuid.as_bytes());
        assert_eq!(id[16..], [0u8; 16]);
        assert_eq!(uuid_from_market_id(&id).unwrap(), uuid);
    }

    #[test]
    fn rejects_an_id_with_a_non_zero_tail() {
        let mut id = [7u8; 32];
        id[31] = 1;
        assert_eq!(uuid_from_market_id(&id), Err(SdkError::MarketIdNotUuid));
    }

    #[test]
    fn parses_strings_and_rejects_garbage() {
        let id = market_id_from_str("8F14E45FCEEA467FA0E65B1F9B7A0C3D").unwrap();
        assert_eq!(
            uuid_from_market_id(&id).unwrap().to_string(),
            "8f14e45f-ceea-467f-a0e6-5b1f9b7a0c3d"
        );
        assert!(matches!(
            market_id_from_str("not-a-uuid"),
            Err(SdkError::InvalidUuid(_))
        ));
    }
}
