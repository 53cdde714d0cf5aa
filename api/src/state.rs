//! What every handler shares: the store, the settings, the metrics.

use std::sync::Arc;

use narrative_store::Store;
use sha2::{Digest, Sha256};

use crate::config::Config;
use crate::limits::{Limiter, MemoryLimiter, Policy, RedisLimiter};
use crate::metrics::HttpMetrics;

pub struct AppState {
    pub store: Store,
    pub admin: Option<AdminCredentials>,
    pub binary_markets_enabled: bool,
    pub shield_terms_version: String,
    pub cors_origins: Vec<String>,
    pub metrics: HttpMetrics,
    pub limiter: Limiter,
    /// Anonymous callers' limit, per IP.
    pub anon_policy: Policy,
}

/// The operator pair of spec 5; the secret only as its digest.
pub struct AdminCredentials {
    pub wallet: String,
    pub secret_sha256: [u8; 32],
}

impl AppState {
    /// The state with the limiter the configuration asks for (Redis when `REDIS_URL` is set).
    pub async fn from_config(store: Store, config: &Config) -> anyhow::Result<Arc<AppState>> {
        let limiter = match &config.redis_url {
            Some(url) => Limiter::Redis(
                RedisLimiter::connect(url, &config.rate_limit_namespace)
                    .await
                    .map_err(|e| anyhow::anyhow!("connecting to Redis: {e}"))?,
            ),
            None => Limiter::Memory(MemoryLimiter::default()),
        };
        Ok(Self::new(store, config, limiter))
    }

    pub fn new(store: Store, config: &Config, limiter: Limiter) -> Arc<AppState> {
        let admin = match (&config.admin_wallet, &config.admin_secret) {
            (Some(wallet), Some(secret)) if !wallet.is_empty() && !secret.is_empty() => {
                Some(AdminCredentials {
                    wallet: wallet.clone(),
                    secret_sha256: Sha256::digest(secret.as_bytes()).into(),
                })
            }
            _ => None,
        };
        Arc::new(AppState {
            store,
            admin,
            binary_markets_enabled: config.binary_markets_enabled,
            shield_terms_version: config.shield_terms_version.clone(),
            cors_origins: config.cors_origins.clone(),
            metrics: HttpMetrics::new(),
            limiter,
            anon_policy: Policy {
                name: "anonymous",
                limit: config.anon_rate_per_min,
                window_secs: 60,
            },
        })
    }
}
