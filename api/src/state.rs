//! What every handler, middleware and domain workflow shares: the store, the chain runner, the
//! providers, the clock, and the settings read once from the configuration.

use std::collections::BTreeMap;
use std::sync::Arc;

use narrative_sdk::Pubkey;
use narrative_store::entities::shield_coverages;
use narrative_store::freshness::Topic;
use narrative_store::Store;
use sha2::{Digest, Sha256};
use solana_keypair::Keypair;
use tokio::sync::Notify;

mod defi;

use crate::chain::attestations::TrustedSchema;
use crate::chain::blocks::WalletBlocks;
use crate::chain::ledger::{Ledger, RpcLedger};
use crate::chain::prepared_writer::PreparedWriter;
use crate::chain::{Chain, ConfirmWait};
use crate::clock::{SharedClock, SystemClock};
use crate::config::{Config, ExposeSecret, SecretString, MIN_SECRET_CHARS};
use crate::error::ApiError;
use crate::freshness::{Caches, Freshness, Memo};
use crate::limits::client::TrustedProxies;
use crate::limits::{per_ip_daily, KeyMemory, Limiter, MemoryLimiter, Policy, RedisLimiter};
use crate::providers::chat::ChatModel;
use crate::providers::drafter::{ChatGenerator, Generator, LocalGenerator};
use crate::providers::human::{HumanVerifier, LocalVerifier, TurnstileVerifier};
use crate::providers::identity_pass::{IdentityPass, IntrospectedPass, LocalPass};
use crate::providers::kyc::{KycProvider, LocalKyc, PersonaClient};
use crate::providers::outbound::{
    BreakerPolicy, Outbound, OutboundPolicy, Resolve, SystemResolver,
};
use crate::providers::passport::{HumanPassport, LocalPassport, PassportScorer};
use crate::providers::polisher::{ChatPolisher, LocalPolisher, Polisher};
use crate::providers::prices::{CoinGeckoFeed, FixedPrice, PriceFeed};
use crate::providers::reviewer::{ChatReviewer, LocalReviewer, Reviewer};
use crate::providers::screening::{ChainalysisScreening, LocalScreening, WalletScreening};
use crate::providers::web_push::{DeliveryCounts, PushServices, Vapid};
use crate::values::{Component, NftTier, Wallet, LAMPORTS_PER_SOL};

