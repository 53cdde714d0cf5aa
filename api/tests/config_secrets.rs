//! Secrets never reach debug output: a fully configured `Config` prints none of them.

use narrative_api::Config;

#[test]
fn the_debug_output_of_a_configured_config_holds_no_secret() {
    let secrets = [
        ("admin_secret", "admin-secret-7f3a"),
        ("turnstile_secret", "turnstile-secret-91bc"),
        ("human_verification_local_token", "local-token-55de"),
        ("webhook_secret", "webhook-secret-0a1b"),
        ("indexer_x_token", "x-token-c0ffee"),
        ("oracle_keypair", "4Zf3oraclekeypairbase58"),
        ("ai_api_key", "sk-live-abcdef123456"),
        ("database_url", "postgres://nms:db-password-77@db/nms"),
        ("redis_url", "redis://:redis-password-88@cache:6379"),
        ("solana_rpc_url", "https://rpc.example/?api-key=rpc-key-99"),
        (
            "indexer_endpoint",
            "https://grpc.example/?token=grpc-key-42",
        ),
        ("persona_api_key", "persona-key-3c1d"),
        ("kyc_webhook_secret", "kyc-webhook-secret-8e2f"),
        ("chainalysis_api_key", "chainalysis-key-4b5a"),
        ("idpass_client_secret", "idpass-client-secret-6d7e"),
        ("idpass_local_token", "idpass-local-token-1f2a"),
        ("passport_api_key", "passport-key-9c8b"),
        ("nft_authority_keypair", "3Kq9nftauthoritykeypair58"),
    ];
    let mut config = Config::defaults();
    for (field, value) in secrets {
        let secret = value.into();
        match field {
            "admin_secret" => config.admin_secret = Some(secret),
            "turnstile_secret" => config.turnstile_secret = Some(secret),
            "human_verification_local_token" => {
                config.human_verification_local_token = Some(secret)
            }
            "webhook_secret" => config.webhook_secret = Some(secret),
            "indexer_x_token" => config.indexer_x_token = Some(secret),
            "oracle_keypair" => config.oracle_keypair = Some(secret),
            "ai_api_key" => config.ai_api_key = Some(secret),
            "database_url" => config.database_url = secret,
            "redis_url" => config.redis_url = Some(secret),
            "solana_rpc_url" => config.solana_rpc_url = secret,
            "indexer_endpoint" => config.indexer_endpoint = Some(secret),
            "persona_api_key" => config.persona_api_key = Some(secret),
            "kyc_webhook_secret" => config.kyc_webhook_secret = Some(secret),
            "chainalysis_api_key" => config.chainalysis_api_key = Some(secret),
            "idpass_client_secret" => config.idpass_client_secret = Some(secret),
            "idpass_local_token" => config.idpass_local_token = Some(secret),
            "passport_api_key" => config.passport_api_key = Some(secret),
            "nft_authority_keypair" => config.nft_authority_keypair = Some(secret),
            other => unreachable!("{other}"),
        }
    }
    config.admin_wallet = Some("AdminWa11et1111111111111111111111111111111".into());
    let printed = format!("{config:?} {config:#?}");
    for (field, value) in secrets {
        assert!(!printed.contains(value), "{field} printed: {printed}");
        // The field is there, redacted.
        assert!(printed.contains(field), "{field} missing from the output");
    }
    // Nor any part of a secret a URL carries.
    for fragment in [
        "db-password-77",
        "redis-password-88",
        "rpc-key-99",
        "grpc-key-42",
    ] {
        assert!(!printed.contains(fragment), "{fragment} printed: {printed}");
    }
    assert!(
        printed.contains("AdminWa11et1111111111111111111111111111111"),
        "what is not secret still prints"
    );
}
