//! A wallet: a base58 ed25519 public key of exactly 32 bytes (spec 4.0), and a mint's address,
//! which is written the same way.

use std::fmt;
use std::str::FromStr;

use narrative_sdk::Pubkey;

use super::{format_schema, string_value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Wallet(Pubkey);

/// Shown in the document as an example of a wallet.
const EXAMPLE: &str = "So11111111111111111111111111111111111111112";

impl Wallet {
    pub fn pubkey(&self) -> Pubkey {
        self.0
    }
}

impl From<Pubkey> for Wallet {
    fn from(key: Pubkey) -> Self {
        Wallet(key)
    }
}

impl From<Wallet> for Pubkey {
    fn from(wallet: Wallet) -> Self {
        wallet.0
    }
}

/// How many base58 characters 32 bytes take: 32 (all zero bytes, one `1` each) to 44.
const KEY_CHARS: std::ops::RangeInclusive<usize> = 32..=44;

/// A base58 public key of exactly 32 bytes. The length is checked before decoding: base58
/// decoding costs the square of its input, and a megabyte of it held a worker for minutes.
fn parse_key(text: &str) -> Result<Pubkey, &'static str> {
    const REFUSED: &str = "must be a base58 public key of 32 bytes";
    if !KEY_CHARS.contains(&text.len()) {
        return Err(REFUSED);
    }
    let bytes = bs58::decode(text).into_vec().map_err(|_| REFUSED)?;
    let key: [u8; 32] = bytes.try_into().map_err(|_| REFUSED)?;
    Ok(Pubkey::new_from_array(key))
}

impl FromStr for Wallet {
    type Err = &'static str;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_key(text).map(Wallet)
    }
}

impl fmt::Display for Wallet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

// No `pattern`: which base58 strings decode to exactly 32 bytes is not a regular expression
// worth writing (it depends on leading `1`s and on the value), so the format names the rule.
// The alphabet alone as a pattern was tried (2026-12-03): schemathesis then took every 32 to 44
// base58 characters as a valid wallet and failed 53 operations whose 400 was right.
string_value!(Wallet, "wallet", {
    let mut schema = key_schema(
        "A wallet: a base58 ed25519 public key, 32 to 44 base58 characters that decode to \
         exactly 32 bytes (format `solana-pubkey`).",
    );
    schema.example = Some(serde_json::json!(EXAMPLE));
    schema
});

/// A token mint's address (a tier NFT's, spec 4.12): the same base58 rule as a wallet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MintAddress(Pubkey);

impl MintAddress {
    pub fn pubkey(&self) -> Pubkey {
        self.0
    }
}

impl From<Pubkey> for MintAddress {
    fn from(key: Pubkey) -> Self {
        MintAddress(key)
    }
}

impl FromStr for MintAddress {
    type Err = &'static str;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_key(text).map(MintAddress)
    }
}

impl fmt::Display for MintAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

string_value!(
    MintAddress,
    "mint_address",
    key_schema(
        "A token mint's address: a base58 public key, 32 to 44 base58 characters that decode \
         to exactly 32 bytes (format `solana-pubkey`).",
    )
);

/// A public key's schema: its format and the lengths [`parse_key`] takes.
fn key_schema(description: &'static str) -> poem_openapi::registry::MetaSchema {
    poem_openapi::registry::MetaSchema {
        min_length: Some(*KEY_CHARS.start()),
        max_length: Some(*KEY_CHARS.end()),
        ..format_schema(description, "solana-pubkey")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wallet_is_exactly_32_bytes_of_base58() {
        let wallet: Wallet = EXAMPLE.parse().unwrap();
        assert_eq!(wallet.to_string(), EXAMPLE);
        let zeros: Wallet = "11111111111111111111111111111111".parse().unwrap();
        assert_eq!(zeros.pubkey(), Pubkey::default());
        for refused in [
            "",
            "not-a-key",
            " So11111111111111111111111111111111111111112",
            // 33 zero bytes, and 31 of them.
            "111111111111111111111111111111111",
            "1111111111111111111111111111111",
            // Base58 of 2^256: one byte too long.
            "JEKNVnkbo3jma5nREBBJCDoXFVeKkD56V3xKrvRmWxFH",
        ] {
            assert!(refused.parse::<Wallet>().is_err(), "{refused:?}");
        }
    }

    #[test]
    fn the_lengths_taken_are_those_of_32_bytes() {
        let shortest = Pubkey::default().to_string();
        let longest = Pubkey::new_from_array([255; 32]).to_string();
        assert_eq!(
            (shortest.len(), longest.len()),
            (*KEY_CHARS.start(), *KEY_CHARS.end())
        );
        assert!(shortest.parse::<Wallet>().is_ok());
        assert!(longest.parse::<MintAddress>().is_ok());
    }

    /// Base58 decoding costs the square of its input: a megabyte of it, decoded, would hold the
    /// thread for hours in a debug build. Refused by its length, it answers at once; the bound
    /// is there so that a regression fails the test instead of hanging it.
    #[test]
    fn a_megabyte_of_base58_is_refused_without_decoding_it() {
        let (answer, answered) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let huge = "z".repeat(1 << 20);
            let _ = answer.send((
                huge.parse::<Wallet>().is_err(),
                huge.parse::<MintAddress>().is_err(),
            ));
        });
        let refused = answered
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("a megabyte-long wallet refused within 20 s");
        assert_eq!(refused, (true, true));
    }
}