pub struct AppState {
    pub store: Store,
    pub clock: SharedClock,
    /// The ledger and the prepare → confirm runner.
    pub chain: Chain,
    pub human: Arc<dyn HumanVerifier>,
    pub polisher: Arc<dyn Polisher>,
    pub reviewer: Arc<dyn Reviewer>,
    pub generator: Arc<dyn Generator>,
    pub prices: Arc<dyn PriceFeed>,
    /// Requests to URLs clients supplied.
    pub outbound: Arc<Outbound>,
    /// Push deliveries and webhooks sent at once (their own workers, apart from the money jobs).
    pub outbound_workers: usize,
    /// AI drafts asked of the provider at once (their own workers, apart from the money jobs).
    pub draft_workers: usize,
    /// The hosts push endpoints may be at (`PUSH_SERVICE_HOSTS`).
    pub push_services: PushServices,
    pub narratives: NarrativePolicy,
    pub treasury: Option<Pubkey>,
    pub binary_market_fee_lamports: u64,
    /// SHA-256 of the inbound webhook secret (spec 4.12); webhooks answer 401 while unset.
    pub webhook_secret_sha256: Option<[u8; 32]>,
    /// The service's oracle signer, when configured.
    pub oracle: Option<Arc<Keypair>>,
    /// crucible_pool's keeper (closes Echo Pool epochs), when configured.
    pub keeper: Option<Arc<Keypair>>,
    /// The platform terms version wallets accept.
    pub terms_version: String,
    /// The deployment's name at the head of every message its wallets sign
    /// (`WALLET_PROOF_DOMAIN`).
    pub proof_domain: crate::values::ProofDomain,
    /// The oracle bootstrap: an agent whose *proven* wallet is listed counts as granted
    /// (`domain::agents::oracle`).
    pub oracle_agent_wallets: Vec<Wallet>,
    /// Operators may issue Pro and Enterprise keys (`PAID_TIERS_ACTIVE`).
    pub paid_tiers_active: bool,
    /// The in-process indexer's metrics, appended to `/metrics` when it runs.
    pub indexer_metrics: std::sync::OnceLock<narrative_indexer::metrics::Metrics>,
    pub admin: Option<AdminCredentials>,
    pub binary_markets_enabled: bool,
    pub shield_terms_version: String,
    pub cors_origins: Vec<String>,
    pub limiter: Limiter,
    /// Anonymous callers' limit, per IP.
    pub anon_policy: Policy,
    /// Self-registered keys' shared limit, per IP (`AGENT_KEYS_PER_IP_PER_MIN`).
    pub agent_keys_policy: Policy,
    /// Whose forwarding headers name the caller (`TRUSTED_PROXIES`).
    pub trusted_proxies: TrustedProxies,
    /// The API keys the limiter looked up lately (unknown ones are not looked up again).
    pub key_memory: KeyMemory,
    /// Per-IP daily caps of the routes that cost money per call.
    pub cost_caps: CostCaps,
    /// Holder checks answered lately, per wallet.
    pub holder_checks: crate::freshness::Expiring<String, crate::chain::holdings::Holding>,
    /// The DeFi venues wired for the configured cluster.
    pub defi: Arc<crate::chain::venues::Venues>,
    /// The APY read's values and their sources.
    pub defi_apys: crate::chain::venues::board::Apys,
    /// The venues' exchange rates, read lately (`apys::RATE_CACHE_SECS`).
    pub defi_rates: crate::freshness::Expiring<
        (crate::values::VenueId, crate::values::TokenSymbol),
        crate::chain::venues::MarketRead,
    >,
    /// Borrowing is enabled (`BORROW_ENABLED`).
    pub borrow_enabled: bool,
    /// The p0 integration, when enabled (`P0_*`).
    pub p0: Option<Arc<crate::chain::venues::p0::P0>>,
    /// The borrow rates as last polled (`domain::borrow::rates`).
    pub borrow_rates: crate::chain::venues::board::BorrowRates,
    /// Passport scores checked lately, by address (`verify::PASSPORT_CHECK_TTL_SECS`).
    pub passport_checks: crate::freshness::Expiring<String, f64>,
    /// Bytes of answers the response cache may hold (0: no cache).
    pub response_cache_bytes: usize,
    /// The response caches, told of commits other processes make (`Background` listens).
    pub caches: Arc<Caches>,
    /// The generations of the store's topics, read once per burst of requests.
    pub freshness: Arc<Freshness>,
    /// What the prepares read on every request, kept while its topic stands.
    pub memos: Memos,
    /// The Web Push VAPID pair, kept in the store (made when the first process starts).
    pub vapid: Vapid,
    /// The contact in every VAPID token (`VAPID_SUBJECT`).
    pub vapid_subject: String,
    /// What the push services answered (`/metrics`).
    pub push_deliveries: Arc<DeliveryCounts>,
    /// Opens KYC inquiries.
    pub kyc: Arc<dyn KycProvider>,
    /// Screens wallets; a flagged wallet is blocked from protocol writes.
    pub screening: Arc<dyn WalletScreening>,
    /// Signs the KYC provider's webhooks; they answer 401 while unset.
    pub kyc_webhook_secret: Option<SecretString>,
    /// Checks identity pass tokens (`idpass`).
    pub identity_pass: Arc<dyn IdentityPass>,
    /// Scores passports (`passport`).
    pub passport: Arc<dyn PassportScorer>,
    pub verify: VerifySettings,
    pub nft: NftSettings,
    /// The job queue page's Basic credentials; the page answers 401 while unset.
    pub queues_basic: Option<BasicCredentials>,
    /// Refused shield gate attempts (ten minutes) that block an address.
    pub shield_gate_max_failures: u32,
}

