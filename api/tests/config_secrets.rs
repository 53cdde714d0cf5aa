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

/// An admin or inbound webhook secret short enough to guess keeps the service from starting,
/// with an error that names the setting (and not the value); 16 characters start, and an
/// empty one is unset (its routes answer 401), as before.
#[tokio::test]
async fn the_service_refuses_to_start_with_a_guessable_admin_or_webhook_secret() {
    use narrative_api::{AppState, Providers};
    let db = narrative_store::testing::TestDb::new().await;
    let state_with = |configure: &dyn Fn(&mut Config)| {
        let mut config = Config::defaults();
        config.admin_wallet = Some("AdminWa11et1111111111111111111111111111111".into());
        configure(&mut config);
        let providers = Providers::from_config(&config).unwrap();
        let store = db.store.clone();
        async move {
            AppState::from_config_with(store, &config, providers)
                .await
                .map(|_| ())
        }
    };
    for (name, refused) in [
        (
            "ADMIN_SECRET",
            state_with(&|c| c.admin_secret = Some("hunter2-admin".into())).await,
        ),
        (
            "WEBHOOK_SECRET",
            state_with(&|c| c.webhook_secret = Some("hook-secret".into())).await,
        ),
        (
            "ADMIN_SECRET",
            state_with(&|c| c.admin_secret = Some("fifteen-chars-x".into())).await,
        ),
        (
            "KYC_WEBHOOK_SECRET",
            state_with(&|c| c.kyc_webhook_secret = Some("persona-hook".into())).await,
        ),
        (
            "ADMIN_QUEUES_PASSWORD",
            state_with(&|c| c.admin_queues_password = Some("queues-pw".into())).await,
        ),
    ] {
        let error = format!("{:#}", refused.expect_err(name));
        assert!(error.contains(name) && error.contains("16"), "{error}");
        for value in [
            "hunter2-admin",
            "hook-secret",
            "fifteen-chars-x",
            "persona-hook",
            "queues-pw",
        ] {
            assert!(!error.contains(value), "{error}");
        }
    }
    // A deployment name that could not head a message (the `:` of a port) refuses too.
    let refused = state_with(&|c| c.wallet_proof_domain = "app.example.org:8443".into()).await;
    let error = format!("{:#}", refused.expect_err("WALLET_PROOF_DOMAIN"));
    assert!(error.contains("WALLET_PROOF_DOMAIN"), "{error}");
    state_with(&|c| {
        c.admin_secret = Some("sixteen-chars-xy".into());
        c.webhook_secret = Some("a-webhook-secret-of-some-length".into());
        c.kyc_webhook_secret = Some("wbhsec_a-persona-webhook-secret".into());
        c.admin_queues_password = Some("a-queue-page-password".into());
    })
    .await
    .expect("16 characters and more start");
    state_with(&|c| {
        c.admin_secret = Some("".into());
        c.webhook_secret = Some("".into());
    })
    .await
    .expect("empty is unset");
}

/// A ledger error never shows the node URL's credentials (an API key in its query, a token in
/// its path, a password in its user info), which the HTTP client's error quotes; it still says
/// which node failed.
#[tokio::test]
async fn ledger_errors_do_not_show_the_rpc_urls_credentials() {
    use narrative_api::chain::ledger::{Ledger, RpcLedger};
    // A port nobody listens on: the call fails at once, as a node that is down.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!(
        "http://rpc-user:rpc-password-31@127.0.0.1:{port}/v2/path-token-5566?api-key=rpc-key-99"
    );
    let ledger = RpcLedger::new(&url, std::sync::Arc::new(narrative_api::clock::SystemClock));
    let error = ledger.latest_blockhash().await.expect_err("nobody listens");
    let printed = format!("{error} {error:?} {ledger:?}");
    for secret in [
        "rpc-key-99",
        "path-token-5566",
        "rpc-password-31",
        "rpc-user",
    ] {
        assert!(!printed.contains(secret), "{secret} printed: {printed}");
    }
    assert!(
        printed.contains(&format!("127.0.0.1:{port}")),
        "the node is named: {printed}"
    );
}
