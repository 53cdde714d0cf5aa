//! Attestations of the Solana Attestation Service (spec 4.8, `sas`), read from the ledger.
//!
//! SAS keeps each attestation in a PDA of its program at seeds `["attestation", credential,
//! schema, nonce]`, where an issuer attesting a wallet puts the wallet in `nonce`. The account
//! is a one-byte discriminator (2) and then: nonce, credential, schema (32 bytes each), data
//! (u32 little-endian length, bytes), signer (32), expiry (i64 LE unix seconds, 0 never) and
//! token account (32). A wallet's attestations are those under the credential and schema pairs
//! this service trusts (`SAS_TRUSTED_SCHEMAS`), so one read of their PDAs lists them.

use narrative_sdk::Pubkey;

use crate::chain::ledger::{Ledger, LedgerError};

/// The SAS program on mainnet and devnet.
pub const SAS_PROGRAM: Pubkey =
    Pubkey::from_str_const("22zoJMtdu4tQc2PzL74ZUT7FrwgB1Udec8DdW4yw4BdG");

const ATTESTATION_DISCRIMINATOR: u8 = 2;

/// A credential (issuer) and one of its schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustedSchema {
    pub credential: Pubkey,
    pub schema: Pubkey,
}

impl std::str::FromStr for TrustedSchema {
    type Err = String;

    /// `<credential>:<schema>`, both base58.
    fn from_str(text: &str) -> Result<Self, String> {
        let (credential, schema) = text
            .trim()
            .split_once(':')
            .ok_or_else(|| format!("{text:?} is not <credential>:<schema>"))?;
        let key = |k: &str| {
            k.parse::<Pubkey>()
                .map_err(|_| format!("{k:?} is not a public key"))
        };
        Ok(TrustedSchema {
            credential: key(credential)?,
            schema: key(schema)?,
        })
    }
}

/// The attestation PDA of `wallet` under `trusted`.
pub fn attestation_address(trusted: &TrustedSchema, wallet: &Pubkey) -> Pubkey {
    narrative_sdk::derive::find_program_address(
        &[
            b"attestation",
            trusted.credential.as_ref(),
            trusted.schema.as_ref(),
            wallet.as_ref(),
        ],
        &SAS_PROGRAM,
    )
    .0
}

/// An attestation as its account holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attestation {
    pub address: Pubkey,
    pub nonce: Pubkey,
    pub credential: Pubkey,
    pub schema: Pubkey,
    pub data: Vec<u8>,
    pub signer: Pubkey,
    /// Unix seconds; 0 never expires.
    pub expiry: i64,
    pub token_account: Pubkey,
}

impl Attestation {
    /// Reads an attestation account's data; `None` when it is not one.
    pub fn parse(address: Pubkey, data: &[u8]) -> Option<Attestation> {
        let (&discriminator, rest) = data.split_first()?;
        if discriminator != ATTESTATION_DISCRIMINATOR {
            return None;
        }
        let mut cursor = Cursor(rest);
        let nonce = cursor.key()?;
        let credential = cursor.key()?;
        let schema = cursor.key()?;
        let length = u32::from_le_bytes(cursor.take(4)?.try_into().ok()?) as usize;
        let attested = cursor.take(length)?.to_vec();
        Some(Attestation {
            address,
            nonce,
            credential,
            schema,
            data: attested,
            signer: cursor.key()?,
            expiry: i64::from_le_bytes(cursor.take(8)?.try_into().ok()?),
            token_account: cursor.key()?,
        })
    }

    /// The account's bytes, as the SAS program writes them.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = vec![ATTESTATION_DISCRIMINATOR];
        for key in [&self.nonce, &self.credential, &self.schema] {
            bytes.extend_from_slice(key.as_ref());
        }
        bytes.extend_from_slice(&(self.data.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&self.data);
        bytes.extend_from_slice(self.signer.as_ref());
        bytes.extend_from_slice(&self.expiry.to_le_bytes());
        bytes.extend_from_slice(self.token_account.as_ref());
        bytes
    }

    pub fn is_live(&self, now: i64) -> bool {
        self.expiry == 0 || self.expiry > now
    }
}

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(taken)
    }

    fn key(&mut self) -> Option<Pubkey> {
        Some(Pubkey::new_from_array(self.take(32)?.try_into().ok()?))
    }
}

/// The wallet's attestations under the trusted schemas: accounts the SAS program owns, that
/// parse, and whose nonce, credential and schema are the ones their address was derived from.
pub async fn attestations_of(
    ledger: &dyn Ledger,
    wallet: &Pubkey,
    trusted: &[TrustedSchema],
) -> Result<Vec<Attestation>, LedgerError> {
    if trusted.is_empty() {
        return Ok(Vec::new());
    }
    let addresses: Vec<Pubkey> = trusted
        .iter()
        .map(|t| attestation_address(t, wallet))
        .collect();
    let (_, accounts) = ledger.accounts(&addresses).await?;
    Ok(trusted
        .iter()
        .zip(addresses)
        .zip(accounts)
        .filter_map(|((trusted, address), account)| {
            let account = account.filter(|a| a.owner == SAS_PROGRAM)?;
            Attestation::parse(address, &account.data).filter(|a| {
                a.nonce == *wallet
                    && a.credential == trusted.credential
                    && a.schema == trusted.schema
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attestation_reads_back_what_the_program_writes() {
        let attestation = Attestation {
            address: Pubkey::new_unique(),
            nonce: Pubkey::new_unique(),
            credential: Pubkey::new_unique(),
            schema: Pubkey::new_unique(),
            data: vec![1, 2, 3],
            signer: Pubkey::new_unique(),
            expiry: 1_800_000_000,
            token_account: Pubkey::default(),
        };
        let bytes = attestation.to_bytes();
        assert_eq!(bytes.len(), 1 + 32 * 3 + 4 + 3 + 32 + 8 + 32);
        assert_eq!(
            Attestation::parse(attestation.address, &bytes),
            Some(attestation.clone())
        );
        // Another account kind, and a truncated one, are not attestations.
        let mut schema_account = bytes.clone();
        schema_account[0] = 1;
        assert_eq!(
            Attestation::parse(attestation.address, &schema_account),
            None
        );
        assert_eq!(
            Attestation::parse(attestation.address, &bytes[..bytes.len() - 1]),
            None
        );
        assert!(attestation.is_live(1_799_999_999));
        assert!(!attestation.is_live(1_800_000_000));
    }

    #[test]
    fn trusted_schemas_are_credential_colon_schema() {
        let (c, s) = (Pubkey::new_unique(), Pubkey::new_unique());
        let parsed: TrustedSchema = format!("{c}:{s}").parse().unwrap();
        assert_eq!((parsed.credential, parsed.schema), (c, s));
        assert!(format!("{c}").parse::<TrustedSchema>().is_err());
        assert!(format!("{c}:nope").parse::<TrustedSchema>().is_err());
    }
}
