//! p0, the unified-margin integration, end to end over HTTP against solana-program-test with the
//! marginfi v2 double under marginfi's devnet id: a `core` wallet's first deposit creates its
//! margin account, a second adds to the same position, interest shows as yield, a withdrawal of
//! part and then of everything pays the SOL back and closes the position; the health read weighs
//! a debt taken elsewhere. What must be refused is refused with nothing written, and everything
//! answers 503 `p0_disabled` while the integration is off.

mod common;

use std::sync::Arc;

use common::bank::BankLedger;
use common::{chain, TestServer};
use integration_tests::harness::{HarnessOptions, SOL};
use integration_tests::venues::marginfi::{self, MarginfiGroup, ONE};
use narrative_store::entities::{p0_positions, prepared_transactions};
use reqwest::StatusCode;
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_signer::Signer;

const CREATOR: &str = "Creator1111111111111111111111111111111111";
const NATIVE_MINT: &str = "So11111111111111111111111111111111111111112";
/// A well-formed address no bank takes.
const STRANGER_MINT: &str = "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T";

struct Margin {
    server: TestServer,
    ledger: Arc<BankLedger>,
    group: MarginfiGroup,
    wallet: Keypair,
    stranger: Keypair,
}

impl Margin {
    async fn start() -> Margin {
        let options = HarnessOptions {
            marginfi: true,
            ..Default::default()
        };
        let (server, ledger) = chain::start_on_bank_with(options, |h, c| {
            let g = h.marginfi.expect("the double is installed");
            c.p0_enabled = true;
            c.p0_group = Some(g.group.to_string());
            c.p0_banks = vec![
                format!("SOL={}", g.sol_bank),
                format!("USDC={}", g.usdc_bank),
            ];
            c.usdc_mint = Some(g.usdc_mint.to_string());
        })
        .await;
        let (group, wallet, stranger) = {
            let h = ledger.harness.lock().await;
            (
                h.marginfi.unwrap(),
                h.wallets[0].insecure_clone(),
                h.wallets[1].insecure_clone(),
            )
        };
        Margin {
            server,
            ledger,
            group,
            wallet,
            stranger,
        }
    }

    fn address(&self) -> String {
        self.wallet.pubkey().to_string()
    }

    async fn lamports(&self, key: &narrative_sdk::Pubkey) -> u64 {
        self.ledger.harness.lock().await.lamports(*key).await
    }

    async fn raw(&self, key: narrative_sdk::Pubkey) -> solana_account::Account {
        self.ledger
            .harness
            .lock()
            .await
            .raw_account(key)
            .await
            .expect("account")
    }

    async fn rows(&self) -> (u64, u64) {
        let db = self.server.db.store.db();
        (
            prepared_transactions::Entity::find()
                .count(db)
                .await
                .unwrap(),
            p0_positions::Entity::find().count(db).await.unwrap(),
        )
    }

    async fn deposit_prepare(
        &self,
        wallet: &Keypair,
        mint: &str,
        amount: Value,
    ) -> (StatusCode, Value) {
        self.server
            .post(
                "/v1/defi/p0/deposit",
                &json!({"wallet_address": wallet.pubkey().to_string(), "asset_mint": mint, "amount_ui": amount}),
            )
            .await
    }