/// What tier-NFT minting needs (spec 4.12).
pub struct NftSettings {
    /// Mint and update authority of the collections and their NFTs.
    pub authority: Option<Arc<Keypair>>,
    /// The collection of each deployed tier.
    pub collections: BTreeMap<NftTier, Pubkey>,
    /// `<PUBLIC_BASE_URL>/v1/nft/metadata`, where each tier's metadata document is served.
    pub metadata_base: String,
}

impl NftSettings {
    fn from_config(config: &Config) -> anyhow::Result<NftSettings> {
        let mut collections = BTreeMap::new();
        for entry in config
            .nft_collections
            .iter()
            .filter(|e| !e.trim().is_empty())
        {
            let (tier, mint) = entry.split_once('=').ok_or_else(|| {
                anyhow::anyhow!("NFT_COLLECTIONS: `{entry}` is not <tier>=<mint>")
            })?;
            let tier: NftTier = tier
                .trim()
                .parse()
                .map_err(|e| anyhow::anyhow!("NFT_COLLECTIONS: `{tier}` {e}"))?;
            let mint: Pubkey = mint
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("NFT_COLLECTIONS: `{mint}` is not a public key"))?;
            anyhow::ensure!(
                collections.insert(tier, mint).is_none(),
                "NFT_COLLECTIONS names {tier} twice"
            );
        }
        Ok(NftSettings {
            authority: keypair_setting(
                "NFT_AUTHORITY_KEYPAIR",
                config.nft_authority_keypair.as_ref(),
            )?,
            collections,
            metadata_base: format!(
                "{}/v1/nft/metadata",
                config.public_base_url.trim_end_matches('/')
            ),
        })
    }
}

/// What verification reads besides its providers (spec 4.8).
pub struct VerifySettings {
    /// The SAS credentials and schemas whose attestations count.
    pub trusted_schemas: Vec<TrustedSchema>,
    /// The loyalty token; the holder check answers 503 while unset.
    pub loyalty_mint: Option<Pubkey>,
    /// Base units a holder keeps.
    pub loyalty_min_balance: u64,
    /// `<PUBLIC_BASE_URL>/v1/verify/confirm`, the providers' callback.
    pub callback_url: String,
}

impl VerifySettings {
    fn from_config(config: &Config) -> anyhow::Result<VerifySettings> {
        let trusted_schemas = config
            .sas_trusted_schemas
            .iter()
            .filter(|entry| !entry.trim().is_empty())
            .map(|entry| {
                entry
                    .parse()
                    .map_err(|e| anyhow::anyhow!("SAS_TRUSTED_SCHEMAS: {e}"))
            })
            .collect::<anyhow::Result<_>>()?;
        let loyalty_mint = config
            .loyalty_mint
            .as_deref()
            .map(|mint| {
                mint.trim()
                    .parse()
                    .map_err(|_| anyhow::anyhow!("LOYALTY_MINT is not a public key"))
            })
            .transpose()?;
        Ok(VerifySettings {
            trusted_schemas,
            loyalty_mint,
            loyalty_min_balance: config.loyalty_min_balance,
            callback_url: format!(
                "{}/v1/verify/confirm",
                config.public_base_url.trim_end_matches('/')
            ),
        })
    }
}

/// Values the hot write paths read on every request (a shield prepare checks the halt flag,
/// the wallet's terms and the coverage), kept under their topics' generations
/// ([`crate::freshness::Memo`]): a prepare asks the database only to store what it prepared.
pub struct Memos {
    /// Each component's halt flag.
    pub halts: Memo<&'static str, bool>,
    /// The shield terms version each wallet acknowledged.
    pub shield_terms: Memo<String, Option<String>>,
    /// The open coverage of each protocol id.
    pub coverages: Memo<String, Option<Arc<shield_coverages::Model>>>,
    /// Whether the shield gate blocks each address.
    pub blocked_ips: Memo<std::net::IpAddr, bool>,
    /// The tier each wallet borrows at, by name (its score from its backings, and its tier
    /// NFTs: both `markets`).
    pub borrow_tiers: Memo<String, &'static str>,
}

