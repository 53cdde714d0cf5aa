//! Settings of the service: every flag also reads an environment variable, and with none set the
//! service runs on an embedded SQLite file under `./data/` on 127.0.0.1:8080. Secrets (and URLs
//! that may carry credentials) are kept in [`SecretString`], whose debug output is redacted, so
//! neither a log line nor a panic message can show them.

use std::net::SocketAddr;

use clap::{CommandFactory, FromArgMatches, Parser};
use narrative_store::DEFAULT_SQLITE_URL;
pub use secrecy::{ExposeSecret, SecretString};

/// The default SOL/USD feed.
pub const COINGECKO: &str = "https://api.coingecko.com/api/v3";

fn secret(value: &str) -> Result<SecretString, std::convert::Infallible> {
    Ok(SecretString::from(value))
}

/// Browser origins allowed when none are configured: local development only (spec 5.8).
pub const DEFAULT_CORS_ORIGINS: &str =
    "http://localhost:3000,http://127.0.0.1:3000,http://localhost:5173";

/// The push services' hosts push endpoints may be at when none are configured: Chrome, Opera,
/// Samsung Internet and other Chromium browsers (Firebase Cloud Messaging), Firefox (Mozilla's
/// autopush), Edge (Windows Push Notification Services, a host per region) and Safari (Apple).
pub const DEFAULT_PUSH_SERVICE_HOSTS: &str =
    "fcm.googleapis.com,updates.push.services.mozilla.com,*.notify.windows.com,web.push.apple.com";

/// The shortest admin or inbound webhook secret the service starts with: 16 characters (of a
/// random string, 2^64 guesses and more), so the secret cannot be guessed over the network.
pub const MIN_SECRET_CHARS: usize = 16;

/// The ledger a service started without `SOLANA_RPC_URL` asks: a local validator.
pub const DEFAULT_RPC_URL: &str = "http://127.0.0.1:8899";

#[derive(Parser, Debug, Clone)]
#[command(
    name = "narrative-api",
    version,
    about = "The Narrative Market Service /v1 REST API"
)]
pub struct Config {
    /// `sqlite://…` (embedded, the default) or `postgres://…`.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, default_value = DEFAULT_SQLITE_URL, value_parser = secret)]
    pub database_url: SecretString,

    /// Address to serve on.
    #[arg(long, env = "API_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Browser origins allowed by CORS (comma-separated). Requests without `Origin` always pass.
    #[arg(long, env = "CORS_ORIGINS", value_delimiter = ',', default_value = DEFAULT_CORS_ORIGINS)]
    pub cors_origins: Vec<String>,

    /// Operator wallet expected in `x-admin-wallet`. Admin routes answer 401 while unset.
    #[arg(long, env = "ADMIN_WALLET")]
    pub admin_wallet: Option<String>,

    /// Secret expected in `x-admin-secret`; kept only as a SHA-256 digest, never logged.
    #[arg(long, env = "ADMIN_SECRET", hide_env_values = true, value_parser = secret)]
    pub admin_secret: Option<SecretString>,

    /// Serve the binary-market listing and positions from the index instead of 503 (spec 4.13).
    #[arg(long, env = "BINARY_MARKETS_ENABLED", default_value_t = false)]
    pub binary_markets_enabled: bool,

    /// Version of the shield terms a wallet must acknowledge.
    #[arg(long, env = "SHIELD_TERMS_VERSION", default_value = "2026-11")]
    pub shield_terms_version: String,

    /// Share rate-limit counters through Redis (`redis://…`); in memory when unset.
    #[arg(long, env = "REDIS_URL", hide_env_values = true, value_parser = secret)]
    pub redis_url: Option<SecretString>,

    /// Prefix of this deployment's Redis keys.
    #[arg(long, env = "RATE_LIMIT_NAMESPACE", default_value = "nms")]
    pub rate_limit_namespace: String,

    /// Requests per minute per IP for callers without an API key.
    #[arg(long, env = "ANON_RATE_PER_MIN", default_value_t = 120)]
    pub anon_rate_per_min: u32,

