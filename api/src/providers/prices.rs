//! The SOL/USD price for USD aggregates: a CoinGecko-compatible `simple/price` endpoint, cached
//! for a minute, or a fixed price set by configuration (development and tests).

use std::time::Duration;

use serde_json::Value;

use super::fetched::Fetched;
use crate::clock::SharedClock;

pub const COINGECKO: &str = "https://api.coingecko.com/api/v3";
/// How long a fetched price is used.
pub const CACHE_SECS: i64 = 60;
/// How long a failed fetch is answered without asking again (CoinGecko's free tier limits
/// calls a minute, and a source that is down is not asked by every request).
pub const RETRY_AFTER_SECS: i64 = 5;

/// A SOL/USD price, where it came from and when it was read (`None`: a configured price,
/// which does not age).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriceQuote {
    pub sol_usd: f64,
    /// `coingecko` or `configured`.
    pub source: &'static str,
    pub read_at: Option<i64>,
}

impl PriceQuote {
    /// Seconds since it was read (0 for a configured price).
    pub fn age_secs(&self, now: i64) -> i64 {
        self.read_at.map_or(0, |at| (now - at).max(0))
    }
}

#[async_trait::async_trait]
pub trait PriceFeed: Send + Sync {
    async fn quote(&self) -> anyhow::Result<PriceQuote>;

    async fn sol_usd(&self) -> anyhow::Result<f64> {
        Ok(self.quote().await?.sol_usd)
    }
}

pub struct FixedPrice(pub f64);

#[async_trait::async_trait]
impl PriceFeed for FixedPrice {
    async fn quote(&self) -> anyhow::Result<PriceQuote> {
        Ok(PriceQuote {
            sol_usd: self.0,
            source: "configured",
            read_at: None,
        })
    }
}

pub struct CoinGeckoFeed {
    http: reqwest::Client,
    base: String,
    clock: SharedClock,
    /// The price and when (unix seconds) it was read; one fetch at a time.
    price: Fetched<f64, String>,
}

impl CoinGeckoFeed {
    pub fn new(base: &str, clock: SharedClock) -> anyhow::Result<Self> {
        Ok(CoinGeckoFeed {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()?,
            base: base.trim_end_matches('/').to_owned(),
            clock,
            price: Fetched::new(CACHE_SECS, RETRY_AFTER_SECS),
        })
    }

    /// One read of the price. Errors leave out the URL: an operator may point
    /// `PRICE_FEED_URL` at a keyed proxy or plan whose key is in the address, and the error is
    /// logged when a request is refused for want of a price.
    async fn fetch(&self) -> anyhow::Result<f64> {
        let answer: Value = self
            .http
            .get(format!("{}/simple/price", self.base))
            .query(&[("ids", "solana"), ("vs_currencies", "usd")])
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(reqwest::Error::without_url)?
            .json()
            .await
            .map_err(reqwest::Error::without_url)?;
        answer["solana"]["usd"]
            .as_f64()
            .filter(|p| p.is_finite() && *p > 0.0)
            .ok_or_else(|| anyhow::anyhow!("no SOL/USD price in {answer}"))
    }
}

#[async_trait::async_trait]
impl PriceFeed for CoinGeckoFeed {
    async fn quote(&self) -> anyhow::Result<PriceQuote> {
        let fetch = || async { self.fetch().await.map_err(|e| format!("{e:#}")) };
        let (price, at) = self
            .price
            .get(self.clock.now(), fetch)
            .await
            .map_err(anyhow::Error::msg)?;
        Ok(PriceQuote {
            sol_usd: price,
            source: "coingecko",
            read_at: Some(at),
        })
    }
}