/// Where the local KYC provider sends users: it hosts nothing (its inquiries are completed by
/// the signed webhook), and the address says so.
const LOCAL_KYC_PAGE: &str = "https://kyc.invalid/local-provider";

/// Wallets whose shield terms are kept; past it the memo starts over (see `Memo::new`).
const MEMO_WALLETS: usize = 100_000;
/// Wallets whose holder check, or passport score, is kept (`verify::HOLDER_CHECK_TTL_SECS`,
/// `verify::PASSPORT_CHECK_TTL_SECS`).
const PROVIDER_CHECKS_KEPT: usize = 10_000;
/// Coverages kept: one per protocol with an open period.
const MEMO_COVERAGES: usize = 10_000;

impl Default for Memos {
    fn default() -> Memos {
        Memos {
            halts: Memo::new(Topic::System, Component::ALL.len()),
            shield_terms: Memo::new(Topic::Terms, MEMO_WALLETS),
            coverages: Memo::new(Topic::Shield, MEMO_COVERAGES),
            blocked_ips: Memo::new(Topic::Terms, MEMO_WALLETS),
            borrow_tiers: Memo::new(Topic::Markets, MEMO_WALLETS),
        }
    }
}

/// Per-IP daily caps of the routes that spend money per call on outside providers or the
/// ledger, beside their per-wallet ones (configurable: `*_PER_IP_DAILY`).
#[derive(Debug, Clone, Copy)]
pub struct CostCaps {
    pub polish: Policy,
    pub screening: Policy,
    pub passport: Policy,
    pub idpass: Policy,
    pub holder: Policy,
}

impl CostCaps {
    fn from_config(config: &Config) -> CostCaps {
        CostCaps {
            polish: per_ip_daily("ai_polish_ip", config.polish_per_ip_daily),
            screening: per_ip_daily("screening_ip", config.screening_per_ip_daily),
            passport: per_ip_daily("passport_ip", config.passport_per_ip_daily),
            idpass: per_ip_daily("idpass_ip", config.idpass_per_ip_daily),
            holder: per_ip_daily("holder_ip", config.holder_per_ip_daily),
        }
    }
}

/// What publishing a narrative costs and needs (spec 4.1 publish).
#[derive(Debug, Clone, Copy)]
pub struct NarrativePolicy {
    pub publish_fee_lamports: u64,
    pub daily_cap: u32,
    pub min_conviction_score: f64,
    pub min_uncertainty: f64,
}

/// The operator pair of spec 5; the secret only as its digest.
pub struct AdminCredentials {
    pub wallet: String,
    pub secret_sha256: [u8; 32],
}

/// HTTP Basic credentials of the job queue's page, the password kept as its digest.
pub struct BasicCredentials {
    pub user: String,
    pub password_sha256: [u8; 32],
}

/// The world outside the process a state talks to; tests swap in local ones.
#[derive(Clone)]
pub struct Providers {
    pub clock: SharedClock,
    pub ledger: Arc<dyn Ledger>,
    pub human: Arc<dyn HumanVerifier>,
    pub polisher: Arc<dyn Polisher>,
    pub reviewer: Arc<dyn Reviewer>,
    pub generator: Arc<dyn Generator>,
    pub prices: Arc<dyn PriceFeed>,
    /// How client-supplied hosts resolve.
    pub resolver: Arc<dyn Resolve>,
    pub kyc: Arc<dyn KycProvider>,
    pub screening: Arc<dyn WalletScreening>,
    pub identity_pass: Arc<dyn IdentityPass>,
    pub passport: Arc<dyn PassportScorer>,
}

impl Providers {
    /// JSON-RPC at `SOLANA_RPC_URL`; Turnstile when its secret is set, else the local verifier;
    /// the chat model when `AI_API_BASE` is set, else the local providers; the system clock.
    pub fn from_config(config: &Config) -> anyhow::Result<Providers> {
        Self::with_clock(config, Arc::new(SystemClock))
    }

