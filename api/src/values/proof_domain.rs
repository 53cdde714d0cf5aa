//! The deployment's name at the head of every message its wallets sign
//! (`domain::wallet_proof`), parsed once from `WALLET_PROOF_DOMAIN`.

/// What every message starts with unless the deployment names itself (`WALLET_PROOF_DOMAIN`).
pub const DEFAULT_PROOF_DOMAIN: &str = "narrative-market-service";

/// The deployment's name at the head of every message its wallets sign: 1–100 letters, digits,
/// `.`, `-` or `_` (a host name without its port), so that it cannot carry the `:` that
/// separates the message's parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProofDomain(String);

impl ProofDomain {
    pub fn new(name: &str) -> Result<ProofDomain, String> {
        let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_');
        if name.is_empty() || name.len() > 100 || !name.chars().all(allowed) {
            return Err(format!(
                "WALLET_PROOF_DOMAIN must be 1–100 letters, digits, '.', '-' or '_' (a host \
                 name without its port), not {name:?}"
            ));
        }
        Ok(ProofDomain(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for ProofDomain {
    fn default() -> ProofDomain {
        ProofDomain(DEFAULT_PROOF_DOMAIN.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_domain_is_a_host_name_without_separators() {
        for good in ["narrative-market-service", "app.example.org", "devnet_1"] {
            assert_eq!(ProofDomain::new(good).unwrap().as_str(), good);
        }
        let long = "a".repeat(101);
        for bad in [
            "",
            "app.example.org:8443",
            "a b",
            "x\ny",
            "é.example",
            long.as_str(),
        ] {
            assert!(ProofDomain::new(bad).is_err(), "{bad:?}");
        }
    }
}
