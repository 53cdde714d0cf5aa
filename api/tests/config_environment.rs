//! `Config::defaults()` ignores the process environment, so a developer's `DATABASE_URL` or
//! `REDIS_URL` cannot leak into a test's server. Alone in its binary: it sets variables.

use narrative_api::config::ExposeSecret;
use narrative_api::Config;

#[test]
fn the_test_defaults_ignore_the_environment() {
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