    /// Prepares, signs and sends every transaction, and confirms the last; the confirm's answer.
    async fn deposit(&self, sol: f64) -> (Value, Value) {
        let (status, prepared) = self
            .deposit_prepare(&self.wallet, NATIVE_MINT, json!(sol))
            .await;
        assert_eq!(status, StatusCode::OK, "{prepared}");
        let signature = self.send_all(&prepared).await;
        let (status, confirmed) = self
            .server
            .post(
                "/v1/defi/p0/deposit/confirm",
                &json!({"wallet_address": self.address(), "deposit_id": prepared["deposit_id"], "tx_signature": signature}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{confirmed}");
        (prepared, confirmed)
    }

    async fn send_all(&self, prepared: &Value) -> String {
        chain::sign_and_send_all(&self.ledger, prepared, &self.wallet)
            .await
            .pop()
            .unwrap()
    }

    async fn withdraw_prepare(&self, body: Value) -> (StatusCode, Value) {
        let mut body = body;
        body["wallet_address"] = json!(self.address());
        body["asset_mint"] = json!(NATIVE_MINT);
        self.server.post("/v1/defi/p0/withdraw", &body).await
    }

    /// The SOL bank's asset share value, as the program's accrual would move it.
    async fn set_sol_share_value(&self, value: u128) {
        let mut h = self.ledger.harness.lock().await;
        let mut bank = h.raw_account(self.group.sol_bank).await.unwrap();
        marginfi::set_asset_share_value(&mut bank.data, value);
        h.plant_account(self.group.sol_bank, bank);
    }
}

fn close(actual: &Value, expected: f64) -> bool {
    actual.as_f64().is_some_and(|v| (v - expected).abs() < 1e-6)
}

#[tokio::test]
async fn a_core_wallet_deposits_earns_and_withdraws_through_its_margin_account() {
    let m = Margin::start().await;
    let db = m.server.db.store.db();
    let wallet = m.address();
    // Thirty-four winning backings: score 600+, `core`.
    for t in 0..34 {
        common::fixtures::settled(db, CREATOR, t, "yes", &[(wallet.as_str(), "yes")]).await;
    }
    let account = marginfi::account_address(&m.group.group, &m.wallet.pubkey());

    // Below core: 403 with the policy code, nothing prepared.
    let before = m.rows().await;
    let (status, refused) = m.deposit_prepare(&m.stranger, NATIVE_MINT, json!(1)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["error"], "conviction_score_required");
    assert_eq!(refused["required_tier"], "core");
    assert_eq!(m.rows().await, before);

    // Bad input: 400, nothing prepared.
    for (mint, amount, code) in [
        (NATIVE_MINT, json!(0.001), "amount_below_minimum"),
        (NATIVE_MINT, json!(-1), "validation_error"),
        (NATIVE_MINT, json!("1.0000000001"), "validation_error"),
        (NATIVE_MINT, json!("1e30"), "validation_error"),
        (STRANGER_MINT, json!(1), "unsupported_asset"),
        ("not-a-mint", json!(1), "validation_error"),
    ] {
        let (status, refused) = m.deposit_prepare(&m.wallet, mint, amount.clone()).await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "{mint} {amount}: {refused}"
        );
        if code != "validation_error" {
            assert_eq!(refused["error"], code, "{refused}");
        }
    }
    // USDC the wallet does not hold.
    let (status, refused) = m
        .deposit_prepare(&m.wallet, &m.group.usdc_mint.to_string(), json!(10))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["error"], "insufficient_funds");
    assert_eq!(m.rows().await, before);