    /// [`Providers::from_config`] on `clock` (tests move time with a manual one).
    pub fn with_clock(config: &Config, clock: SharedClock) -> anyhow::Result<Providers> {
        let human: Arc<dyn HumanVerifier> = match &config.turnstile_secret {
            Some(secret) => Arc::new(TurnstileVerifier::new(
                secret.clone(),
                config.turnstile_verify_url.clone(),
            )?),
            None => {
                if config.human_verification_local_token.is_none() {
                    tracing::warn!("no TURNSTILE_SECRET nor HUMAN_VERIFICATION_LOCAL_TOKEN: every cf_token is refused");
                }
                Arc::new(LocalVerifier {
                    accepted: config.human_verification_local_token.clone(),
                })
            }
        };
        let chat = || -> anyhow::Result<Option<ChatModel>> {
            config
                .ai_api_base
                .as_deref()
                .map(|base| {
                    ChatModel::new(base, config.ai_api_key.clone(), config.ai_model.clone())
                })
                .transpose()
        };
        let polisher: Arc<dyn Polisher> = match chat()? {
            Some(model) => Arc::new(ChatPolisher(model)),
            None => Arc::new(LocalPolisher),
        };
        let reviewer: Arc<dyn Reviewer> = match chat()? {
            Some(model) => Arc::new(ChatReviewer(model)),
            None => Arc::new(LocalReviewer),
        };
        let generator: Arc<dyn Generator> = match chat()? {
            Some(model) => Arc::new(ChatGenerator(model)),
            None => Arc::new(LocalGenerator),
        };
        let prices: Arc<dyn PriceFeed> = match config.sol_usd_price {
            Some(price) => Arc::new(FixedPrice(price)),
            None => Arc::new(CoinGeckoFeed::new(&config.price_feed_url, clock.clone())?),
        };
        let kyc: Arc<dyn KycProvider> = match &config.persona_api_key {
            Some(key) => Arc::new(PersonaClient::new(
                key.clone(),
                config.persona_api_url.clone(),
                config.persona_hosted_url.clone(),
                [
                    config.persona_template_tier1.clone().unwrap_or_default(),
                    config.persona_template_tier2.clone().unwrap_or_default(),
                ],
            )?),
            None => Arc::new(LocalKyc {
                hosted: LOCAL_KYC_PAGE.to_owned(),
            }),
        };
        let screening: Arc<dyn WalletScreening> = match &config.chainalysis_api_key {
            Some(key) => Arc::new(ChainalysisScreening::new(
                key.clone(),
                config.chainalysis_api_url.clone(),
            )?),
            None => Arc::new(LocalScreening {
                flagged: config
                    .screening_blocklist
                    .iter()
                    .map(|w| w.trim().to_owned())
                    .filter(|w| !w.is_empty())
                    .collect(),
            }),
        };
        let identity_pass: Arc<dyn IdentityPass> = match &config.idpass_introspection_url {
            Some(endpoint) => Arc::new(IntrospectedPass::new(
                endpoint.clone(),
                config.idpass_flow_url.clone(),
                &config.idpass_client_id,
                &config
                    .idpass_client_secret
                    .clone()
                    .unwrap_or_else(|| SecretString::from(String::new())),
            )?),
            None => Arc::new(LocalPass {
                accepted: config
                    .idpass_local_token
                    .clone()
                    .filter(|t| !t.expose_secret().is_empty()),
                flow: config.idpass_flow_url.clone(),
            }),
        };
        let passport: Arc<dyn PassportScorer> = match &config.passport_api_key {
            Some(key) => Arc::new(HumanPassport::new(
                key.clone(),
                config
                    .passport_scorer_id
                    .clone()
                    .ok_or_else(|| anyhow::anyhow!("PASSPORT_API_KEY needs PASSPORT_SCORER_ID"))?,
                config.passport_api_url.clone(),
                config.passport_app_url.clone(),
            )?),
            None => Arc::new(LocalPassport::from_entries(
                &config.passport_local_scores,
                config.passport_app_url.clone(),
            )?),
        };
        Ok(Providers {
            kyc,
            screening,
            identity_pass,
            passport,
            ledger: Arc::new(RpcLedger::new(
                config.solana_rpc_url.expose_secret(),
                clock.clone(),
            )),
            clock,
            human,
            polisher,
            reviewer,
            generator,
            prices,
            resolver: Arc::new(SystemResolver),
        })
    }
}