    /// Requests per minute per IP across every self-registered (agent) key used from it, beside
    /// each key's own tier rate. The default is the five keys one address may register in an
    /// hour, each at the Free tier's 60; operators' keys are not counted.
    #[arg(long, env = "AGENT_KEYS_PER_IP_PER_MIN", default_value_t = 300,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub agent_keys_per_ip_per_min: u32,

    /// Networks of the reverse proxies in front of the service (comma-separated CIDRs, e.g.
    /// `10.0.0.0/8,::1/128`), whose forwarding header (`TRUSTED_PROXY_HEADER`) names the
    /// caller. None by default: the socket peer is the caller and those headers are ignored.
    #[arg(long, env = "TRUSTED_PROXIES", value_delimiter = ',')]
    pub trusted_proxies: Vec<String>,

    /// The one forwarding header the trusted proxies write: `x-forwarded-for` (nginx, most load
    /// balancers) or `forwarded` (RFC 7239). The other is ignored, since proxies pass on a
    /// client's copy of a header they do not write, and a client could name itself in it.
    #[arg(long, env = "TRUSTED_PROXY_HEADER", default_value = "x-forwarded-for",
          value_parser = ["x-forwarded-for", "forwarded"])]
    pub trusted_proxy_header: String,

    /// AI polishes (text and voice) per IP per UTC day, beside the 3 per wallet.
    #[arg(long, env = "POLISH_PER_IP_DAILY", default_value_t = 20)]
    pub polish_per_ip_daily: u32,

    /// Wallet screenings with the screening provider per IP per UTC day.
    #[arg(long, env = "SCREENING_PER_IP_DAILY", default_value_t = 20)]
    pub screening_per_ip_daily: u32,

    /// Passport score checks with the passport provider per IP per UTC day.
    #[arg(long, env = "PASSPORT_PER_IP_DAILY", default_value_t = 30)]
    pub passport_per_ip_daily: u32,

    /// Identity pass checks with the identity pass provider per IP per UTC day.
    #[arg(long, env = "IDPASS_PER_IP_DAILY", default_value_t = 30)]
    pub idpass_per_ip_daily: u32,

    /// Holder checks that read the ledger, per IP per UTC day (a cached answer is free).
    #[arg(long, env = "HOLDER_PER_IP_DAILY", default_value_t = 30)]
    pub holder_per_ip_daily: u32,

    /// JSON-RPC endpoint of the ledger (blockhashes, confirmations, account reads).
    #[arg(long, env = "SOLANA_RPC_URL", hide_env_values = true, default_value = DEFAULT_RPC_URL, value_parser = secret)]
    pub solana_rpc_url: SecretString,

    /// How long a confirm waits for a signature not yet visible at `confirmed`, in ms.
    #[arg(long, env = "CONFIRM_WAIT_MS", default_value_t = 3_000)]
    pub confirm_wait_ms: u64,

    /// The treasury wallet that market creation fees must pay (spec 4.13).
    #[arg(long, env = "TREASURY_WALLET")]
    pub treasury_wallet: Option<String>,

    /// Creation fee of a native binary market, in SOL (defaults to the narrative publish fee).
    #[arg(long, env = "BINARY_MARKET_FEE_SOL")]
    pub binary_market_fee_sol: Option<f64>,

    /// Cloudflare Turnstile secret: `cf_token`s are checked with Turnstile when set.
    #[arg(long, env = "TURNSTILE_SECRET", hide_env_values = true, value_parser = secret)]
    pub turnstile_secret: Option<SecretString>,

    /// Turnstile's siteverify URL (to point at a test double).
    #[arg(long, env = "TURNSTILE_VERIFY_URL")]
    pub turnstile_verify_url: Option<String>,

    /// Without Turnstile: the one `cf_token` the local verifier accepts (development only).
    /// With neither set, every token is refused.
    #[arg(long, env = "HUMAN_VERIFICATION_LOCAL_TOKEN", hide_env_values = true, value_parser = secret)]
    pub human_verification_local_token: Option<SecretString>,

    /// Secret expected in `x-webhook-secret` on the inbound NFT webhooks (spec 4.12).
    #[arg(long, env = "WEBHOOK_SECRET", hide_env_values = true, value_parser = secret)]
    pub webhook_secret: Option<SecretString>,

    /// Run the indexer in this process: `grpc` (Yellowstone; its bootstrap snapshot and gap fills
    /// go through SOLANA_RPC_URL) or `rpc` (JSON-RPC polling). Processes sharing a database elect
    /// one writer through the checkpoint's lease.
    #[arg(long, env = "INDEXER_SOURCE", value_enum)]
    pub indexer_source: Option<narrative_indexer::config::SourceKind>,

    /// The in-process indexer's endpoint (defaults to SOLANA_RPC_URL for `rpc`).
    #[arg(long, env = "INDEXER_ENDPOINT", hide_env_values = true, value_parser = secret)]
    pub indexer_endpoint: Option<SecretString>,

    /// x-token of the Yellowstone endpoint.
    #[arg(long, env = "INDEXER_X_TOKEN", hide_env_values = true, value_parser = secret)]
    pub indexer_x_token: Option<SecretString>,

    /// The service's oracle signer, base58 of its 64-byte keypair: it signs
    /// `submit_oracle_resolution` for verdicts that agents submit, and pays `finalize_resolution`.
    #[arg(long, env = "ORACLE_KEYPAIR", hide_env_values = true, value_parser = secret)]
    pub oracle_keypair: Option<SecretString>,

    /// crucible_pool's keeper, base58 of its 64-byte keypair: it closes each Echo Pool epoch
    /// (posting the distribution's Merkle root) and rolls over what wallets left unclaimed, and
    /// pays those transactions. No keeper runs while unset.
    #[arg(long, env = "KEEPER_KEYPAIR", hide_env_values = true, value_parser = secret)]
    pub keeper_keypair: Option<SecretString>,

    /// Version of the platform terms wallets accept (`/v1/terms`, the conviction profile's
    /// `terms_*`).
    #[arg(long, env = "TERMS_VERSION", default_value = "2026-11")]
    pub terms_version: String,

    /// The deployment's name at the head of every message a wallet signs for it
    /// (`<domain>:<purpose>:…:issued-at:<secs>`): set it to the public host the service is
    /// reached at (without the port), so that signatures wallets gave another deployment (a
    /// devnet instance, a clone) are refused here. Letters, digits, `.`, `-`, `_`. (The default
    /// is `values::DEFAULT_PROOF_DOMAIN`; this layer names nothing of the crate.)
    #[arg(
        long,
        env = "WALLET_PROOF_DOMAIN",
        default_value = "narrative-market-service"
    )]
    pub wallet_proof_domain: String,

    /// Bootstrap only (comma-separated wallets): an agent counts as granted oracle authority
    /// when its wallet is listed here *and* was proven by the wallet's signature at registration
    /// (`wallet_signature`). An agent that merely named a listed wallet gets nothing. Authority
    /// is otherwise an operator's grant (`POST /v1/admin/agents/{agent_id}/oracle`), and a
    /// revocation (`DELETE` there) overrides this list.
    #[arg(long, env = "ORACLE_AGENT_WALLETS", value_delimiter = ',')]
    pub oracle_agent_wallets: Vec<String>,

    /// The beta is over: operators may issue Pro and Enterprise keys (spec 5 rule 5, 8). While
    /// false (the default), `POST /v1/admin/apikeys` issues only Free keys (403 `tier_inactive`
    /// otherwise).
    #[arg(long, env = "PAID_TIERS_ACTIVE", default_value_t = false)]
    pub paid_tiers_active: bool,

    /// Base URL of an OpenAI-compatible API (`…/v1`) for polishing, reviewing and drafting
    /// theses; local deterministic providers when unset.
    #[arg(long, env = "AI_API_BASE")]
    pub ai_api_base: Option<String>,

    /// Its API key.
    #[arg(long, env = "AI_API_KEY", hide_env_values = true, value_parser = secret)]
    pub ai_api_key: Option<SecretString>,

    /// Its model.
    #[arg(long, env = "AI_MODEL", default_value = "gpt-4o-mini")]
    pub ai_model: String,

    /// The anti-spam fee a narrative's publication pays, in SOL: 80 % becomes the creator's
    /// locked YES backing, 20 % goes to the treasury (spec 4.1).
    #[arg(long, env = "NARRATIVE_PUBLISH_FEE_SOL", default_value_t = 5.0)]
    pub narrative_publish_fee_sol: f64,

    /// Narratives one wallet may publish per UTC day.
    #[arg(long, env = "NARRATIVE_DAILY_CAP", default_value_t = 3)]
    pub narrative_daily_cap: u32,

    /// Conviction score a wallet needs to publish (0: every wallet may).
    #[arg(long, env = "NARRATIVE_MIN_CONVICTION_SCORE", default_value_t = 0.0)]
    pub narrative_min_conviction_score: f64,

    /// Uncertainty (0–100) a thesis needs to launch; below it, 422 `narrative_too_obvious`.
    #[arg(long, env = "NARRATIVE_MIN_UNCERTAINTY", default_value_t = 30.0)]
    pub narrative_min_uncertainty: f64,

    /// CoinGecko-compatible API for the SOL/USD price of USD aggregates.
    #[arg(long, env = "PRICE_FEED_URL", default_value = COINGECKO)]
    pub price_feed_url: String,

    /// A fixed SOL/USD price instead of the feed (development, tests).
    #[arg(long, env = "SOL_USD_PRICE")]
    pub sol_usd_price: Option<f64>,

    /// The ledger network the venues are wired for: `devnet` (lend_a and lend_b live; the
    /// mainnet-targeted venues answer 503 `coming_soon`) or `mainnet-beta`.
    #[arg(long, env = "SOLANA_CLUSTER", default_value = "devnet",
          value_parser = ["devnet", "mainnet-beta"])]
    pub solana_cluster: String,

    /// USDC's mint on the cluster (default: Circle's devnet USDC on devnet, USDC on mainnet).
    #[arg(long, env = "USDC_MINT")]
    pub usdc_mint: Option<String>,

    /// lend_a's program (default: SPL token-lending's devnet deployment).
    #[arg(long, env = "LEND_A_PROGRAM")]
    pub lend_a_program: Option<String>,

    /// lend_a's reserves, `SYMBOL=<reserve address>` comma-separated (e.g. `SOL=…,USDC=…`);
    /// lend_a takes only the tokens named (naming lend_a for another answers 400
    /// `unsupported_protocol`; automatic routing passes it over).
    #[arg(long, env = "LEND_A_RESERVES", value_delimiter = ',')]
    pub lend_a_reserves: Vec<String>,

    /// lend_b's (Kamino) lending market.
    #[arg(long, env = "LEND_B_MARKET")]
    pub lend_b_market: Option<String>,

    /// lend_b's reserves in that market, `SYMBOL=<reserve address>` comma-separated.
    #[arg(long, env = "LEND_B_RESERVES", value_delimiter = ',')]
    pub lend_b_reserves: Vec<String>,

    /// stake_a's stake pool (default: Jito's).
    #[arg(long, env = "STAKE_A_POOL")]
    pub stake_a_pool: Option<String>,

    /// Base URL of Jito's Kobe API for stake_a's APY (off unless set).
    #[arg(long, env = "STAKE_A_RATE_API")]
    pub stake_a_rate_api: Option<String>,

    /// Base URL of Marinade's API for stake_b's APY (off unless set).
    #[arg(long, env = "STAKE_B_RATE_API")]
    pub stake_b_rate_api: Option<String>,

    /// APYs in percent for venues whose state and API give none, `key=percent` comma-separated
    /// over the APY map's keys (e.g. `pool_a=4.2,p0=6.1`).
    #[arg(long, env = "DEFI_CONFIGURED_APYS", value_delimiter = ',')]
    pub defi_configured_apys: Vec<String>,

    /// Borrow APRs in percent for a venue's token whose reserve gives none, `venue_token=percent`
    /// comma-separated (e.g. `lend_b_usdc=9.5`; keys `lend_a_sol`, `lend_a_usdc`, `lend_b_sol`,
    /// `lend_b_usdc`).
    #[arg(long, env = "BORROW_CONFIGURED_RATES", value_delimiter = ',')]
    pub borrow_configured_rates: Vec<String>,

    /// Borrowing (spec 4.7) is enabled; off by default on devnet.
    #[arg(long, env = "BORROW_ENABLED", default_value_t = false)]
    pub borrow_enabled: bool,

    /// The p0 unified-margin integration (spec 4.5, marginfi v2) is enabled; off by default.
    /// Its routes answer 503 `p0_disabled` while off.
    #[arg(long, env = "P0_ENABLED", default_value_t = false)]
    pub p0_enabled: bool,

    /// p0's program (default: marginfi v2's deployment on the cluster).
    #[arg(long, env = "P0_PROGRAM")]
    pub p0_program: Option<String>,

    /// p0's group (default: the cluster's main group).
    #[arg(long, env = "P0_GROUP")]
    pub p0_group: Option<String>,

    /// p0's banks in that group, `SYMBOL=<bank address>` comma-separated (default on
    /// mainnet-beta: the main group's SOL and USDC banks; none on devnet).
    #[arg(long, env = "P0_BANKS", value_delimiter = ',')]
    pub p0_banks: Vec<String>,

    /// Development only: let the service call `http` URLs and loopback addresses that clients
    /// supply (agent webhooks, Web Push endpoints), e.g. a receiver on the developer's machine. Private, link-local
    /// and other non-public addresses stay refused.
    #[arg(long, env = "OUTBOUND_ALLOW_LOCAL", default_value_t = false)]
    pub outbound_allow_local: bool,

    /// Hosts push subscription endpoints may be at (comma-separated; `*.<domain>` for any name
    /// under it): the known push services. Other endpoints are refused (403 `url_not_allowed`).
    #[arg(long, env = "PUSH_SERVICE_HOSTS", value_delimiter = ',', default_value = DEFAULT_PUSH_SERVICE_HOSTS)]
    pub push_service_hosts: Vec<String>,

    /// Push deliveries and agent webhooks sent at once, by their own workers apart from the
    /// money jobs (settlement, the Echo Pool keeper, account refreshes, scoring) and the drafts.
    #[arg(long, env = "OUTBOUND_WORKERS", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub outbound_workers: u32,

    /// AI drafts (`POST /v1/narratives/generate`) asked of the provider at once, by their own
    /// workers apart from the money jobs: a provider that is slow or never answers delays
    /// only the drafts.
    #[arg(long, env = "DRAFT_WORKERS", default_value_t = 2,
          value_parser = clap::value_parser!(u32).range(1..=16))]
    pub draft_workers: u32,

    /// Seconds a push delivery or webhook request may take, connection included.
    #[arg(long, env = "OUTBOUND_TIMEOUT_SECS", default_value_t = 5,
          value_parser = clap::value_parser!(u64).range(1..=30))]
    pub outbound_timeout_secs: u64,

    /// Consecutive failures (no answer in time, no connection, a 5xx) after which a push
    /// service's or webhook receiver's host is skipped for `OUTBOUND_BREAKER_COOLDOWN_SECS`;
    /// its deliveries wait and are sent afterwards.
    #[arg(long, env = "OUTBOUND_BREAKER_FAILURES", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub outbound_breaker_failures: u32,

    /// Seconds a failing host is skipped.
    #[arg(long, env = "OUTBOUND_BREAKER_COOLDOWN_SECS", default_value_t = 120,
          value_parser = clap::value_parser!(i64).range(1..=86_400))]
    pub outbound_breaker_cooldown_secs: i64,

    /// Persona's API key (its sandbox key ahead of mainnet): KYC inquiries open with Persona.
    /// Without it a local provider opens them in the service's own records; either way only a
    /// signed webhook verifies anyone.
    #[arg(long, env = "PERSONA_API_KEY", hide_env_values = true, value_parser = secret)]
    pub persona_api_key: Option<SecretString>,

    /// Persona's API (tests point it at a local server).
    #[arg(long, env = "PERSONA_API_URL")]
    pub persona_api_url: Option<String>,

    /// Persona's hosted flow the user is sent to.
    #[arg(long, env = "PERSONA_HOSTED_URL")]
    pub persona_hosted_url: Option<String>,

    /// The Persona inquiry template of KYC tier 1 (basic).
    #[arg(long, env = "PERSONA_TEMPLATE_TIER1")]
    pub persona_template_tier1: Option<String>,

    /// The Persona inquiry template of KYC tier 2 (enhanced).
    #[arg(long, env = "PERSONA_TEMPLATE_TIER2")]
    pub persona_template_tier2: Option<String>,

    /// The KYC webhook's signing secret (`Persona-Signature`); the webhook answers 401 while
    /// it is unset.
    #[arg(long, env = "KYC_WEBHOOK_SECRET", hide_env_values = true, value_parser = secret)]
    pub kyc_webhook_secret: Option<SecretString>,

    /// Chainalysis's sanctions screening API key: wallets are screened with Chainalysis.
    /// Without it the local list `SCREENING_BLOCKLIST` is the screening.
    #[arg(long, env = "CHAINALYSIS_API_KEY", hide_env_values = true, value_parser = secret)]
    pub chainalysis_api_key: Option<SecretString>,

    /// Chainalysis's API (tests point it at a local server).
    #[arg(long, env = "CHAINALYSIS_API_URL")]
    pub chainalysis_api_url: Option<String>,

    /// Development and tests: wallets the local screening flags (comma-separated).
    #[arg(long, env = "SCREENING_BLOCKLIST", value_delimiter = ',')]
    pub screening_blocklist: Vec<String>,

    /// The identity pass provider's RFC 7662 token introspection endpoint: `idpass` tokens are
    /// checked there. Without it a local pass accepts only `IDPASS_LOCAL_TOKEN`.
    #[arg(long, env = "IDPASS_INTROSPECTION_URL")]
    pub idpass_introspection_url: Option<String>,

    /// This service's client id at the identity pass provider (HTTP Basic user).
    #[arg(long, env = "IDPASS_CLIENT_ID", default_value = "")]
    pub idpass_client_id: String,

    /// This service's client secret at the identity pass provider (HTTP Basic password).
    #[arg(long, env = "IDPASS_CLIENT_SECRET", hide_env_values = true, value_parser = secret)]
    pub idpass_client_secret: Option<SecretString>,

    /// The identity pass provider's page where a user obtains a pass (`/v1/verify/initiate`).
    #[arg(
        long,
        env = "IDPASS_FLOW_URL",
        default_value = "https://idpass.invalid/local-provider"
    )]
    pub idpass_flow_url: String,

    /// Development and tests: the one token the local identity pass accepts.
    #[arg(long, env = "IDPASS_LOCAL_TOKEN", hide_env_values = true, value_parser = secret)]
    pub idpass_local_token: Option<SecretString>,

    /// Human Passport's API key: passport scores come from its Stamps API. Without it,
    /// `PASSPORT_LOCAL_SCORES` are the scores.
    #[arg(long, env = "PASSPORT_API_KEY", hide_env_values = true, value_parser = secret)]
    pub passport_api_key: Option<SecretString>,

    /// The Human Passport scorer whose scores are read (required with `PASSPORT_API_KEY`).
    #[arg(long, env = "PASSPORT_SCORER_ID")]
    pub passport_scorer_id: Option<String>,

    /// Human Passport's API (tests point it at a local server).
    #[arg(long, env = "PASSPORT_API_URL")]
    pub passport_api_url: Option<String>,

    /// Where users raise their passport score (`/v1/verify/initiate`).
    #[arg(
        long,
        env = "PASSPORT_APP_URL",
        default_value = "https://app.passport.xyz"
    )]
    pub passport_app_url: String,

    /// Development and tests: fixed passport scores, `<address>=<score>` comma-separated.
    #[arg(long, env = "PASSPORT_LOCAL_SCORES", value_delimiter = ',')]
    pub passport_local_scores: Vec<String>,

    /// The Solana Attestation Service credentials and schemas whose attestations verify a
    /// wallet: `<credential>:<schema>` pairs, comma-separated.
    #[arg(long, env = "SAS_TRUSTED_SCHEMAS", value_delimiter = ',')]
    pub sas_trusted_schemas: Vec<String>,

    /// The loyalty token's mint (`/v1/verify/holder`); the check answers 503 while unset.
    #[arg(long, env = "LOYALTY_MINT")]
    pub loyalty_mint: Option<String>,

    /// The balance, in the loyalty token's base units, a holder keeps for the hold period.
    #[arg(long, env = "LOYALTY_MIN_BALANCE", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub loyalty_min_balance: u64,

    /// Where this service is reached from outside, for the callbacks it hands to providers.
    #[arg(long, env = "PUBLIC_BASE_URL", default_value = "http://127.0.0.1:8080")]
    pub public_base_url: String,

    /// Refused shield terms acknowledgements from one address, within ten minutes, that block
    /// it from the shield until an operator lifts the block.
    #[arg(long, env = "SHIELD_GATE_MAX_FAILURES", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub shield_gate_max_failures: u32,

    /// HTTP Basic user of the job queue's page (`/admin/queues`), which also needs the admin
    /// header pair.
    #[arg(long, env = "ADMIN_QUEUES_USER", default_value = "operator")]
    pub admin_queues_user: String,

    /// HTTP Basic password of the job queue's page; the page answers 401 while unset.
    #[arg(long, env = "ADMIN_QUEUES_PASSWORD", hide_env_values = true, value_parser = secret)]
    pub admin_queues_password: Option<SecretString>,

    /// The tier NFTs' mint and update authority, base58 of its 64-byte keypair: it co-signs
    /// every tier-NFT mint (the wallet pays). Minting answers 503 `collection_not_deployed`
    /// while unset.
    #[arg(long, env = "NFT_AUTHORITY_KEYPAIR", hide_env_values = true, value_parser = secret)]
    pub nft_authority_keypair: Option<SecretString>,

    /// The tier collections, `<tier>=<collection mint>` pairs comma-separated, as
    /// `nft-collections` prints them; a tier without one answers 503 `collection_not_deployed`.
    #[arg(long, env = "NFT_COLLECTIONS", value_delimiter = ',')]
    pub nft_collections: Vec<String>,

    /// The contact push services are given with every Web Push message (the VAPID `sub` claim,
    /// RFC 8292): a `mailto:` or `https:` URI where the operator can be reached.
    #[arg(
        long,
        env = "VAPID_SUBJECT",
        default_value = "mailto:operator@narrative-market.invalid"
    )]
    pub vapid_subject: String,

    /// Memory for the response cache of the hot reads, in MiB of answer bodies (0 turns it
    /// off). Entries are evicted least recently used first; an answer over 8 MiB is not kept.
    #[arg(long, env = "RESPONSE_CACHE_MB", default_value_t = 64)]
    pub response_cache_mb: usize,

    /// Seconds open connections get to finish after SIGINT/SIGTERM.
    #[arg(long, env = "SHUTDOWN_GRACE_SECS", default_value_t = 10)]
    pub shutdown_grace_secs: u64,
}

impl Config {
    /// The defaults, whatever the process environment holds (what tests start from): a
    /// developer's `DATABASE_URL` or `REDIS_URL` must not leak into a test's server.
    pub fn defaults() -> Config {
        let command = Config::command().mut_args(|arg| arg.env(None));
        let matches = command
            .try_get_matches_from(["narrative-api"])
            .expect("the defaults parse");
        Config::from_arg_matches(&matches).expect("the defaults parse")
    }
}
