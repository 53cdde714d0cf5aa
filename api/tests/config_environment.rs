//! `Config::defaults()` ignores the process environment, so a developer's `DATABASE_URL` or
//! `REDIS_URL` cannot leak into a test's server; `--help` shows no secret the environment holds.
//! Alone in its binary: its tests set variables, one at a time (`ENVIRONMENT`).

use std::sync::Mutex;

use narrative_api::config::ExposeSecret;
use narrative_api::Config;

/// Held by each test while it sets and reads the process environment.
static ENVIRONMENT: Mutex<()> = Mutex::new(());

#[test]
fn the_test_defaults_ignore_the_environment() {
    let _environment = ENVIRONMENT.lock().unwrap_or_else(|e| e.into_inner());
    for (name, value) in [
        ("DATABASE_URL", "postgres://elsewhere/db"),
        ("REDIS_URL", "redis://elsewhere:6379"),
        ("ADMIN_SECRET", "from-the-environment"),
        ("API_LISTEN", "0.0.0.0:9999"),
        ("BINARY_MARKETS_ENABLED", "true"),
        ("NARRATIVE_DAILY_CAP", "99"),
    ] {
        std::env::set_var(name, value);
    }
    let config = Config::defaults();
    assert_eq!(
        config.database_url.expose_secret(),
        narrative_store::DEFAULT_SQLITE_URL
    );
    assert!(config.redis_url.is_none());
    assert!(config.admin_secret.is_none());
    assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
    assert!(!config.binary_markets_enabled);
    assert_eq!(config.narrative_daily_cap, 3);

    // The service itself does read them.
    use clap::Parser;
    let from_environment = Config::parse_from(["narrative-api"]);
    assert_eq!(from_environment.narrative_daily_cap, 99);
    assert!(from_environment.binary_markets_enabled);
}

/// `--help` lists every setting with its environment variable; for the secrets (and URLs that
/// may carry one) it does not show the value the environment holds, while a plain setting's
/// value still shows.
#[test]
fn the_help_shows_no_secret_from_the_environment() {
    let _environment = ENVIRONMENT.lock().unwrap_or_else(|e| e.into_inner());
    let secrets = [
        ("ADMIN_SECRET", "help-admin-secret-1a2b"),
        ("WEBHOOK_SECRET", "help-webhook-secret-3c4d"),
        ("DATABASE_URL", "postgres://nms:help-db-password@db/nms"),
        ("REDIS_URL", "redis://:help-redis-password@cache:6379"),
        (
            "SOLANA_RPC_URL",
            "https://rpc.example/?api-key=help-rpc-key",
        ),
        ("INDEXER_ENDPOINT", "https://grpc.example/help-grpc-token"),
        ("INDEXER_X_TOKEN", "help-x-token"),
        ("TURNSTILE_SECRET", "help-turnstile-secret"),
        ("HUMAN_VERIFICATION_LOCAL_TOKEN", "help-local-token"),
        ("ORACLE_KEYPAIR", "help-oracle-keypair"),
        ("KEEPER_KEYPAIR", "help-keeper-keypair"),
        ("AI_API_KEY", "help-ai-key"),
        ("PERSONA_API_KEY", "help-persona-key"),
        ("KYC_WEBHOOK_SECRET", "help-kyc-webhook-secret"),
        ("CHAINALYSIS_API_KEY", "help-chainalysis-key"),
        ("IDPASS_CLIENT_SECRET", "help-idpass-client-secret"),
        ("IDPASS_LOCAL_TOKEN", "help-idpass-local-token"),
        ("PASSPORT_API_KEY", "help-passport-key"),
        ("ADMIN_QUEUES_PASSWORD", "help-queues-password"),
        ("NFT_AUTHORITY_KEYPAIR", "help-nft-authority"),
    ];
    for (name, value) in secrets {
        std::env::set_var(name, value);
    }
    std::env::set_var("TERMS_VERSION", "help-terms-2030");
    use clap::CommandFactory;
    let help = Config::command().render_long_help().to_string();
    let short = Config::command().render_help().to_string();
    for (name, value) in secrets {
        assert!(help.contains(name), "{name} is listed");
        for shown in [&help, &short] {
            assert!(
                !shown.contains(value),
                "{name}'s value in the help: {shown}"
            );
        }
    }
    for fragment in ["help-db-password", "help-redis-password", "help-rpc-key"] {
        assert!(!help.contains(fragment), "{fragment} in the help");
    }
    assert!(
        help.contains("help-terms-2030"),
        "a plain setting's value still shows"
    );
    for (name, _) in secrets {
        std::env::remove_var(name);
    }
    std::env::remove_var("TERMS_VERSION");
}
