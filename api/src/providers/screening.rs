//! Wallet screening (spec 4.9): Chainalysis's sanctions screening API in production, or a
//! local list of flagged wallets for development and tests, chosen by configuration
//! (`CHAINALYSIS_API_KEY`).
//!
//! Chainalysis's protocol as spoken here: `GET /api/v1/address/<address>` with `X-API-Key`
//! answers `{"identifications": [{"category", "name", "description", "url"}]}`; an address
//! with any identification is flagged.

use std::collections::BTreeSet;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

/// Chainalysis's public sanctions API.
pub const CHAINALYSIS_API: &str = "https://public.chainalysis.com";

/// What screening said of a wallet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screened {
    pub flagged: bool,
    /// Why, when flagged.
    pub reason: Option<String>,
}

#[async_trait::async_trait]
pub trait WalletScreening: Send + Sync {
    /// `chainalysis` or `local`, as recorded with each screening.
    fn name(&self) -> &'static str;

    /// Screens `wallet`; `Err` when the provider could not be asked.
    async fn screen(&self, wallet: &str) -> anyhow::Result<Screened>;
}

/// Chainalysis over HTTPS.
pub struct ChainalysisScreening {
    http: reqwest::Client,
    api: String,
    key: SecretString,
}

impl ChainalysisScreening {
    pub fn new(key: SecretString, api: Option<String>) -> anyhow::Result<ChainalysisScreening> {
        Ok(ChainalysisScreening {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()?,
            api: api.unwrap_or_else(|| CHAINALYSIS_API.to_owned()),
            key,
        })
    }
}

#[derive(Deserialize)]
struct Identifications {
    identifications: Vec<Identification>,
}

#[derive(Deserialize)]
struct Identification {
    #[serde(default)]
    category: String,
    #[serde(default)]
    name: String,
}

#[async_trait::async_trait]
impl WalletScreening for ChainalysisScreening {
    fn name(&self) -> &'static str {
        "chainalysis"
    }

    async fn screen(&self, wallet: &str) -> anyhow::Result<Screened> {
        let answer = self
            .http
            .get(format!(
                "{}/api/v1/address/{wallet}",
                self.api.trim_end_matches('/')
            ))
            .header("X-API-Key", self.key.expose_secret())
            .header("Accept", "application/json")
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("Chainalysis did not answer: {}", e.without_url()))?;
        let status = answer.status();
        anyhow::ensure!(status.is_success(), "Chainalysis answered {status}");
        let found: Identifications = answer.json().await?;
        Ok(Screened {
            flagged: !found.identifications.is_empty(),
            reason: found.identifications.first().map(|i| {
                format!("{}: {}", i.category, i.name)
                    .trim_matches(|c| c == ':' || c == ' ')
                    .to_owned()
            }),
        })
    }
}

/// Development and tests: the wallets listed in `SCREENING_BLOCKLIST` are flagged.
pub struct LocalScreening {
    pub flagged: BTreeSet<String>,
}

#[async_trait::async_trait]
impl WalletScreening for LocalScreening {
    fn name(&self) -> &'static str {
        "local"
    }

    async fn screen(&self, wallet: &str) -> anyhow::Result<Screened> {
        let flagged = self.flagged.contains(wallet);
        Ok(Screened {
            flagged,
            reason: flagged.then(|| "listed in SCREENING_BLOCKLIST".to_owned()),
        })
    }
}
