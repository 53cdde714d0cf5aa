//! Signatures in base58 (64 bytes): a transaction's signature, as the ledger names it, and a
//! wallet's ed25519 signature of a message (what wallets' `signMessage` returns).

use std::fmt;
use std::str::FromStr;

use ed25519_dalek::{Signature, VerifyingKey};

use super::{format_schema, string_value, Wallet};

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Base58Signature([u8; 64]);

impl Base58Signature {
    /// The ledger's name for a transaction with this signature.
    pub fn transaction(&self) -> solana_signature::Signature {
        solana_signature::Signature::from(self.0)
    }

    /// Whether this is `wallet`'s strict ed25519 signature of `message`.
    pub fn signs(&self, wallet: &Wallet, message: &[u8]) -> bool {
        let Ok(key) = VerifyingKey::from_bytes(&wallet.pubkey().to_bytes()) else {
            return false;
        };
        key.verify_strict(message, &Signature::from_bytes(&self.0))
            .is_ok()
    }
}

impl From<solana_signature::Signature> for Base58Signature {
    fn from(signature: solana_signature::Signature) -> Self {
        Base58Signature(signature.into())
    }
}

impl FromStr for Base58Signature {
    type Err = &'static str;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        const REFUSED: &str = "must be a base58 signature of 64 bytes";
        // Before decoding, whose cost is the square of the input (as a wallet's, `parse_key`).
        if !SIGNATURE_CHARS.contains(&text.len()) {
            return Err(REFUSED);
        }
        let bytes = bs58::decode(text).into_vec().map_err(|_| REFUSED)?;
        Ok(Base58Signature(bytes.try_into().map_err(|_| REFUSED)?))
    }
}

impl fmt::Display for Base58Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&bs58::encode(self.0).into_string())
    }
}

impl fmt::Debug for Base58Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Base58Signature({self})")
    }
}

/// How many base58 characters 64 bytes take: 64 (all zero bytes) to 88.
const SIGNATURE_CHARS: std::ops::RangeInclusive<usize> = 64..=88;

string_value!(
    Base58Signature,
    "signature",
    poem_openapi::registry::MetaSchema {
        min_length: Some(*SIGNATURE_CHARS.start()),
        max_length: Some(*SIGNATURE_CHARS.end()),
        ..format_schema(
            "A signature: 64 to 88 base58 characters that decode to exactly 64 bytes (format \
             `solana-signature`).",
            "solana-signature",
        )
    }
);

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::{Signer, SigningKey};

    #[test]
    fn a_wallet_signature_verifies_only_its_message_and_key() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let wallet = Wallet::from(narrative_sdk::Pubkey::new_from_array(
            key.verifying_key().to_bytes(),
        ));
        let text = bs58::encode(key.sign(b"hello").to_bytes()).into_string();
        let signature: Base58Signature = text.parse().unwrap();
        assert_eq!(signature.to_string(), text);
        assert!(signature.signs(&wallet, b"hello"));
        assert!(!signature.signs(&wallet, b"hello!"));
        let other = Wallet::from(narrative_sdk::Pubkey::new_from_array([9; 32]));
        assert!(!signature.signs(&other, b"hello"));
    }

    #[test]
    fn only_64_bytes_of_base58_parse() {
        assert!("1".repeat(64).parse::<Base58Signature>().is_ok());
        assert!("1".repeat(63).parse::<Base58Signature>().is_err());
        assert!("0".repeat(64).parse::<Base58Signature>().is_err());
        assert!("".parse::<Base58Signature>().is_err());
        let longest = bs58::encode([255; 64]).into_string();
        assert_eq!(longest.len(), *SIGNATURE_CHARS.end());
        assert!(longest.parse::<Base58Signature>().is_ok());
    }

    /// As a wallet's (`values::wallet`): refused by its length, not after hours of decoding.
    #[test]
    fn a_megabyte_of_base58_is_refused_without_decoding_it() {
        let (answer, answered) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = answer.send("z".repeat(1 << 20).parse::<Base58Signature>().is_err());
        });
        let refused = answered
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("a megabyte-long signature refused within 20 s");
        assert!(refused);
    }
}
