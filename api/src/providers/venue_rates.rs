//! The liquid-staking venues' public rate APIs, for the APY read where a venue's own state
//! cannot give an APY (a stake pool's yield shows only across epochs): Jito's Kobe API for
//! `stake_a` and Marinade's API for `stake_b`. Each is off unless its base URL is configured
//! (`STAKE_A_RATE_API`, `STAKE_B_RATE_API`); the APY read then uses the configured value.
//! Both answer APYs as fractions (0.07 is 7 %); this returns percent.

use std::time::Duration;

use anyhow::Context;
use serde_json::Value;

#[async_trait::async_trait]
pub trait RateApi: Send + Sync {
    /// The current APY in percent.
    async fn apy_pct(&self) -> anyhow::Result<f64>;
}

fn client() -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .timeout(Duration::from_secs(3))
        .build()?)
}

async fn get_json(http: &reqwest::Client, url: &str) -> anyhow::Result<Value> {
    let answer = http.get(url).send().await?.error_for_status()?;
    answer.json().await.context("reading the rate API's answer")
}

/// A fraction as a plausible APY in percent (0 to 1000 %), else an error.
fn percent(fraction: Option<f64>) -> anyhow::Result<f64> {
    let fraction = fraction.context("the answer carries no APY")?;
    anyhow::ensure!(
        fraction.is_finite() && (0.0..=10.0).contains(&fraction),
        "implausible APY {fraction}"
    );
    Ok(fraction * 100.0)
}

/// Jito's Kobe API: `GET /api/v1/stake_pool_stats` answers daily buckets, `apy: [{data, date}]`,
/// oldest first; the newest bucket is the current APY.
pub struct JitoKobe {
    http: reqwest::Client,
    base: String,
}

impl JitoKobe {
    pub const MAINNET: &'static str = "https://kobe.mainnet.jito.network";

    pub fn new(base: &str) -> anyhow::Result<JitoKobe> {
        Ok(JitoKobe {
            http: client()?,
            base: base.trim_end_matches('/').to_owned(),
        })
    }
}

#[async_trait::async_trait]
impl RateApi for JitoKobe {
    async fn apy_pct(&self) -> anyhow::Result<f64> {
        let answer = get_json(
            &self.http,
            &format!("{}/api/v1/stake_pool_stats", self.base),
        )
        .await?;
        let newest = answer["apy"].as_array().and_then(|buckets| buckets.last());
        percent(newest.and_then(|b| b["data"].as_f64()))
    }
}

/// Marinade's API: `GET /msol/apy/30d` answers `{value, start_time, end_time, …}`, the mSOL
/// price's annualised growth over the last 30 days.
pub struct MarinadeApi {
    http: reqwest::Client,
    base: String,
}

impl MarinadeApi {
    pub const MAINNET: &'static str = "https://api.marinade.finance";

    pub fn new(base: &str) -> anyhow::Result<MarinadeApi> {
        Ok(MarinadeApi {
            http: client()?,
            base: base.trim_end_matches('/').to_owned(),
        })
    }
}

#[async_trait::async_trait]
impl RateApi for MarinadeApi {
    async fn apy_pct(&self) -> anyhow::Result<f64> {
        let answer = get_json(&self.http, &format!("{}/msol/apy/30d", self.base)).await?;
        percent(answer["value"].as_f64())
    }
}