impl AppState {
    /// The state with the limiter the configuration asks for (Redis when `REDIS_URL` is set).
    pub async fn from_config(store: Store, config: &Config) -> anyhow::Result<Arc<AppState>> {
        let providers = Providers::from_config(config)?;
        Self::from_config_with(store, config, providers).await
    }

    /// Like [`AppState::from_config`], with the given providers.
    pub async fn from_config_with(
        store: Store,
        config: &Config,
        providers: Providers,
    ) -> anyhow::Result<Arc<AppState>> {
        let limiter = match &config.redis_url {
            Some(url) => Limiter::Redis(
                RedisLimiter::connect(url.expose_secret(), &config.rate_limit_namespace)
                    .await
                    .map_err(|e| anyhow::anyhow!("connecting to Redis: {e}"))?,
            ),
            None => Limiter::Memory(MemoryLimiter::default()),
        };
        Self::new(store, config, limiter, providers)
    }

    pub fn new(
        store: Store,
        config: &Config,
        limiter: Limiter,
        providers: Providers,
    ) -> anyhow::Result<Arc<AppState>> {
        let (defi_venues, apy_sources) = defi::from_config(config)?;
        let p0 = defi::p0_from_config(config, &defi_venues)?.map(Arc::new);
        let borrow_configured = defi::percent_entries(
            "BORROW_CONFIGURED_RATES",
            &config.borrow_configured_rates,
            &crate::chain::venues::board::BORROW_KEYS,
        )?;
        let treasury = config
            .treasury_wallet
            .as_deref()
            .map(|t| t.parse::<Pubkey>())
            .transpose()
            .map_err(|_| anyhow::anyhow!("TREASURY_WALLET is not a base58 public key"))?;
        let publish_fee = sol_setting(
            "NARRATIVE_PUBLISH_FEE_SOL",
            config.narrative_publish_fee_sol,
        )?;
        let market_fee = match config.binary_market_fee_sol {
            Some(fee) => sol_setting("BINARY_MARKET_FEE_SOL", fee)?,
            None => publish_fee,
        };
        anyhow::ensure!(
            (0.0..=100.0).contains(&config.narrative_min_uncertainty),
            "NARRATIVE_MIN_UNCERTAINTY must be within 0–100"
        );
        let oracle = keypair_setting("ORACLE_KEYPAIR", config.oracle_keypair.as_ref())?;
        let keeper = keypair_setting("KEEPER_KEYPAIR", config.keeper_keypair.as_ref())?;
        anyhow::ensure!(
            !config.terms_version.trim().is_empty(),
            "TERMS_VERSION must not be blank"
        );
        guessable_secret("ADMIN_SECRET", config.admin_secret.as_ref())?;
        guessable_secret("WEBHOOK_SECRET", config.webhook_secret.as_ref())?;
        guessable_secret("KYC_WEBHOOK_SECRET", config.kyc_webhook_secret.as_ref())?;
        guessable_secret(
            "ADMIN_QUEUES_PASSWORD",
            config.admin_queues_password.as_ref(),
        )?;
        let admin = match (&config.admin_wallet, &config.admin_secret) {
            (Some(wallet), Some(secret))
                if !wallet.is_empty() && !secret.expose_secret().is_empty() =>
            {
                Some(AdminCredentials {
                    wallet: wallet.clone(),
                    secret_sha256: Sha256::digest(secret.expose_secret().as_bytes()).into(),
                })
            }
            _ => None,
        };
        let oracle_agent_wallets = config
            .oracle_agent_wallets
            .iter()
            .map(|w| w.trim())
            .filter(|w| !w.is_empty())
            .map(|w| {
                w.parse::<Wallet>()
                    .map_err(|_| anyhow::anyhow!("ORACLE_AGENT_WALLETS: {w} is not a wallet"))
            })
            .collect::<anyhow::Result<_>>()?;
        let outbound = Outbound::new(
            OutboundPolicy {
                allow_local: config.outbound_allow_local,
                timeout: std::time::Duration::from_secs(config.outbound_timeout_secs),
                breaker: BreakerPolicy {
                    failures: config.outbound_breaker_failures,
                    cooldown_secs: config.outbound_breaker_cooldown_secs,
                },
                ..OutboundPolicy::production()
            },
            providers.resolver.clone(),
            providers.clock.clone(),
        )?;
        let push_services = PushServices::new(config.push_service_hosts.iter().map(String::as_str))
            .map_err(|e| anyhow::anyhow!("PUSH_SERVICE_HOSTS: {e}"))?;
        let jobs_wake = Arc::new(Notify::new());
        // Its probes run one after another, like the writer's statements: a connection of its
        // own (decisions.md, "The freshness barrier's probe").
        let freshness = Freshness::new(store.dedicated());
        Ok(Arc::new(AppState {
            chain: Chain {
                blocks: WalletBlocks::new(store.clone()),
                freshness: freshness.clone(),
                store: store.clone(),
                ledger: providers.ledger,
                clock: providers.clock.clone(),
                wait: ConfirmWait::for_millis(config.confirm_wait_ms),
                jobs_wake,
                // On a connection of its own: one statement after another on one backend
                // (decisions.md, "Group commit of prepared rows").
                writer: PreparedWriter::start(store.dedicated()),
            },
            store,
            clock: providers.clock,
            human: providers.human,
            polisher: providers.polisher,
            reviewer: providers.reviewer,
            generator: providers.generator,
            prices: providers.prices,
            outbound: Arc::new(outbound),
            outbound_workers: config.outbound_workers.max(1) as usize,
            draft_workers: config.draft_workers.max(1) as usize,
            push_services,
            narratives: NarrativePolicy {
                publish_fee_lamports: publish_fee,
                daily_cap: config.narrative_daily_cap,
                min_conviction_score: config.narrative_min_conviction_score,
                min_uncertainty: config.narrative_min_uncertainty,
            },
            treasury,
            binary_market_fee_lamports: market_fee,
            webhook_secret_sha256: config
                .webhook_secret
                .as_ref()
                .map(ExposeSecret::expose_secret)
                .filter(|s| !s.is_empty())
                .map(|s| Sha256::digest(s.as_bytes()).into()),
            indexer_metrics: std::sync::OnceLock::new(),
            oracle,
            keeper,
            terms_version: config.terms_version.trim().to_owned(),
            proof_domain: crate::values::ProofDomain::new(&config.wallet_proof_domain)
                .map_err(anyhow::Error::msg)?,
            oracle_agent_wallets,
            paid_tiers_active: config.paid_tiers_active,
            admin,
            binary_markets_enabled: config.binary_markets_enabled,
            shield_terms_version: config.shield_terms_version.clone(),
            cors_origins: config.cors_origins.clone(),
            limiter,
            anon_policy: Policy {
                name: "anonymous",
                limit: config.anon_rate_per_min,
                window_secs: 60,
            },
            agent_keys_policy: Policy {
                name: "agent_keys",
                limit: config.agent_keys_per_ip_per_min,
                window_secs: 60,
            },
            trusted_proxies: TrustedProxies::parse(
                &config.trusted_proxies,
                &config.trusted_proxy_header,
            )
            .map_err(anyhow::Error::msg)?,
            key_memory: KeyMemory::default(),
            cost_caps: CostCaps::from_config(config),
            holder_checks: crate::freshness::Expiring::new(PROVIDER_CHECKS_KEPT),
            defi: Arc::new(defi_venues),
            defi_apys: crate::chain::venues::board::Apys::new(apy_sources),
            defi_rates: crate::freshness::Expiring::new(64),
            borrow_enabled: config.borrow_enabled,
            p0,
            borrow_rates: crate::chain::venues::board::BorrowRates::new(borrow_configured),
            passport_checks: crate::freshness::Expiring::new(PROVIDER_CHECKS_KEPT),
            response_cache_bytes: config.response_cache_mb.saturating_mul(1024 * 1024),
            caches: Arc::default(),
            freshness,
            memos: Memos::default(),
            vapid: Vapid::default(),
            vapid_subject: config.vapid_subject.clone(),
            push_deliveries: Arc::default(),
            kyc: providers.kyc,
            screening: providers.screening,
            kyc_webhook_secret: config
                .kyc_webhook_secret
                .clone()
                .filter(|s| !s.expose_secret().is_empty()),
            identity_pass: providers.identity_pass,
            passport: providers.passport,
            verify: VerifySettings::from_config(config)?,
            nft: NftSettings::from_config(config)?,
            shield_gate_max_failures: config.shield_gate_max_failures,
            queues_basic: config
                .admin_queues_password
                .as_ref()
                .filter(|p| !p.expose_secret().is_empty())
                .map(|password| BasicCredentials {
                    user: config.admin_queues_user.clone(),
                    password_sha256: Sha256::digest(password.expose_secret().as_bytes()).into(),
                }),
        }))
    }

