//! A wallet of any chain verification knows (spec 4.8): a Solana wallet (base58, 32 bytes) or
//! an EVM account (`0x` and 40 hex digits, 20 bytes). The chain is read off the address.

use std::fmt;
use std::str::FromStr;

use super::{format_schema, string_value, Wallet};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ChainAddress {
    Solana(Wallet),
    /// Lower-case `0x…`: EVM addresses compare without their checksum's case.
    Evm(String),
}

impl ChainAddress {
    /// `solana` or `evm`.
    pub fn chain(&self) -> &'static str {
        match self {
            ChainAddress::Solana(_) => "solana",
            ChainAddress::Evm(_) => "evm",
        }
    }
}

impl FromStr for ChainAddress {
    type Err = &'static str;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if let Some(hex) = text.strip_prefix("0x") {
            return if hex.len() == 40 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                Ok(ChainAddress::Evm(text.to_ascii_lowercase()))
            } else {
                Err("an EVM address is 0x and 40 hex digits")
            };
        }
        text.parse().map(ChainAddress::Solana).map_err(|_| {
            "must be a Solana wallet (base58, 32 bytes) or an EVM address (0x and 40 hex digits)"
        })
    }
}

impl fmt::Display for ChainAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChainAddress::Solana(wallet) => wallet.fmt(f),
            ChainAddress::Evm(address) => f.write_str(address),
        }
    }
}

string_value!(ChainAddress, "chain_address", {
    let mut schema = format_schema(
        "A wallet: a Solana public key (base58 of exactly 32 bytes) or an EVM address (`0x` \
         and 40 hex digits) (format `chain-address`).",
        "chain-address",
    );
    schema.example = Some(serde_json::json!(
        "So11111111111111111111111111111111111111112"
    ));
    schema
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_is_read_off_the_address() {
        let solana: ChainAddress = "So11111111111111111111111111111111111111112"
            .parse()
            .unwrap();
        assert_eq!(solana.chain(), "solana");
        let evm: ChainAddress = "0xAbCdEf0123456789abcdef0123456789ABCDEF01"
            .parse()
            .unwrap();
        assert_eq!(evm.chain(), "evm");
        assert_eq!(
            evm.to_string(),
            "0xabcdef0123456789abcdef0123456789abcdef01"
        );
        for refused in [
            "",
            "0x",
            "0xAbCdEf0123456789abcdef0123456789ABCDEF0",
            "0xAbCdEf0123456789abcdef0123456789ABCDEF012",
            "0xg000000000000000000000000000000000000000",
            "cosmos1qypqxpq9qcrsszg2pvxq6rs0zqg3yyc5lzv7xu",
            "11111111111111111111111111111111111",
        ] {
            assert!(refused.parse::<ChainAddress>().is_err(), "{refused:?}");
        }
    }
}
