//! The scored passport (spec 4.8, `passport`): Human Passport (formerly Gitcoin Passport) scores
//! an address by the stamps its owner collected. Chosen by configuration (`PASSPORT_API_KEY`):
//!
//! - Human Passport's Stamps API v2: `GET /v2/stamps/<scorer_id>/score/<address>` with
//!   `X-API-KEY`, answering `{address, score, passing_score, threshold, error, …}` where `score`
//!   is a decimal string. The service applies the specification's thresholds (10 verified,
//!   20 passing) to the score, not the scorer's own `passing_score`.
//! - Development and tests: fixed scores per address from `PASSPORT_LOCAL_SCORES`
//!   (`<address>=<score>,…`); an unlisted address scores 0.

use std::collections::BTreeMap;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde_json::Value;

use crate::values::ChainAddress;

/// Human Passport's API.
pub const HUMAN_PASSPORT_API: &str = "https://api.passport.xyz";

#[async_trait::async_trait]
pub trait PassportScorer: Send + Sync {
    /// Where a user raises their score.
    fn app_url(&self) -> &str;

    /// The address's score; `Err` when the provider could not be asked.
    async fn score(&self, address: &str) -> anyhow::Result<f64>;
}

pub struct HumanPassport {
    http: reqwest::Client,
    api: String,
    app: String,
    scorer_id: String,
    key: SecretString,
}

impl HumanPassport {
    pub fn new(
        key: SecretString,
        scorer_id: String,
        api: Option<String>,
        app: String,
    ) -> anyhow::Result<HumanPassport> {
        Ok(HumanPassport {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()?,
            api: api.unwrap_or_else(|| HUMAN_PASSPORT_API.to_owned()),
            app,
            scorer_id,
            key,
        })
    }
}

#[derive(Deserialize)]
struct ScoreAnswer {
    /// A decimal string (`"22.950"`); a number is read too.
    score: Option<Value>,
    error: Option<String>,
}

/// The score of an answer: its `score` as a finite, non-negative number.
fn read_score(answer: ScoreAnswer) -> anyhow::Result<f64> {
    let score = match answer.score {
        Some(Value::String(text)) => text.trim().parse::<f64>()?,
        Some(Value::Number(number)) => number
            .as_f64()
            .ok_or_else(|| anyhow::anyhow!("an unreadable score"))?,
        _ => anyhow::bail!(
            "no score in the answer ({})",
            answer.error.as_deref().unwrap_or("no error given")
        ),
    };
    anyhow::ensure!(score.is_finite() && score >= 0.0, "a score of {score}");
    Ok(score)
}

#[async_trait::async_trait]
impl PassportScorer for HumanPassport {
    fn app_url(&self) -> &str {
        &self.app
    }

    async fn score(&self, address: &str) -> anyhow::Result<f64> {
        let answer = self
            .http
            .get(format!(
                "{}/v2/stamps/{}/score/{address}",
                self.api.trim_end_matches('/'),
                self.scorer_id
            ))
            .header("X-API-KEY", self.key.expose_secret())
            .header("Accept", "application/json")
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("Human Passport did not answer: {}", e.without_url()))?;
        let status = answer.status();
        anyhow::ensure!(status.is_success(), "Human Passport answered {status}");
        read_score(answer.json().await?)
    }
}

/// Development and tests: fixed scores.
pub struct LocalPassport {
    pub scores: BTreeMap<String, f64>,
    pub app: String,
}

impl LocalPassport {
    /// Reads `<address>=<score>` entries; each address is checked and written as the service
    /// writes it (an EVM address in lower case).
    pub fn from_entries(entries: &[String], app: String) -> anyhow::Result<LocalPassport> {
        let mut scores = BTreeMap::new();
        for entry in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
            let (address, score) = entry.split_once('=').ok_or_else(|| {
                anyhow::anyhow!("PASSPORT_LOCAL_SCORES: {entry:?} is not address=score")
            })?;
            let address = address
                .trim()
                .parse::<ChainAddress>()
                .map_err(|e| anyhow::anyhow!("PASSPORT_LOCAL_SCORES: {address:?} {e}"))?
                .to_string();
            let score: f64 = score
                .parse()
                .map_err(|_| anyhow::anyhow!("PASSPORT_LOCAL_SCORES: {score:?} is not a number"))?;
            anyhow::ensure!(
                score.is_finite() && score >= 0.0,
                "PASSPORT_LOCAL_SCORES: a score of {score}"
            );
            scores.insert(address, score);
        }
        Ok(LocalPassport { scores, app })
    }
}

#[async_trait::async_trait]
impl PassportScorer for LocalPassport {
    fn app_url(&self) -> &str {
        &self.app
    }

    async fn score(&self, address: &str) -> anyhow::Result<f64> {
        Ok(self.scores.get(address).copied().unwrap_or(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(score: Option<Value>) -> ScoreAnswer {
        ScoreAnswer { score, error: None }
    }

    #[test]
    fn scores_are_read_as_decimal_strings_or_numbers() {
        assert_eq!(
            read_score(answer(Some(Value::from("22.950")))).unwrap(),
            22.95
        );
        assert_eq!(read_score(answer(Some(Value::from(7)))).unwrap(), 7.0);
        assert!(read_score(answer(Some(Value::from("-1")))).is_err());
        assert!(read_score(answer(Some(Value::from("NaN")))).is_err());
        assert!(read_score(answer(None)).is_err());
    }

    #[test]
    fn local_scores_parse_and_default_to_zero() {
        let local = LocalPassport::from_entries(
            &[
                "0xAB00000000000000000000000000000000000000=21.5".into(),
                " ".into(),
            ],
            String::new(),
        )
        .unwrap();
        assert_eq!(
            local
                .scores
                .get("0xab00000000000000000000000000000000000000"),
            Some(&21.5)
        );
        assert!(LocalPassport::from_entries(&["a=b".into()], String::new()).is_err());
        // A good address with a score that is no number.
        assert!(LocalPassport::from_entries(
            &["0xAB00000000000000000000000000000000000000=abc".into()],
            String::new()
        )
        .is_err());
        assert!(LocalPassport::from_entries(&["nothing".into()], String::new()).is_err());
    }
}