    /// The treasury fees go to; 503 `treasury_not_configured` while `TREASURY_WALLET` is unset.
    pub fn treasury(&self, what: &str) -> Result<Pubkey, ApiError> {
        self.treasury.ok_or_else(|| {
            ApiError::coded(
                poem::http::StatusCode::SERVICE_UNAVAILABLE,
                "treasury_not_configured",
                format!("{what} needs TREASURY_WALLET"),
            )
        })
    }

    pub fn now(&self) -> i64 {
        self.clock.now()
    }
}

/// Refuses a secret that is set but shorter than [`MIN_SECRET_CHARS`] (an empty one is unset):
/// the routes it guards would answer anyone who guessed it.
fn guessable_secret(name: &str, secret: Option<&SecretString>) -> anyhow::Result<()> {
    let chars = secret.map_or(0, |s| s.expose_secret().chars().count());
    anyhow::ensure!(
        chars == 0 || chars >= MIN_SECRET_CHARS,
        "{name} is {chars} characters: a secret needs at least {MIN_SECRET_CHARS} (a random string), or leave it unset"
    );
    Ok(())
}

/// A keypair setting (base58 of 64 bytes), when set.
fn keypair_setting(
    name: &str,
    encoded: Option<&crate::config::SecretString>,
) -> anyhow::Result<Option<Arc<Keypair>>> {
    encoded
        .map(|encoded| parse_keypair(name, encoded.expose_secret()).map(Arc::new))
        .transpose()
}

/// The keypair setting `name` holds: base58 of its 64 bytes.
pub fn parse_keypair(name: &str, encoded: &str) -> anyhow::Result<Keypair> {
    let bytes = bs58::decode(encoded.trim())
        .into_vec()
        .map_err(|_| anyhow::anyhow!("{name} is not base58"))?;
    Keypair::try_from(bytes.as_slice())
        .map_err(|_| anyhow::anyhow!("{name} is not a 64-byte keypair"))
}

/// A fee setting in SOL as lamports, rounded to whole lamports (a fee is a policy value, not a
/// balance).
fn sol_setting(name: &str, sol: f64) -> anyhow::Result<u64> {
    anyhow::ensure!(
        sol.is_finite() && (0.0..=1_000_000.0).contains(&sol),
        "{name} must be a number of SOL between 0 and 1,000,000"
    );
    Ok((sol * LAMPORTS_PER_SOL as f64).round() as u64)
}
