//! The keys of a browser's push subscription (spec 4.11, RFC 8291): the user agent's P-256
//! public key (`p256dh`) and its authentication secret (`auth`), both base64url as
//! `PushSubscription.toJSON()` writes them (padding accepted).

use std::fmt;
use std::str::FromStr;

use base64::alphabet::URL_SAFE;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;

use super::{format_schema, string_schema, string_value};

/// base64url as browsers and libraries write it: padded or not, and with any bits past the
/// last byte (which the schema's pattern cannot rule out) ignored.
const LENIENT_BASE64URL: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

fn decode_base64url(text: &str) -> Option<Vec<u8>> {
    LENIENT_BASE64URL.decode(text).ok()
}

/// A user agent's P-256 public key: an uncompressed point (65 bytes) on the curve.
#[derive(Clone, PartialEq, Eq)]
pub struct PushPublicKey(p256::PublicKey);

impl PushPublicKey {
    pub fn key(&self) -> &p256::PublicKey {
        &self.0
    }

    /// The 65 bytes of the uncompressed point.
    pub fn to_bytes(&self) -> Vec<u8> {
        use p256::elliptic_curve::sec1::ToEncodedPoint;
        self.0.to_encoded_point(false).as_bytes().to_vec()
    }
}

impl FromStr for PushPublicKey {
    type Err = &'static str;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        const REFUSED: &str =
            "must be the base64url of an uncompressed P-256 public key (65 bytes, a point on the curve)";
        let bytes = decode_base64url(text).ok_or(REFUSED)?;
        if bytes.len() != 65 || bytes[0] != 0x04 {
            return Err(REFUSED);
        }
        p256::PublicKey::from_sec1_bytes(&bytes)
            .map(PushPublicKey)
            .map_err(|_| REFUSED)
    }
}

impl fmt::Display for PushPublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&URL_SAFE_NO_PAD.encode(self.to_bytes()))
    }
}

impl fmt::Debug for PushPublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PushPublicKey({self})")
    }
}

string_value!(
    PushPublicKey,
    "p256_public_key",
    format_schema(
        "A user agent's P-256 public key: base64url (padding optional) of the 65-byte \
         uncompressed point, which must lie on the curve (format `p256-public-key`).",
        "p256-public-key",
    )
);

/// A subscription's authentication secret: 16 bytes. A secret: never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct PushAuth([u8; 16]);

impl PushAuth {
    pub fn bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

impl FromStr for PushAuth {
    type Err = &'static str;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        const REFUSED: &str = "must be the base64url of a 16-byte authentication secret";
        let bytes = decode_base64url(text).ok_or(REFUSED)?;
        Ok(PushAuth(bytes.try_into().map_err(|_| REFUSED)?))
    }
}

impl fmt::Display for PushAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&URL_SAFE_NO_PAD.encode(self.0))
    }
}

impl fmt::Debug for PushAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PushAuth(<redacted>)")
    }
}

string_value!(
    PushAuth,
    "push_auth_secret",
    string_schema(
        "A push subscription's authentication secret: base64url of 16 bytes (22 characters, \
         or 24 with padding).",
        "^[A-Za-z0-9_-]{22}(==)?$",
        None,
    )
);

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 8291, Appendix A: the user agent's public key and authentication secret.
    const UA_PUBLIC: &str =
        "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
    const AUTH: &str = "BTBZMqHH6r4Tts7J_aSIgg";

    #[test]
    fn the_rfc_example_keys_parse_and_print_back() {
        let key: PushPublicKey = UA_PUBLIC.parse().unwrap();
        assert_eq!(key.to_string(), UA_PUBLIC);
        assert_eq!(key.to_bytes().len(), 65);
        let padded: PushPublicKey = format!("{UA_PUBLIC}=").parse().unwrap();
        assert_eq!(padded, key);
        let auth: PushAuth = AUTH.parse().unwrap();
        assert_eq!(auth.to_string(), AUTH);
        assert_eq!(format!("{auth:?}"), "PushAuth(<redacted>)");
        assert_eq!(format!("{AUTH}==").parse::<PushAuth>().unwrap(), auth);
    }

    #[test]
    fn keys_off_the_curve_or_of_the_wrong_size_are_refused() {
        let mut bytes = URL_SAFE_NO_PAD.decode(UA_PUBLIC).unwrap();
        *bytes.last_mut().unwrap() ^= 1; // no longer on the curve
        assert!(URL_SAFE_NO_PAD
            .encode(&bytes)
            .parse::<PushPublicKey>()
            .is_err());
        // The compressed form of a valid key is not what browsers send.
        let compressed = {
            use p256::elliptic_curve::sec1::ToEncodedPoint;
            let key: PushPublicKey = UA_PUBLIC.parse().unwrap();
            URL_SAFE_NO_PAD.encode(key.key().to_encoded_point(true).as_bytes())
        };
        assert!(compressed.parse::<PushPublicKey>().is_err());
        for bad in ["", "not base64!", &"A".repeat(86), &"A".repeat(21), "A+B/"] {
            assert!(bad.parse::<PushPublicKey>().is_err(), "{bad}");
            assert!(bad.parse::<PushAuth>().is_err(), "{bad}");
        }
        assert!("A".repeat(23).parse::<PushAuth>().is_err());
        // Any 22 characters the schema's pattern allows are 16 bytes.
        let loose: PushAuth = "AAAAAAAAAAAAAAAAAAAAAB".parse().unwrap();
        assert_eq!(loose.bytes(), &[0; 16]);
    }
}
