//! Borrowing's reads over HTTP (spec 4.7): rates from the lending reserves on solana-program-test
//! (the SPL token-lending and Kamino doubles under their real ids) with the 50 bps spread, kept a
//! minute and outlasting an RPC outage; capacity from the wallet's lending positions (deposited
//! through the DeFi flow) at its tier's max LTV; simulation; the signed acceptance of the borrow
//! terms; and the refusals of bad input.

mod common;

use std::sync::Arc;

use common::bank::BankLedger;
use common::{chain, SigningWallet, TestServer};
use integration_tests::harness::HarnessOptions;
use narrative_api::clock::{Clock, ManualClock, SharedClock};
use narrative_store::entities::{borrow_positions, defi_positions, tier_nfts};
use reqwest::StatusCode;
use sea_orm::{ActiveModelTrait, ActiveValue::Set, IntoActiveModel};
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_signer::Signer;

struct Lender {
    server: TestServer,
    ledger: Arc<BankLedger>,
    clock: Arc<ManualClock>,
    wallet: Keypair,
}

impl Lender {
    /// Both lending doubles on a bank, their SOL reserves configured; `lend_a`'s USDC borrow
    /// rate configured (the double has no USDC reserve).
    async fn start() -> Lender {
        let clock = ManualClock::at_system_time();
        let shared: SharedClock = clock.clone();
        let options = HarnessOptions {
            token_lending: true,
            klend: true,
            ..Default::default()
        };
        let (server, ledger) = chain::start_on_bank_at(shared, options, |h, c| {
            let market = h.lending.expect("the double is installed");
            c.lend_a_reserves = vec![format!("SOL={}", market.sol_reserve)];
            let kamino = h.kamino.expect("the double is installed");
            c.lend_b_market = Some(kamino.market.to_string());
            c.lend_b_reserves = vec![format!("SOL={}", kamino.sol_reserve)];
            c.borrow_configured_rates = vec!["lend_a_usdc=6.25".into()];
        })
        .await;
        let wallet = ledger.harness.lock().await.wallets[0].insecure_clone();
        Lender {
            server,
            ledger,
            clock,
            wallet,
        }
    }