    // The first deposit creates the margin account in its own transaction.
    let vault_before = chain::token_balance(&m.ledger, m.group.sol_vault).await;
    let (prepared, confirmed) = m.deposit(10.0).await;
    assert_eq!(prepared["protocol"], "p0");
    assert_eq!(prepared["status"], "ready_to_sign");
    assert_eq!(prepared["needs_account_creation"], true);
    assert_eq!(prepared["transactions"], 2);
    assert_eq!(prepared["account_address"], account.to_string());
    assert_eq!(prepared["amount_base"], 10 * SOL);
    let position_id = confirmed["position"]["position_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(position_id, prepared["deposit_id"].as_str().unwrap());
    assert_eq!(confirmed["position"]["principal_base"], 10 * SOL);
    assert_eq!(confirmed["position"]["status"], "open");
    assert_eq!(
        chain::token_balance(&m.ledger, m.group.sol_vault).await,
        vault_before + 10 * SOL
    );
    assert_eq!(
        marginfi::asset_shares(&m.raw(account).await.data, &m.group.sol_bank),
        u128::from(10 * SOL) << 48
    );

    // A second deposit: one transaction, the same position.
    let (prepared, confirmed) = m.deposit(5.0).await;
    assert_eq!(prepared["needs_account_creation"], false);
    assert_eq!(prepared["transactions"], 1);
    assert_eq!(confirmed["position"]["position_id"], position_id);
    assert_eq!(confirmed["position"]["principal_base"], 15 * SOL);

    // A replayed confirm answers the position; another wallet's is refused.
    let deposit_signature = confirmed["tx_signature"].as_str().unwrap().to_owned();
    let (status, replay) = m
        .server
        .post(
            "/v1/defi/p0/deposit/confirm",
            &json!({"wallet_address": wallet, "deposit_id": prepared["deposit_id"], "tx_signature": deposit_signature}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{replay}");
    assert_eq!(replay["position"]["principal_base"], 15 * SOL);
    let (status, refused) = m
        .server
        .post(
            "/v1/defi/p0/deposit/confirm",
            &json!({"wallet_address": m.stranger.pubkey().to_string(), "deposit_id": prepared["deposit_id"], "tx_signature": deposit_signature}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");

    // The bank accrues 12.5 %: 16.875 SOL, 1.875 of it earned.
    m.set_sol_share_value(ONE * 9 / 8).await;
    let (status, positions) = m
        .server
        .get(&format!("/v1/defi/p0/positions/{wallet}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{positions}");
    let open = &positions["positions"][0];
    assert_eq!(positions["positions"].as_array().unwrap().len(), 1);
    assert_eq!(open["balance_base"], 16_875_000_000u64);
    assert_eq!(open["yield_earned_base"], 1_875_000_000u64);
    assert!(close(&open["supply_apr_pct"], 6.0), "{open}");

    // Health: 16.875 SOL at 150 USD, nothing owed.
    let (status, health) = m.server.get(&format!("/v1/defi/p0/health/{wallet}")).await;
    assert_eq!(status, StatusCode::OK, "{health}");
    assert_eq!(health["exists"], true);
    assert!(close(&health["assets_usd"], 2_531.25), "{health}");
    assert!(health["health_factor"].is_null());

    // The account summary and strategies are core's; the stranger is refused both.
    let (status, summary) = m.server.get(&format!("/v1/defi/p0/account/{wallet}")).await;
    assert_eq!(status, StatusCode::OK, "{summary}");
    assert_eq!(summary["tier"], "core");
    assert_eq!(summary["balances"][0]["asset"], "SOL");
    assert_eq!(summary["balances"][0]["asset_base"], 16_875_000_000u64);
    let stranger = m.stranger.pubkey().to_string();
    let (status, refused) = m
        .server
        .get(&format!("/v1/defi/p0/account/{stranger}"))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["error"], "conviction_score_required");
    let (status, strategies) = m.server.get("/v1/defi/p0/strategies").await;
    assert_eq!(status, StatusCode::OK, "{strategies}");
    let list = strategies["strategies"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["id"], "supply_sol");
    assert!(close(&list[0]["supply_apr_pct"], 6.0), "{strategies}");
    assert!(close(&list[1]["supply_apr_pct"], 8.0), "{strategies}");
    let (status, _) = m
        .server
        .get(&format!("/v1/defi/p0/strategies?wallet={stranger}"))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = m
        .server
        .get(&format!("/v1/defi/p0/strategies?wallet={wallet}"))
        .await;
    assert_eq!(status, StatusCode::OK);

    // The APY read takes p0's from its SOL bank, and lists it as available.
    let (status, apys) = m.server.get("/v1/defi/apys").await;
    assert_eq!(status, StatusCode::OK, "{apys}");
    assert!(close(&apys["apys"]["p0"], 6.0), "{apys}");
    assert_eq!(apys["sources"]["p0"]["source"], "ledger");
    assert_eq!(apys["protocols"]["p0"]["testnet_available"], true);

    // Withdrawal input: exactly one of amount_ui and withdraw_all, within the balance.
    for body in [
        json!({}),
        json!({"amount_ui": 1, "withdraw_all": true}),
        json!({"amount_ui": 0}),
        json!({"amount_ui": 17}),
    ] {
        let (status, refused) = m.withdraw_prepare(body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {refused}");
    }

    // Withdraw 5 SOL: paid out, the principal down to 10.
    let (status, prepared) = m.withdraw_prepare(json!({"amount_ui": 5})).await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(prepared["position_id"], position_id);
    assert_eq!(prepared["expected_amount_base"], 5 * SOL);
    let lamports = m.lamports(&m.wallet.pubkey()).await;
    let signature = m.send_all(&prepared).await;
    let paid = m.lamports(&m.wallet.pubkey()).await - lamports;
    assert!(paid > 5 * SOL - SOL / 100 && paid <= 5 * SOL, "{paid}");
    // Another landed transaction of the wallet's (a deposit of 1 SOL, not confirmed yet), a
    // spent signature, another wallet: refused, nothing recorded.
    let (status, other) = m.deposit_prepare(&m.wallet, NATIVE_MINT, json!(1)).await;
    assert_eq!(status, StatusCode::OK, "{other}");
    let other_signature = m.send_all(&other).await;
    let rows = m.rows().await;
    for (who, sig, code) in [
        (
            wallet.clone(),
            other_signature.clone(),
            StatusCode::BAD_REQUEST,
        ),
        (
            wallet.clone(),
            deposit_signature.clone(),
            StatusCode::CONFLICT,
        ),
        (stranger.clone(), signature.clone(), StatusCode::FORBIDDEN),
    ] {
        let (status, refused) = m
            .server
            .post(
                "/v1/defi/p0/withdraw/confirm",
                &json!({"wallet_address": who, "position_id": position_id, "withdrawal_id": prepared["withdrawal_id"], "tx_signature": sig}),
            )
            .await;
        assert_eq!(status, code, "{refused}");
    }
    assert_eq!(m.rows().await, rows);
    let row = p0_positions::Entity::find_by_id(position_id.as_str())
        .one(db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.principal_base, 15 * SOL as i64);
    let (status, confirmed) = m
        .server
        .post(
            "/v1/defi/p0/withdraw/confirm",
            &json!({"wallet_address": wallet, "position_id": position_id, "tx_signature": signature}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["position"]["principal_base"], 10 * SOL);
    assert_eq!(confirmed["position"]["status"], "open");
    // The 1 SOL deposit confirmed late: the principal 11 SOL.
    let (status, confirmed) = m
        .server
        .post(
            "/v1/defi/p0/deposit/confirm",
            &json!({"wallet_address": wallet, "deposit_id": other["deposit_id"], "tx_signature": other_signature}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["position"]["principal_base"], 11 * SOL);

    // Withdraw everything: 12.875 SOL (less a unit the late deposit's shares round off), the balance closed at the venue and the position closed.
    let (status, prepared) = m.withdraw_prepare(json!({"withdraw_all": true})).await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(prepared["withdraw_all"], true);
    let expected = prepared["expected_amount_base"].as_u64().unwrap();
    assert!(expected.abs_diff(12_875_000_000) <= 2, "{prepared}");
    let lamports = m.lamports(&m.wallet.pubkey()).await;
    let signature = m.send_all(&prepared).await;
    let paid = m.lamports(&m.wallet.pubkey()).await - lamports;
    assert!(paid > expected - SOL / 100 && paid <= expected, "{paid}");
    let (status, confirmed) = m
        .server
        .post(
            "/v1/defi/p0/withdraw/confirm",
            &json!({"wallet_address": wallet, "position_id": position_id, "tx_signature": signature}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["position"]["status"], "closed");
    assert_eq!(confirmed["position"]["principal_base"], 0);
    assert_eq!(
        marginfi::asset_shares(&m.raw(account).await.data, &m.group.sol_bank),
        0
    );
    let (_, positions) = m
        .server
        .get(&format!("/v1/defi/p0/positions/{wallet}"))
        .await;
    assert_eq!(positions["positions"], json!([]));
    let (status, refused) = m.withdraw_prepare(json!({"withdraw_all": true})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{refused}");
    m.server.stop().await;
}

#[tokio::test]
async fn health_weighs_a_debt_and_nothing_is_recorded_without_the_ledger() {
    let m = Margin::start().await;
    let db = m.server.db.store.db();
    let wallet = m.address();
    for t in 0..34 {
        common::fixtures::settled(db, CREATOR, t, "yes", &[(wallet.as_str(), "yes")]).await;
    }
    m.deposit(10.0).await;

    // A signature of a prepared deposit that was signed but never sent: 503, nothing recorded.
    let (status, prepared) = m.deposit_prepare(&m.wallet, NATIVE_MINT, json!(2)).await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    let signed = chain::sign(&prepared, &m.wallet);
    let (status, refused) = m
        .server
        .post(
            "/v1/defi/p0/deposit/confirm",
            &json!({"wallet_address": wallet, "deposit_id": prepared["deposit_id"], "tx_signature": signed.signatures[0].to_string()}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    let row = p0_positions::Entity::find().one(db).await.unwrap().unwrap();
    assert_eq!(row.principal_base, 10 * SOL as i64);

    // A debt of 1,000 USDC taken elsewhere: 10 SOL × 150 × 0.9 over 1,000 × 1.1 = 1.227, a
    // warning (below 1.50).
    let account = marginfi::account_address(&m.group.group, &m.wallet.pubkey());
    {
        let mut h = m.ledger.harness.lock().await;
        let mut raw = h.raw_account(account).await.unwrap();
        marginfi::set_liability(
            &mut raw.data,
            &m.group.usdc_bank,
            u128::from(1_000 * marginfi::USDC) << 48,
        );
        h.plant_account(account, raw);
    }
    let (status, health) = m.server.get(&format!("/v1/defi/p0/health/{wallet}")).await;
    assert_eq!(status, StatusCode::OK, "{health}");
    assert!(close(&health["liabilities_usd"], 1_000.0), "{health}");
    assert!(close(&health["weighted_assets_usd"], 1_350.0), "{health}");
    assert!(
        close(&health["weighted_liabilities_usd"], 1_100.0),
        "{health}"
    );
    let factor = health["health_factor"].as_f64().unwrap();
    assert!((factor - 1_350.0 / 1_100.0).abs() < 1e-9, "{health}");
    assert_eq!(health["level"], "warning");

    // With the node down: 503, and nothing prepared or recorded.
    let rows = m.rows().await;
    m.ledger.set_offline(true);
    let (status, refused) = m.deposit_prepare(&m.wallet, NATIVE_MINT, json!(1)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    let (status, refused) = m.withdraw_prepare(json!({"withdraw_all": true})).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    let (status, _) = m.server.get(&format!("/v1/defi/p0/health/{wallet}")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    m.ledger.set_offline(false);
    assert_eq!(m.rows().await, rows);
    m.server.stop().await;
}

#[tokio::test]
async fn every_p0_route_answers_p0_disabled_while_the_integration_is_off() {
    let server = TestServer::start(|_| {}).await;
    let wallet = "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T";
    let id = "00000000-0000-4000-8000-000000000000";
    let signature =
        "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW";
    for path in [
        format!("/v1/defi/p0/health/{wallet}"),
        format!("/v1/defi/p0/positions/{wallet}"),
        format!("/v1/defi/p0/account/{wallet}"),
        "/v1/defi/p0/strategies".to_owned(),
    ] {
        let (status, body) = server.get(&path).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{path}: {body}");
        assert_eq!(body["error"], "p0_disabled", "{path}");
    }
    for (path, body) in [
        (
            "/v1/defi/p0/deposit",
            json!({"wallet_address": wallet, "asset_mint": NATIVE_MINT, "amount_ui": 1}),
        ),
        (
            "/v1/defi/p0/deposit/confirm",
            json!({"wallet_address": wallet, "deposit_id": id, "tx_signature": signature}),
        ),
        (
            "/v1/defi/p0/withdraw",
            json!({"wallet_address": wallet, "asset_mint": NATIVE_MINT, "withdraw_all": true}),
        ),
        (
            "/v1/defi/p0/withdraw/confirm",
            json!({"wallet_address": wallet, "position_id": id, "tx_signature": signature}),
        ),
    ] {
        let (status, answer) = server.post(path, &body).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{path}: {answer}");
        assert_eq!(answer["error"], "p0_disabled", "{path}");
    }
    server.stop().await;
}