    /// Deposits `sol` SOL into `venue` through prepare → sign → send → confirm.
    async fn deposit(&self, venue: &str, sol: u64) {
        let wallet = self.wallet.pubkey().to_string();
        let (status, prepared) = self
            .server
            .post(
                "/v1/defi/deposit/prepare",
                &json!({"wallet": wallet, "token_symbol": "SOL", "amount": sol, "protocol": venue}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{prepared}");
        let signature = chain::sign_and_send_all(&self.ledger, &prepared, &self.wallet)
            .await
            .pop()
            .expect("a transaction to sign");
        let (status, confirmed) = self
            .server
            .post(
                "/v1/defi/deposit/confirm",
                &json!({"backing_id": prepared["backing_id"], "tx_signature": signature, "wallet": wallet}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{confirmed}");
    }
}

const CREATOR: &str = "Creator1111111111111111111111111111111111";

fn close(actual: &Value, expected: f64) -> bool {
    actual.as_f64().is_some_and(|v| (v - expected).abs() < 1e-6)
}

#[tokio::test]
async fn borrow_rates_come_from_the_reserves_with_the_spread_and_outlast_an_outage() {
    let l = Lender::start().await;
    let (status, rates) = l.server.get("/v1/borrow/rates").await;
    assert_eq!(status, StatusCode::OK, "{rates}");
    let lend_a = &rates["rates"]["lend_a"];
    let lend_b = &rates["rates"]["lend_b"];
    // lend_a's SOL reserve is 75 % utilised on a 0 → 8 % (at 80 %) curve: 7.5 %; lend_b's is
    // 50 % on 0 → 20 %: 10 %. Each with 0.5 points on top.
    assert!(close(&lend_a["base"]["sol"], 7.5), "{rates}");
    assert!(close(&lend_a["with_spread"]["sol"], 8.0), "{rates}");
    assert!(close(&lend_b["base"]["sol"], 10.0), "{rates}");
    assert!(close(&lend_b["with_spread"]["sol"], 10.5), "{rates}");
    assert_eq!(lend_a["magma_spread_bps"], 50);
    assert_eq!(lend_b["magma_spread_bps"], 50);
    // No USDC reserve: lend_a's is configured, lend_b's is nothing.
    assert!(close(&lend_a["base"]["usdc"], 6.25), "{rates}");
    assert!(close(&lend_a["with_spread"]["usdc"], 6.75), "{rates}");
    assert_eq!(lend_a["sources"]["usdc"]["source"], "configured");
    assert_eq!(lend_b["base"]["usdc"], Value::Null);
    assert_eq!(lend_b["with_spread"]["usdc"], Value::Null);
    assert_eq!(lend_b["sources"]["usdc"]["source"], "none");
    assert_eq!(lend_a["sources"]["sol"]["source"], "ledger");
    assert_eq!(lend_a["sources"]["sol"]["stale"], false);
    assert_eq!(rates["source"], "mixed");
    let first_poll = rates["rates"]["polled_at"].clone();

    // The node goes down. Within the minute the kept rates answer, not re-polled.
    l.ledger.set_offline(true);
    l.clock.advance(59);
    let (status, kept) = l.server.get("/v1/borrow/rates").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(kept, rates);

    // Past it the reserves cannot be read: the last good values stay, marked stale.
    l.clock.advance(2);
    let (status, stale) = l.server.get("/v1/borrow/rates").await;
    assert_eq!(status, StatusCode::OK, "{stale}");
    assert_ne!(stale["rates"]["polled_at"], first_poll);
    assert!(
        close(&stale["rates"]["lend_a"]["base"]["sol"], 7.5),
        "{stale}"
    );
    assert!(
        close(&stale["rates"]["lend_b"]["base"]["sol"], 10.0),
        "{stale}"
    );
    assert_eq!(stale["rates"]["lend_a"]["sources"]["sol"]["stale"], true);
    assert_eq!(stale["rates"]["lend_b"]["sources"]["sol"]["stale"], true);
    assert_eq!(stale["rates"]["lend_a"]["sources"]["usdc"]["stale"], false);

    // Back up, the next poll reads the reserves again.
    l.ledger.set_offline(false);
    l.clock.advance(61);
    let (_, fresh) = l.server.get("/v1/borrow/rates").await;
    assert_eq!(fresh["rates"]["lend_a"]["sources"]["sol"]["stale"], false);
    assert!(
        close(&fresh["rates"]["lend_a"]["base"]["sol"], 7.5),
        "{fresh}"
    );
    l.server.stop().await;
}

#[tokio::test]
async fn capacity_is_the_lending_collateral_at_the_tiers_ltv_and_simulation_says_the_risk() {
    let l = Lender::start().await;
    let wallet = l.wallet.pubkey().to_string();
    let capacity_path = format!("/v1/borrow/capacity/{wallet}");

    // Nothing deposited: a wallet with no resolved backing has the zeroed `ember` profile.
    let (status, empty) = l.server.get(&capacity_path).await;
    assert_eq!(status, StatusCode::OK, "{empty}");
    assert_eq!(empty["wallet"], wallet.as_str());
    assert_eq!(empty["conviction_tier"], "ember");
    assert_eq!(empty["max_ltv"], 0.5);
    assert_eq!(empty["collateral_usd"], 0.0);
    assert_eq!(empty["total_borrowed_usd"], 0.0);
    assert_eq!(empty["open_positions"], 0);
    assert_eq!(
        empty["price"],
        json!({"sol_usd": 150.0, "source": "configured", "age_secs": 0})
    );

    // 10 SOL into lend_a and 2 into lend_b, at 150 USD: 1,800 USD of collateral.
    l.deposit("lend_a", 10).await;
    l.deposit("lend_b", 2).await;
    // A liquid-staking position does not count (recorded as the stake_b flow records one).
    let db = l.server.db.store.db();
    defi_positions::ActiveModel {
        id: Set(uuid::Uuid::new_v4().to_string()),
        wallet: Set(wallet.clone()),
        protocol: Set("stake_b".into()),
        token_symbol: Set("SOL".into()),
        mint: Set("So11111111111111111111111111111111111111112".into()),
        amount_base: Set(5_000_000_000),
        amount_lamports: Set(5_000_000_000),
        receipt_amount: Set(4_900_000_000),
        rate_liquidity: Set("100".into()),
        rate_receipt: Set("98".into()),
        narrative_id: Set(None),
        status: Set("confirmed".into()),
        deposit_signature: Set("1".repeat(64)),
        withdraw_signature: Set(None),
        withdrawn_base: Set(None),
        created_at: Set(l.clock.now()),
        withdrawn_at: Set(None),
    }
    .insert(db)
    .await
    .unwrap();
    let (_, allocation) = l.server.get(&format!("/v1/defi/allocation/{wallet}")).await;
    assert_eq!(allocation["total_sol"], 17.0, "{allocation}");
    let (status, ember) = l.server.get(&capacity_path).await;
    assert_eq!(status, StatusCode::OK, "{ember}");
    assert!(close(&ember["collateral_usd"], 1_800.0), "{ember}");
    assert!(close(&ember["capacity_usd"], 900.0), "{ember}");
    assert!(close(&ember["available_usd"], 900.0), "{ember}");

    // Seven winning backings: score 110, `flare`, 60 %.
    for t in 0..7 {
        common::fixtures::settled(db, CREATOR, t, "yes", &[(wallet.as_str(), "yes")]).await;
    }
    // A borrow of 200 USD on record (the borrow flow records one so).
    borrow_positions::ActiveModel {
        id: Set(uuid::Uuid::new_v4().to_string()),
        wallet: Set(wallet.clone()),
        protocol: Set("lend_a".into()),
        asset: Set("USDC".into()),
        mint: Set("4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU".into()),
        amount_base: Set(200_000_000),
        amount_usd_micros: Set(200_000_000),
        borrow_apy: Set(8.0),
        max_ltv_bps: Set(6_000),
        tier: Set("flare".into()),
        obligation: Set("11111111111111111111111111111111".into()),
        status: Set("open".into()),
        borrow_signature: Set("2".repeat(64)),
        repay_signature: Set(None),
        last_health: Set(None),
        health_checked_at: Set(None),
        alert_level: Set(None),
        created_at: Set(l.clock.now()),
        closed_at: Set(None),
        landed_slot: Set(None),
    }
    .insert(db)
    .await
    .unwrap();
    let (_, flare) = l.server.get(&capacity_path).await;
    assert_eq!(flare["conviction_tier"], "flare", "{flare}");
    assert_eq!(flare["max_ltv"], 0.6);
    assert!(close(&flare["capacity_usd"], 1_080.0), "{flare}");
    assert!(close(&flare["total_borrowed_usd"], 200.0), "{flare}");
    assert_eq!(flare["open_positions"], 1);
    assert!(close(&flare["available_usd"], 880.0), "{flare}");

    let simulate = |query: &str| {
        let path = format!("/v1/borrow/simulate?wallet={wallet}&{query}");
        let server = &l.server;
        async move { server.get(&path).await }
    };
    // 500 more: needs 833.33 at 60 %, leaves 1,800 / 700.
    let (status, safe) = simulate("protocol=lend_b&asset=SOL&amount_usd=500").await;
    assert_eq!(status, StatusCode::OK, "{safe}");
    let s = &safe["simulation"];
    assert_eq!(s["borrow_amount_usd"], 500.0);
    assert_eq!(s["max_ltv"], 0.6);
    assert!(close(&s["collateral_required_usd"], 500.0 / 0.6), "{safe}");
    assert!(
        close(&s["estimated_health_factor"], 1_800.0 / 700.0),
        "{safe}"
    );
    assert_eq!(s["warning"], Value::Null);
    // 1,000 more is beyond the 880 left (health 1.5 exactly: no health warning).
    let (_, beyond) = simulate("protocol=lend_a&asset=SOL&amount_usd=1000").await;
    let warning = beyond["simulation"]["warning"].as_str().unwrap();
    assert!(
        warning.contains("880.00 USD available of 1080.00"),
        "{warning}"
    );
    assert!(!warning.contains("health"), "{warning}");
    assert!(close(&beyond["simulation"]["estimated_health_factor"], 1.5));
    // 1,100 more would leave 1,800 / 1,300 = 1.38.
    let (_, risky) = simulate("amount_usd=1100").await;
    let warning = risky["simulation"]["warning"].as_str().unwrap();
    assert!(warning.contains("health factor would be 1.38"), "{warning}");
    // lend_b has no USDC reserve here.
    let (_, no_market) = simulate("protocol=lend_b&asset=usdc&amount_usd=10").await;
    assert_eq!(
        no_market["simulation"]["warning"],
        "lend_b lends no USDC on this cluster"
    );
    l.server.stop().await;
}

#[tokio::test]
async fn borrowing_tiers_bad_input_and_a_price_outage() {
    let server = TestServer::start(|c| c.sol_usd_price = Some(150.0)).await;
    let db = server.db.store.db();
    let loser = SigningWallet::new(31).address;
    // One losing backing: score 0 with a history, `initiate`: no borrowing.
    common::fixtures::settled(db, CREATOR, 1, "yes", &[(loser.as_str(), "no")]).await;
    let (status, initiate) = server.get(&format!("/v1/borrow/capacity/{loser}")).await;
    assert_eq!(status, StatusCode::OK, "{initiate}");
    assert_eq!(initiate["conviction_tier"], "initiate");
    assert_eq!(initiate["max_ltv"], 0.0);
    let (_, simulated) = server
        .get(&format!("/v1/borrow/simulate?wallet={loser}&amount_usd=10"))
        .await;
    assert_eq!(simulated["simulation"]["max_ltv"], 0.0);
    assert_eq!(
        simulated["simulation"]["collateral_required_usd"],
        Value::Null
    );
    assert!(simulated["simulation"]["warning"]
        .as_str()
        .unwrap()
        .starts_with("borrowing needs the ember tier"));

    // Holding a tier NFT, even a volcanic one, lifts it to ember and no further.
    tier_nfts::Model {
        mint: "NftMint111111111111111111111111111111111111".into(),
        tier: "volcanic".into(),
        collection: "Collection1111111111111111111111111111111111".into(),
        name: "Volcanic".into(),
        uri: "https://example.invalid/volcanic.json".into(),
        minted_by: None,
        mint_signature: None,
        minted_at: None,
        owner: Some(loser.clone()),
        owner_checked_at: 1_790_000_000,
    }
    .into_active_model()
    .insert(db)
    .await
    .unwrap();
    let (_, holder) = server.get(&format!("/v1/borrow/capacity/{loser}")).await;
    assert_eq!(holder["conviction_tier"], "ember", "{holder}");
    assert_eq!(holder["max_ltv"], 0.5);

    // Bad input: 400 in the envelope.
    let wallet = SigningWallet::new(32).address;
    for path in [
        "/v1/borrow/capacity/not-a-wallet".to_owned(),
        format!("/v1/borrow/simulate?wallet={wallet}"),
        "/v1/borrow/simulate?wallet=nope&amount_usd=10".to_owned(),
        format!("/v1/borrow/simulate?wallet={wallet}&amount_usd=0"),
        format!("/v1/borrow/simulate?wallet={wallet}&amount_usd=-5"),
        format!("/v1/borrow/simulate?wallet={wallet}&amount_usd=NaN"),
        format!("/v1/borrow/simulate?wallet={wallet}&amount_usd=inf"),
        format!("/v1/borrow/simulate?wallet={wallet}&amount_usd=1e30"),
        format!("/v1/borrow/simulate?wallet={wallet}&amount_usd=18446744073709551616"),
        format!("/v1/borrow/simulate?wallet={wallet}&amount_usd=ten"),
        format!("/v1/borrow/simulate?wallet={wallet}&amount_usd=10&protocol=lend_z"),
        format!("/v1/borrow/simulate?wallet={wallet}&amount_usd=10&asset=DOGE"),
    ] {
        let (status, body) = server.get(&path).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        assert_eq!(body["ok"], false, "{path}: {body}");
        assert!(body["error"].is_string(), "{path}: {body}");
    }
    // A venue that does not lend is not a lending venue (the schema lists lend_a and lend_b).
    let (status, body) = server
        .get(&format!(
            "/v1/borrow/simulate?wallet={wallet}&amount_usd=10&protocol=stake_b"
        ))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("lend_a, lend_b"),
        "{body}"
    );
    server.stop().await;

    // The price source down: capacity cannot be valued, 503.
    let server = TestServer::start(|c| {
        c.sol_usd_price = None;
        c.price_feed_url = "http://127.0.0.1:9".into();
    })
    .await;
    let (status, body) = server.get(&format!("/v1/borrow/capacity/{wallet}")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "price_unavailable");
    let (status, body) = server
        .get(&format!(
            "/v1/borrow/simulate?wallet={wallet}&amount_usd=10"
        ))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    server.stop().await;
}

#[tokio::test]
async fn the_borrow_terms_are_accepted_once_by_the_wallets_own_signature() {
    let server = TestServer::start(|_| {}).await;
    let wallet = SigningWallet::new(41);
    let other = SigningWallet::new(42);
    let now = server.clock.now();
    let statement = format!("narrative-market-service:borrow-terms:{}", wallet.address);
    let body = |signature: String, issued_at: i64| json!({"wallet": wallet.address, "signature": signature, "issued_at": issued_at});

    // Another wallet's signature of the same message does not accept for this one.
    let (status, refused) = server
        .post(
            "/v1/borrow/accept-terms",
            &body(other.sign_at(&statement, now), now),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{refused}");
    assert_eq!(refused["error"], "invalid_signature");
    // Nor does a signature that is not fresh.
    let (status, _) = server
        .post(
            "/v1/borrow/accept-terms",
            &body(wallet.sign_at(&statement, now - 3_600), now - 3_600),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // Nor the signature of another statement (the platform terms).
    let platform = format!("narrative-market-service:terms:1:{}", wallet.address);
    let (status, _) = server
        .post(
            "/v1/borrow/accept-terms",
            &body(wallet.sign_at(&platform, now), now),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let signed = body(wallet.sign_at(&statement, now), now);
    let (status, accepted) = server.post("/v1/borrow/accept-terms", &signed).await;
    assert_eq!(status, StatusCode::OK, "{accepted}");
    assert_eq!(accepted["wallet"], wallet.address.as_str());
    assert_eq!(accepted["borrow_terms_accepted"], true);
    // The same proof twice is a replay.
    let (status, replay) = server.post("/v1/borrow/accept-terms", &signed).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{replay}");
    // A fresh signature later answers the first acceptance.
    let later = now + 1;
    let (status, again) = server
        .post(
            "/v1/borrow/accept-terms",
            &body(wallet.sign_at(&statement, later), later),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["accepted_at"], accepted["accepted_at"]);
    server.stop().await;
}
