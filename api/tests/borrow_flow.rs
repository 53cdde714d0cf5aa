//! Borrowing end to end over HTTP against solana-program-test, with the Kamino Lending double
//! (`lend_b`) under its real id: a flare wallet deposits SOL into its obligation through the
//! DeFi flow, accepts the borrow terms by signature, borrows against the deposit (the SOL really
//! lent out of the reserve), reads its position's debt and health from the obligation, repays
//! principal plus the interest accrued at the reserve's rate, and sees a borrow the lender
//! closed at the venue follow on its record with a notification. What must be refused is
//! refused with nothing written.

mod common;

use std::sync::Arc;

use common::bank::BankLedger;
use common::{chain, TestServer};
use integration_tests::harness::{HarnessOptions, SOL};
use integration_tests::venues::klend::{self, KaminoMarket};
use narrative_api::chain::ledger::Ledger;
use narrative_api::chain::venues::lend_b;
use narrative_api::clock::{Clock, ManualClock, SharedClock};
use narrative_api::domain::borrow::alerts;
use narrative_api::providers::prices::{PriceFeed, PriceQuote};
use narrative_api::Config;
use narrative_store::entities::{borrow_positions, prepared_transactions};
use reqwest::StatusCode;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_signer::Signer;

const CREATOR: &str = "Creator1111111111111111111111111111111111";

struct Borrower {
    server: TestServer,
    ledger: Arc<BankLedger>,
    clock: Arc<ManualClock>,
    kamino: KaminoMarket,
    wallet: Keypair,
    stranger: Keypair,
}

/// A SOL/USD price the test moves.
struct MovingPrice(std::sync::Mutex<f64>);

#[async_trait::async_trait]
impl PriceFeed for MovingPrice {
    async fn quote(&self) -> anyhow::Result<PriceQuote> {
        Ok(PriceQuote {
            sol_usd: *self.0.lock().unwrap(),
            source: "configured",
            read_at: None,
        })
    }
}

impl Borrower {
    async fn start() -> Borrower {
        Self::start_priced(Arc::new(MovingPrice(std::sync::Mutex::new(150.0)))).await
    }

    async fn start_priced(prices: Arc<MovingPrice>) -> Borrower {
        let clock = ManualClock::at_system_time();
        let shared: SharedClock = clock.clone();
        let options = HarnessOptions {
            klend: true,
            ..Default::default()
        };
        let (server, ledger) = chain::start_on_bank_priced(shared, prices, options, |h, c| {
            lend_b_on(&h.kamino.expect("the double is installed"), c);
            c.borrow_enabled = true;
        })
        .await;
        let (kamino, wallet, stranger) = {
            let h = ledger.harness.lock().await;
            (
                h.kamino.unwrap(),
                h.wallets[0].insecure_clone(),
                h.wallets[1].insecure_clone(),
            )
        };
        Borrower {
            server,
            ledger,
            clock,
            kamino,
            wallet,
            stranger,
        }
    }

    /// The recorded position `id`.
    async fn position(&self, id: &str) -> borrow_positions::Model {
        borrow_positions::Entity::find_by_id(id)
            .one(self.server.db.store.db())
            .await
            .unwrap()
            .expect("a recorded position")
    }

    fn address(&self) -> String {
        self.wallet.pubkey().to_string()
    }

    async fn lamports(&self, key: &narrative_sdk::Pubkey) -> u64 {
        self.ledger.harness.lock().await.lamports(*key).await
    }

    async fn token_balance(&self, account: narrative_sdk::Pubkey) -> u64 {
        chain::token_balance(&self.ledger, account).await
    }

    /// Signs every transaction of a prepare answer in order and sends it; the last signature.
    async fn sign_and_send(&self, prepared: &Value, wallet: &Keypair) -> String {
        chain::sign_and_send_all(&self.ledger, prepared, wallet)
            .await
            .pop()
            .expect("one transaction at least")
    }

    /// Deposits `sol` SOL into lend_b through the DeFi flow.
    async fn deposit(&self, sol: impl Into<f64>) -> String {
        let sol: f64 = sol.into();
        let (status, prepared) = self
            .server
            .post(
                "/v1/defi/deposit/prepare",
                &json!({"wallet": self.address(), "token_symbol": "SOL", "amount": sol, "protocol": "lend_b"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{prepared}");
        let signature = self.sign_and_send(&prepared, &self.wallet).await;
        let (status, confirmed) = self
            .server
            .post(
                "/v1/defi/deposit/confirm",
                &json!({"backing_id": prepared["backing_id"], "tx_signature": signature, "wallet": self.address()}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{confirmed}");
        signature
    }

    /// Seven winning backings make the wallet `flare` (60 %, lend_b open to it); it deposits
    /// `sol` SOL into lend_b.
    async fn flare_with_deposit(&self, sol: u32) {
        let wallet = self.address();
        for t in 0..7 {
            common::fixtures::settled(
                self.server.db.store.db(),
                CREATOR,
                t,
                "yes",
                &[(wallet.as_str(), "yes")],
            )
            .await;
        }
        self.deposit(sol).await;
    }

    /// A `flare` wallet with 10 SOL deposited into lend_b and the borrow terms accepted: where
    /// most borrow tests start.
    async fn ready() -> Borrower {
        let b = Borrower::start().await;
        b.flare_with_deposit(10).await;
        b.accept_terms().await;
        b
    }

    /// A borrow of `amount_usd` of SOL prepared (200), not signed: its answer.
    async fn prepared(&self, amount_usd: f64) -> Value {
        let (status, prepared) = self.prepare(amount_usd).await;
        assert_eq!(status, StatusCode::OK, "{prepared}");
        prepared
    }

    async fn accept_terms(&self) {
        let now = self.clock.now();
        let message = format!(
            "narrative-market-service:borrow-terms:{}:issued-at:{now}",
            self.address()
        );
        let signature = self.wallet.sign_message(message.as_bytes()).to_string();
        let (status, body) = self
            .server
            .post(
                "/v1/borrow/accept-terms",
                &json!({"wallet": self.address(), "signature": signature, "issued_at": now}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    /// Prepares, signs, sends and confirms a borrow of `amount_usd` of SOL; its id.
    async fn borrow(&self, amount_usd: f64) -> String {
        self.borrow_asset("SOL", amount_usd).await
    }

    async fn borrow_asset(&self, asset: &str, amount_usd: f64) -> String {
        let (status, prepared) = self.prepare_asset(asset, amount_usd).await;
        assert_eq!(status, StatusCode::OK, "{prepared}");
        let signature = self.sign_and_send(&prepared, &self.wallet).await;
        let borrow_id = prepared["borrow_id"].as_str().unwrap().to_owned();
        let (status, confirmed) = self
            .server
            .post(
                "/v1/borrow/confirm",
                &json!({"wallet": self.address(), "borrow_id": borrow_id, "tx_signature": signature}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{confirmed}");
        borrow_id
    }

    async fn prepare(&self, amount_usd: f64) -> (StatusCode, Value) {
        self.prepare_asset("SOL", amount_usd).await
    }

    async fn prepare_asset(&self, asset: &str, amount_usd: f64) -> (StatusCode, Value) {
        self.server
            .post(
                "/v1/borrow/prepare",
                &json!({"wallet": self.address(), "protocol": "lend_b", "borrow_asset": asset, "amount_usd": amount_usd}),
            )
            .await
    }

    /// Moves SOL's price: the service's price feed, and the reserve's market price as its
    /// oracles would.
    async fn set_sol_price(&self, prices: &MovingPrice, usd: f64) {
        *prices.0.lock().unwrap() = usd;
        let mut h = self.ledger.harness.lock().await;
        let mut reserve = h.raw_account(self.kamino.sol_reserve).await.unwrap();
        klend::set_price(&mut reserve.data, (usd * (1u128 << 60) as f64) as u128);
        h.plant_account(self.kamino.sol_reserve, reserve);
    }

    /// Edits the SOL reserve's data as its market's admin (or its borrowers) would.
    async fn edit_reserve(&self, edit: impl FnOnce(&mut [u8])) {
        let mut h = self.ledger.harness.lock().await;
        let mut reserve = h.raw_account(self.kamino.sol_reserve).await.unwrap();
        edit(&mut reserve.data);
        h.plant_account(self.kamino.sol_reserve, reserve);
    }

    /// Edits the wallet's obligation's data as the wallet could in Kamino's app.
    async fn edit_obligation(&self, edit: impl FnOnce(&mut [u8])) {
        let key = klend::vanilla_obligation(&self.wallet.pubkey(), &self.kamino.market);
        let mut h = self.ledger.harness.lock().await;
        let mut obligation = h.raw_account(key).await.unwrap();
        edit(&mut obligation.data);
        h.plant_account(key, obligation);
    }

    /// Edits the lending market's data as its owner would.
    async fn edit_market(&self, edit: impl FnOnce(&mut [u8])) {
        let mut h = self.ledger.harness.lock().await;
        let mut market = h.raw_account(self.kamino.market).await.unwrap();
        edit(&mut market.data);
        h.plant_account(self.kamino.market, market);
    }

    /// Signs a borrow prepared before the reserve changed and sees it fail at the borrow
    /// instruction (the double refuses what Kamino would), with no debt taken.
    async fn fails_at_the_borrow(&self, prepared: &Value) {
        let borrow_at = chain::anchor_instruction_at(
            &prepared["transaction"],
            "borrow_obligation_liquidity_v2",
        );
        assert_eq!(
            self.ledger
                .process(chain::sign(prepared, &self.wallet))
                .await,
            Err(format!("InstructionError({borrow_at}, InvalidArgument)")),
            "the borrow instruction fails"
        );
        assert_eq!(self.debt().await, 0);
    }

    /// A SOL borrow of `amount_usd` refused before signing as past one of the reserve's
    /// limits (the one `named` in the message), with `room` base units left; nothing stored.
    async fn refused_above_limit(&self, amount_usd: f64, room: u64, named: &str) {
        let rows = self.prepared_rows().await;
        let (status, body) = self.prepare(amount_usd).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"], "amount_above_borrow_limit", "{body}");
        assert_eq!(body["room_base"], room, "{body}");
        assert!(body["message"].as_str().unwrap().contains(named), "{body}");
        assert_eq!(self.prepared_rows().await, rows);
    }

    async fn reserve_data(&self) -> Vec<u8> {
        let mut h = self.ledger.harness.lock().await;
        h.raw_account(self.kamino.sol_reserve).await.unwrap().data
    }

    async fn prepared_rows(&self) -> u64 {
        prepared_transactions::Entity::find()
            .count(self.server.db.store.db())
            .await
            .unwrap()
    }

    async fn debt(&self) -> u64 {
        let obligation = klend::vanilla_obligation(&self.wallet.pubkey(), &self.kamino.market);
        let raw = self
            .ledger
            .harness
            .lock()
            .await
            .raw_account(obligation)
            .await
            .unwrap();
        klend::borrowed(&raw.data, &self.kamino.sol_reserve)
    }

    /// Moves the bank `slots` ahead and refreshes the SOL reserve, so interest accrues.
    async fn accrue(&self, slots: u64) {
        chain::accrue_kamino(&self.ledger, self.kamino.sol_reserve, slots).await
    }
}

fn close(actual: &Value, expected: f64, tolerance: f64) -> bool {
    actual
        .as_f64()
        .is_some_and(|v| (v - expected).abs() <= tolerance)
}

#[tokio::test]
async fn a_flare_wallet_borrows_against_its_kamino_deposit_and_repays_with_interest() {
    let b = Borrower::start().await;
    let db = b.server.db.store.db();
    let wallet = b.address();
    b.flare_with_deposit(10).await;

    // Before the terms: 403, nothing prepared.
    let rows = b.prepared_rows().await;
    let (status, refused) = b.prepare(300.0).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["error"], "terms_not_accepted");
    assert_eq!(b.prepared_rows().await, rows);
    b.accept_terms().await;

    // 10 SOL at 150 USD at 60 %: 900 USD of capacity; 1,000 is beyond it.
    let (status, refused) = b.prepare(1_000.0).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["error"], "borrow_capacity_exceeded");
    assert!(close(&refused["available_usd"], 900.0, 1e-3), "{refused}");
    // This test configures no lend_a reserve (lend_a's borrowing is borrow_lend_a.rs's);
    // stake_b is no lender.
    let borrow_from = |venue: &str| {
        let body =
            json!({"wallet": wallet, "protocol": venue, "borrow_asset": "SOL", "amount_usd": 10});
        let server = &b.server;
        async move { server.post("/v1/borrow/prepare", &body).await }
    };
    let (status, refused) = borrow_from("lend_a").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    assert_eq!(refused["error"], "venue_not_configured");
    let (status, refused) = borrow_from("stake_b").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("lend_a, lend_b"),
        "{refused}"
    );
    assert_eq!(b.prepared_rows().await, rows);

    // 300 USD of SOL: 2 SOL, against 1,500 USD of collateral.
    let prepared = b.prepared(300.0).await;
    assert_eq!(prepared["status"], "ready_to_confirm");
    assert_eq!(prepared["amount_base"], 2 * SOL);
    assert_eq!(prepared["max_ltv"], 0.6);
    // The reserve's rate with the spread: 1,000 SOL of 2,010 lent out after the deposit, 9.95 %
    // on the 0 → 20 % curve, plus 0.50.
    let (_, rates) = b.server.get("/v1/borrow/rates").await;
    assert_eq!(
        prepared["borrow_apy"],
        rates["rates"]["lend_b"]["with_spread"]["sol"]
    );
    assert!(
        close(
            &prepared["borrow_apy"],
            0.5 + 20.0 * 1_000.0 / 2_010.0,
            1e-6
        ),
        "{prepared}"
    );
    assert!(close(&prepared["collateral_required_usd"], 500.0, 1e-6));
    assert!(
        close(&prepared["estimated_health_factor"], 5.0, 1e-3),
        "{prepared}"
    );
    let borrow_id = prepared["borrow_id"].as_str().unwrap().to_owned();

    // Signed but never sent: not on the ledger, so nothing is recorded.
    let unsent = chain::sign(&prepared, &b.wallet).signatures[0].to_string();
    let (status, pending) = b
        .server
        .post(
            "/v1/borrow/confirm",
            &json!({"wallet": wallet, "borrow_id": borrow_id, "tx_signature": unsent}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{pending}");
    assert_eq!(pending["error"], "transaction_pending");
    assert_eq!(
        borrow_positions::Entity::find()
            .filter(borrow_positions::Column::Wallet.eq(wallet.as_str()))
            .count(db)
            .await
            .unwrap(),
        0
    );

    // The wallet signs and sends it: 2 SOL lent out of the reserve to the wallet.
    let supply_before = b.token_balance(b.kamino.liquidity_supply).await;
    let before = b.lamports(&b.wallet.pubkey()).await;
    let signature = b.sign_and_send(&prepared, &b.wallet).await;
    let gained = b.lamports(&b.wallet.pubkey()).await - before;
    assert!((2 * SOL - SOL / 100..2 * SOL).contains(&gained), "{gained}");
    let lent = supply_before - b.token_balance(b.kamino.liquidity_supply).await;
    assert_eq!(lent, 2 * SOL);
    assert_eq!(b.debt().await, 2 * SOL);

    // Confirms that must be refused are, with nothing recorded.
    let confirm = |who: &Keypair, sig: &str| json!({"wallet": who.pubkey().to_string(), "borrow_id": borrow_id, "tx_signature": sig, "protocol": "lend_b"});
    let (status, refused) = b
        .server
        .post("/v1/borrow/confirm", &confirm(&b.stranger, &signature))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["error"], "not_position_owner");
    // Another landed transaction of the wallet's (a deposit, not confirmed yet): not the
    // prepared borrow.
    let (_, deposit) = b
        .server
        .post(
            "/v1/defi/deposit/prepare",
            &json!({"wallet": wallet, "token_symbol": "SOL", "amount": 1, "protocol": "lend_b"}),
        )
        .await;
    let deposit_signature = b.sign_and_send(&deposit, &b.wallet).await;
    let (status, refused) = b
        .server
        .post(
            "/v1/borrow/confirm",
            &confirm(&b.wallet, &deposit_signature),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["error"], "transaction_mismatch");
    let (status, _) = b
        .server
        .post(
            "/v1/defi/deposit/confirm",
            &json!({"backing_id": deposit["backing_id"], "tx_signature": deposit_signature, "wallet": wallet}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    // Once it confirmed the deposit, the signature is spent.
    let (status, refused) = b
        .server
        .post(
            "/v1/borrow/confirm",
            &confirm(&b.wallet, &deposit_signature),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert_eq!(refused["error"], "signature_already_used");
    let mut restated = confirm(&b.wallet, &signature);
    restated["borrow_asset"] = json!("USDC");
    let (status, refused) = b.server.post("/v1/borrow/confirm", &restated).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    let positions = || {
        borrow_positions::Entity::find()
            .filter(borrow_positions::Column::Wallet.eq(wallet.as_str()))
            .count(db)
    };
    assert_eq!(positions().await.unwrap(), 0);
    // Landed and not confirmed yet, the debt is the venue's alone: a second borrow of the token
    // is refused by what the venue holds, as after the confirm.
    let (status, refused) = b.prepare(10.0).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert_eq!(refused["error"], "borrow_open");

    let (status, confirmed) = b
        .server
        .post("/v1/borrow/confirm", &confirm(&b.wallet, &signature))
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["status"], "open");
    assert_eq!(confirmed["position"]["amount_base"], 2 * SOL);
    assert_eq!(confirmed["position"]["amount_usd"], 300.0);
    assert_eq!(confirmed["position"]["tier"], "flare");
    let (status, replay) = b
        .server
        .post("/v1/borrow/confirm", &confirm(&b.wallet, &signature))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(replay, confirmed);
    assert_eq!(positions().await.unwrap(), 1);

    // One debt per token at the venue: a second SOL borrow waits for the repayment.
    let (status, refused) = b.prepare(10.0).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert_eq!(refused["error"], "borrow_open");
    let (_, capacity) = b.server.get(&format!("/v1/borrow/capacity/{wallet}")).await;
    assert_eq!(capacity["open_positions"], 1);
    assert!(
        close(&capacity["total_borrowed_usd"], 300.0, 1e-9),
        "{capacity}"
    );

    // Health: 11 SOL of collateral over 2 owed, from the obligation.
    let (status, health) = b.server.get(&format!("/v1/borrow/health/{wallet}")).await;
    assert_eq!(status, StatusCode::OK, "{health}");
    let h = &health["positions"][0];
    assert!(close(&h["health_factor"], 5.5, 0.01), "{health}");
    assert!(close(&h["debt_usd"], 300.0, 1e-6), "{health}");
    assert_eq!(h["level"], Value::Null);
    assert_eq!(health["lowest_health_factor"], h["health_factor"]);

    // A year of slots at the reserve's ~10 % borrow rate: the debt grows.
    b.accrue(klend::SLOTS_PER_YEAR as u64).await;
    let (_, open) = b
        .server
        .get(&format!("/v1/borrow/positions/{wallet}"))
        .await;
    let p = &open["positions"][0];
    assert_eq!(p["position_id"], borrow_id.as_str());
    let owed = p["owed_base"].as_u64().unwrap();
    assert!(owed > 2 * SOL + SOL / 10, "~10 % a year: {open}");
    assert!(owed < 2 * SOL + SOL / 4, "{open}");
    assert!(close(
        &p["accrued_interest"],
        p["owed"].as_f64().unwrap() - 2.0,
        1e-9
    ));

    // The reserve counts the borrow against what it lends outside elevation groups.
    assert_eq!(
        klend::borrowed_outside_groups(&b.reserve_data().await),
        2 * SOL
    );

    // The deposit is the borrow's collateral: its withdrawal is refused until the repayment,
    // and nothing is stored.
    let (_, allocation) = b.server.get(&format!("/v1/defi/allocation/{wallet}")).await;
    let backing = allocation["positions"][0]["backing_id"].clone();
    let withdrawal = json!({"backing_id": backing, "wallet": wallet});
    let rows = b.prepared_rows().await;
    let (status, refused) = b
        .server
        .post("/v1/defi/withdrawal/prepare", &withdrawal)
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert_eq!(refused["error"], "collateral_pledged", "{refused}");
    assert_eq!(b.prepared_rows().await, rows);

    // Only the position's wallet repays it.
    let repay_body =
        |who: &Keypair| json!({"wallet": who.pubkey().to_string(), "position_id": borrow_id});
    let (status, refused) = b
        .server
        .post("/v1/borrow/repay/prepare", &repay_body(&b.stranger))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    let (status, repay) = b
        .server
        .post("/v1/borrow/repay/prepare", &repay_body(&b.wallet))
        .await;
    assert_eq!(status, StatusCode::OK, "{repay}");
    assert_eq!(repay["principal_base"], 2 * SOL);
    assert_eq!(repay["total_repay_base"], owed);
    assert_eq!(repay["accrued_interest_base"], owed - 2 * SOL);
    let before = b.lamports(&b.wallet.pubkey()).await;
    let repaid = b.sign_and_send(&repay, &b.wallet).await;
    let paid = before - b.lamports(&b.wallet.pubkey()).await;
    assert!(
        (owed..owed + SOL / 100).contains(&paid),
        "{paid} for {owed}"
    );
    assert_eq!(b.debt().await, 0, "the debt left the obligation");
    assert_eq!(klend::borrowed_outside_groups(&b.reserve_data().await), 0);
    let repay_id = repay["repay_id"].as_str().unwrap();
    let confirm_repay = json!({"wallet": wallet, "position_id": borrow_id, "repay_id": repay_id, "tx_signature": repaid});
    let (status, closed) = b
        .server
        .post("/v1/borrow/repay/confirm", &confirm_repay)
        .await;
    assert_eq!(status, StatusCode::OK, "{closed}");
    assert_eq!(closed["status"], "repaid");
    assert_eq!(closed["position"]["repay_signature"], repaid.as_str());
    // Repaid, the deposit comes out.
    let (status, prepared) = b
        .server
        .post("/v1/defi/withdrawal/prepare", &withdrawal)
        .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    let (_, again) = b
        .server
        .post("/v1/borrow/repay/confirm", &confirm_repay)
        .await;
    assert_eq!(again, closed);
    let (_, none) = b
        .server
        .get(&format!("/v1/borrow/positions/{wallet}"))
        .await;
    assert_eq!(none["positions"], json!([]));
    let (status, refused) = b
        .server
        .post("/v1/borrow/repay/prepare", &repay_body(&b.wallet))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert_eq!(refused["error"], "position_closed");

    // With the node down, a prepare is 503 and writes nothing.
    let rows = b.prepared_rows().await;
    b.ledger.set_offline(true);
    let (status, _) = b.prepare(100.0).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    b.ledger.set_offline(false);
    assert_eq!(b.prepared_rows().await, rows);

    // A borrow repaid at the venue, not through the service: the record follows, once, and
    // the wallet hears of it.
    let second = b.borrow(150.0).await;
    let (_, repay) = b
        .server
        .post(
            "/v1/borrow/repay/prepare",
            &json!({"wallet": wallet, "position_id": second}),
        )
        .await;
    b.sign_and_send(&repay, &b.wallet).await;
    let (_, health) = b.server.get(&format!("/v1/borrow/health/{wallet}")).await;
    assert_eq!(health["positions"], json!([]), "{health}");
    let row = b.position(&second).await;
    assert_eq!(row.status, "closed_outside");
    let (_, feed) = b
        .server
        .get(&format!("/v1/notifications/{wallet}?limit=200"))
        .await;
    let closed: Vec<&Value> = feed["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["type"] == "borrow_position_closed")
        .collect();
    assert_eq!(closed.len(), 1, "{feed}");
    assert_eq!(closed[0]["data"]["position_id"], second.as_str());
    b.server.get(&format!("/v1/borrow/health/{wallet}")).await;
    let (_, feed) = b
        .server
        .get(&format!("/v1/notifications/{wallet}?limit=200"))
        .await;
    assert_eq!(
        feed["notifications"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["type"] == "borrow_position_closed")
            .count(),
        1
    );
    b.server.stop().await;
}

#[tokio::test]
async fn an_ember_wallet_may_not_borrow_from_lend_b_and_borrowing_can_be_off() {
    let b = Borrower::start().await;
    b.deposit(5).await;
    b.accept_terms().await;
    // No resolved backing: the zeroed `ember` profile, lend_a only, and no fast actions.
    let (status, refused) = b.prepare(50.0).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["error"], "flare_required");
    let (status, refused) = b
        .server
        .post(
            "/v1/borrow/fast-action",
            &json!({"wallet": b.address(), "action": "safe", "protocol": "lend_b", "borrow_asset": "SOL"}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["error"], "flare_required");
    b.server.stop().await;

    // Off by default: 503 before anything else is looked at.
    let server = TestServer::start(|_| {}).await;
    let (status, refused) = server
        .post(
            "/v1/borrow/prepare",
            &json!({"wallet": "11111111111111111111111111111112", "protocol": "lend_b", "borrow_asset": "SOL", "amount_usd": 50}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    assert_eq!(refused["error"], "borrow_disabled");
    // Bad amounts are refused as bad input first.
    for amount in ["0", "-1", "1e30", "18446744073709551616"] {
        let body = format!(
            r#"{{"wallet": "11111111111111111111111111111112", "protocol": "lend_b", "borrow_asset": "SOL", "amount_usd": {amount}}}"#
        );
        let response = server
            .http
            .post(server.url("/v1/borrow/prepare"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{amount}");
    }
    server.stop().await;
}

/// A node behind the slot a borrow landed in (one of several behind a load balancer) shows the
/// wallet's obligation as it was before the borrow, with no debt: that read does not close the
/// position (503 to retry, nothing written, no notice), and the same obligation read at the
/// borrow's own slot or later does.
#[tokio::test]
async fn a_node_behind_the_borrow_does_not_close_it() {
    let b = Borrower::ready().await;
    let wallet = b.address();
    let obligation = lend_b::vanilla_obligation(&b.wallet.pubkey(), &b.kamino.market);
    let (_, before) = b.ledger.accounts(&[obligation]).await.unwrap();
    assert!(before[0].is_some(), "the deposit made the obligation");

    let borrow_id = b.borrow(300.0).await;
    let row = b.position(&borrow_id).await;
    let landed = b
        .ledger
        .transaction(&row.borrow_signature.parse().unwrap())
        .await
        .unwrap()
        .unwrap()
        .slot;
    assert_eq!(row.landed_slot, Some(i64::try_from(landed).unwrap()));

    let then = vec![(obligation, before[0].clone())];
    b.ledger.fall_behind(landed - 1, then.clone());
    for path in ["positions", "health"] {
        let (status, behind) = b.server.get(&format!("/v1/borrow/{path}/{wallet}")).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{path}: {behind}");
        assert_eq!(behind["error"], "ledger_unavailable");
    }
    let still = b.position(&borrow_id).await;
    assert_eq!(still.status, "open");
    assert!(notices(&b.server, &wallet, "borrow_position_closed")
        .await
        .is_empty());

    b.ledger.catch_up();
    let (status, open) = b
        .server
        .get(&format!("/v1/borrow/positions/{wallet}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{open}");
    assert_eq!(
        open["positions"][0]["position_id"],
        borrow_id.as_str(),
        "{open}"
    );

    // From the landed slot on, no debt is believed: the position is closed at the venue.
    b.ledger.fall_behind(landed, then);
    let (status, none) = b
        .server
        .get(&format!("/v1/borrow/positions/{wallet}"))
        .await;
    assert_eq!(status, StatusCode::OK, "{none}");
    assert_eq!(none["positions"], json!([]));
    let closed = b.position(&borrow_id).await;
    assert_eq!(closed.status, "closed_outside");
    assert_eq!(
        notices(&b.server, &wallet, "borrow_position_closed")
            .await
            .len(),
        1
    );
    b.server.stop().await;
}

/// `BORROW_ENABLED` and the terms gate the prepare: a borrow that landed is a debt at the venue,
/// so a process of the deployment started with borrowing off still records it (and watches its
/// health), while it prepares no new one.
#[tokio::test]
async fn a_borrow_that_landed_is_recorded_after_borrowing_is_switched_off() {
    let b = Borrower::ready().await;
    let prepared = b.prepared(300.0).await;
    let signature = b.sign_and_send(&prepared, &b.wallet).await;
    let providers = chain::bank_providers(
        b.clock.clone(),
        Arc::new(MovingPrice(std::sync::Mutex::new(150.0))),
        b.ledger.clone(),
    );
    let (beside, stop) = b
        .server
        .start_beside_on(providers, |c| {
            c.confirm_wait_ms = 300;
            lend_b_on(&b.kamino, c);
            c.borrow_enabled = false;
        })
        .await;
    let http = reqwest::Client::new();
    let post = |path: &str, body: Value| {
        let request = http.post(format!("{beside}{path}")).json(&body);
        async move {
            let response = request.send().await.unwrap();
            (response.status(), response.json::<Value>().await.unwrap())
        }
    };
    let (status, refused) = post(
        "/v1/borrow/prepare",
        json!({"wallet": b.address(), "protocol": "lend_b", "borrow_asset": "SOL", "amount_usd": 10}),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    assert_eq!(refused["error"], "borrow_disabled");
    let borrow_id = prepared["borrow_id"].as_str().unwrap();
    let (status, confirmed) = post(
        "/v1/borrow/confirm",
        json!({"wallet": b.address(), "borrow_id": borrow_id, "tx_signature": signature}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    let row = b.position(borrow_id).await;
    assert_eq!(row.status, "open");
    assert_eq!(row.amount_base, i64::try_from(2 * SOL).unwrap());
    stop.send(()).ok();
    b.server.stop().await;
}

/// Configures lend_b on the Kamino double `kamino`.
fn lend_b_on(kamino: &KaminoMarket, c: &mut Config) {
    c.lend_b_market = Some(kamino.market.to_string());
    c.lend_b_reserves = vec![
        format!("SOL={}", kamino.sol_reserve),
        format!("USDC={}", kamino.usdc_reserve),
    ];
    c.usdc_mint = Some(kamino.usdc_mint.to_string());
}

/// The wallet's notifications of `kind`.
async fn notices(server: &TestServer, wallet: &str, kind: &str) -> Vec<Value> {
    let (_, feed) = server
        .get(&format!("/v1/notifications/{wallet}?limit=200"))
        .await;
    feed["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["type"] == kind)
        .cloned()
        .collect()
}

#[tokio::test]
async fn the_health_job_alerts_once_per_downward_crossing_and_rearms_on_recovery() {
    let price = Arc::new(MovingPrice(std::sync::Mutex::new(150.0)));
    let b = Borrower::start_priced(price.clone()).await;
    let db = b.server.db.store.db();
    let wallet = b.address();
    // Forty-seven winning backings: score 910, `volcanic`, 75 %.
    for t in 0..47 {
        common::fixtures::settled(db, CREATOR, t, "yes", &[(wallet.as_str(), "yes")]).await;
    }
    b.deposit(10).await;
    b.accept_terms().await;
    // 1,100 of the 1,125 USD capacity: health 1,500 / 1,100 = 1.36, a warning at once.
    let id = b.borrow(1_100.0).await;
    let row = || async { b.position(&id).await };
    let read_at = |at: i64| {
        let row = &row;
        async move { row().await.health_checked_at == Some(at) }
    };

    // The interval passes: the job reads the loan and alerts, once.
    b.clock.advance(alerts::CHECK_SECS);
    let now = b.clock.now();
    common::eventually("the job to read the loan", || read_at(now)).await;
    let checked = row().await;
    assert_eq!(checked.alert_level.as_deref(), Some("warning"));
    assert!((checked.last_health.unwrap() - 1_500.0 / 1_100.0).abs() < 0.01);
    let warnings = notices(&b.server, &wallet, "borrow_health_warning").await;
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0]["data"]["position_id"], id.as_str());
    assert_eq!(warnings[0]["data"]["level"], "warning");

    // A 1.3 % price move a minute later is read at once; the level holds, nothing repeats.
    *price.0.lock().unwrap() = 152.0;
    b.clock.advance(alerts::PRICE_CHECK_SECS);
    let now = b.clock.now();
    common::eventually("a reading on the price move", || read_at(now)).await;
    assert_eq!(
        notices(&b.server, &wallet, "borrow_health_warning")
            .await
            .len(),
        1
    );

    // Four years of interest at the reserve's rate: below 1.20, urgent.
    b.accrue(4 * klend::SLOTS_PER_YEAR as u64).await;
    b.clock.advance(alerts::CHECK_SECS);
    let now = b.clock.now();
    common::eventually("the urgent reading", || read_at(now)).await;
    let urgent = row().await;
    assert_eq!(urgent.alert_level.as_deref(), Some("urgent"), "{urgent:?}");
    assert!(urgent.last_health.unwrap() < 1.2);
    assert_eq!(
        notices(&b.server, &wallet, "borrow_health_urgent")
            .await
            .len(),
        1
    );

    // More collateral lifts it back into warning: no alert, and urgent is armed again.
    let (_, health) = b.server.get(&format!("/v1/borrow/health/{wallet}")).await;
    let p = &health["positions"][0];
    let (collateral, debt) = (
        p["collateral_usd"].as_f64().unwrap(),
        p["debt_usd"].as_f64().unwrap(),
    );
    let more = ((1.35 * debt - collateral) / 152.0 * 1_000.0).ceil() / 1_000.0;
    b.deposit(more).await;
    b.clock.advance(alerts::CHECK_SECS);
    let now = b.clock.now();
    common::eventually("the recovered reading", || read_at(now)).await;
    assert_eq!(row().await.alert_level.as_deref(), Some("warning"));
    assert_eq!(
        notices(&b.server, &wallet, "borrow_health_warning")
            .await
            .len(),
        1
    );

    // Falling through 1.20 again alerts again.
    b.accrue(6 * klend::SLOTS_PER_YEAR as u64).await;
    b.clock.advance(alerts::CHECK_SECS);
    let now = b.clock.now();
    common::eventually("the second urgent reading", || read_at(now)).await;
    let again = row().await;
    assert!(
        matches!(again.alert_level.as_deref(), Some("urgent" | "critical")),
        "{again:?}"
    );
    let severe = notices(&b.server, &wallet, "borrow_health_urgent")
        .await
        .len()
        + notices(&b.server, &wallet, "borrow_health_critical")
            .await
            .len();
    assert_eq!(severe, 2, "one per downward crossing");
    b.server.stop().await;
}

#[tokio::test]
async fn a_fast_action_borrows_its_share_of_the_max_ltv() {
    let b = Borrower::ready().await;
    let wallet = b.address();
    let fast = |action: &str, extra: Value| {
        let mut body = json!({"wallet": wallet, "action": action});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let server = &b.server;
        async move { server.post("/v1/borrow/fast-action", &body).await }
    };
    // Defaults: lend_a and USDC; this test configures no lend_a reserve.
    let (status, refused) = fast("balanced", json!({})).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    assert_eq!(refused["error"], "venue_not_configured");
    let (status, refused) = fast("reckless", json!({"protocol": "lend_b"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");

    // `balanced` at flare: 50 % of 60 %, 30 % of 1,500 USD: 450 USD, 3 SOL.
    let (status, prepared) = fast(
        "balanced",
        json!({"protocol": "lend_b", "borrow_asset": "SOL"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(prepared["action"], "balanced");
    assert_eq!(prepared["max_ltv"], 0.6);
    assert!(close(&prepared["effective_ltv"], 0.3, 1e-12), "{prepared}");
    assert_eq!(prepared["ltv_pct_of_max"], 50.0);
    assert_eq!(prepared["status"], "ready_to_confirm");
    assert_eq!(prepared["amount_base"], 3 * SOL);
    let signature = b.sign_and_send(&prepared, &b.wallet).await;
    let (status, confirmed) = b
        .server
        .post(
            "/v1/borrow/confirm",
            &json!({"wallet": wallet, "borrow_id": prepared["borrow_id"], "tx_signature": signature}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(b.debt().await, 3 * SOL);
    // `instant_sol` borrows SOL by default: 40 % of 60 % is 360 USD, less the 450 owed: nothing.
    let (status, refused) = fast("instant_sol", json!({"protocol": "lend_b"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["error"], "borrow_capacity_exceeded");
    b.server.stop().await;
}

#[tokio::test]
async fn a_falling_sol_price_alerts_a_usdc_borrow_at_each_level_it_crosses() {
    let price = Arc::new(MovingPrice(std::sync::Mutex::new(150.0)));
    let b = Borrower::start_priced(price.clone()).await;
    let db = b.server.db.store.db();
    let wallet = b.address();
    for t in 0..47 {
        common::fixtures::settled(db, CREATOR, t, "yes", &[(wallet.as_str(), "yes")]).await;
    }
    b.deposit(10).await;
    b.accept_terms().await;
    // 1,100 USDC against 10 SOL at 150 USD: health 1.36.
    let id = b.borrow_asset("USDC", 1_100.0).await;
    let usdc = narrative_api::chain::holdings::associated_token_account(
        &b.wallet.pubkey(),
        &b.kamino.usdc_mint,
        &narrative_api::chain::holdings::TOKEN_PROGRAM,
    );
    assert_eq!(
        b.token_balance(usdc).await,
        1_100 * klend::USDC,
        "the USDC was lent"
    );
    let (_, health) = b.server.get(&format!("/v1/borrow/health/{wallet}")).await;
    assert!(
        close(
            &health["positions"][0]["health_factor"],
            1_500.0 / 1_100.0,
            0.001
        ),
        "{health}"
    );
    assert!(
        close(&health["positions"][0]["debt_usd"], 1_100.0, 1e-6),
        "{health}"
    );

    // The price moves to `usd`, and `secs` pass: the job's reading then.
    let level_after = |usd: f64, secs: i64| {
        let (b, price, id) = (&b, &price, &id);
        async move {
            b.set_sol_price(price, usd).await;
            b.clock.advance(secs);
            let now = b.clock.now();
            common::eventually_some("the job's reading", || async {
                let row = b.position(id).await;
                (row.health_checked_at == Some(now)).then_some(row)
            })
            .await
        }
    };
    let counts = || async {
        let mut counted = Vec::new();
        for kind in [
            "borrow_health_warning",
            "borrow_health_urgent",
            "borrow_health_critical",
        ] {
            counted.push(notices(&b.server, &wallet, kind).await.len());
        }
        counted
    };
    // Each price move of 1 % or more is read within the minute: 1,480 / 1,100 = 1.35.
    let minute = alerts::PRICE_CHECK_SECS;
    let row = level_after(148.0, minute).await;
    assert_eq!(row.alert_level.as_deref(), Some("warning"));
    assert_eq!(counts().await, vec![1, 0, 0]);
    // 1,300 / 1,100 = 1.18: urgent.
    let row = level_after(130.0, minute).await;
    assert_eq!(row.alert_level.as_deref(), Some("urgent"));
    assert!(close(&json!(row.last_health), 1_300.0 / 1_100.0, 0.001));
    assert_eq!(counts().await, vec![1, 1, 0]);
    // 1,150 / 1,100 = 1.045: critical.
    let row = level_after(115.0, minute).await;
    assert_eq!(row.alert_level.as_deref(), Some("critical"));
    let critical = notices(&b.server, &wallet, "borrow_health_critical").await;
    assert_eq!(critical.len(), 1);
    assert_eq!(critical[0]["data"]["position_id"], id.as_str());
    // Holding there (a smaller move, read on the interval) repeats nothing.
    let row = level_after(114.0, alerts::CHECK_SECS).await;
    assert_eq!(row.alert_level.as_deref(), Some("critical"));
    assert_eq!(counts().await, vec![1, 1, 1]);
    // Recovered: no alert, every level armed again; falling straight to urgent alerts urgent.
    let row = level_after(200.0, minute).await;
    assert_eq!(row.alert_level, None);
    let row = level_after(125.0, minute).await;
    assert_eq!(row.alert_level.as_deref(), Some("urgent"));
    assert_eq!(counts().await, vec![1, 2, 1]);
    b.server.stop().await;
}

/// Kamino refuses a borrow past the reserve's borrow limit (`BorrowLimitExceeded`), past its
/// unlent liquidity (`InsufficientLiquidity`) and past what its debt cap leaves in the interval
/// (`WithdrawalCapReached`). The prepare refuses each before the wallet signs and stores
/// nothing; a borrow prepared before the cap tightened fails on chain; once the interval is over
/// the borrow is prepared, lands and counts against the cap.
#[tokio::test]
async fn a_borrow_kamino_would_refuse_is_refused_before_the_wallet_signs() {
    let b = Borrower::ready().await;
    let wallet = b.address();

    // 300 USD is 2 SOL at 150. Prepared while the reserve lends freely; then its limit is
    // lowered to 1 SOL above what it lends (with the interest accrued since it was installed,
    // rounded up), and the transaction fails at the borrow: the double checks the limit too.
    let before_limit = b.prepared(300.0).await;
    let lent = lend_b::Reserve::decode(&b.reserve_data().await)
        .unwrap()
        .borrowed_sf
        .div_ceil(1 << 60);
    let lent = u64::try_from(lent).unwrap();
    b.edit_reserve(|d| klend::set_borrow_limit(d, lent + SOL))
        .await;
    b.fails_at_the_borrow(&before_limit).await;

    // Asked now, refused before signing, with the room left; nothing stored.
    b.refused_above_limit(300.0, SOL, "past its borrow limit")
        .await;
    let rows = b.prepared_rows().await;
    b.edit_reserve(|d| klend::set_borrow_limit(d, klend::SOL_DEPOSIT_LIMIT))
        .await;

    // Borrowers took all but 1 SOL of its liquidity.
    let available = lend_b::Reserve::decode(&b.reserve_data().await)
        .unwrap()
        .available;
    b.edit_reserve(|d| klend::set_available(d, SOL)).await;
    let (status, body) = b.prepare(300.0).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "venue_liquidity_insufficient", "{body}");
    assert_eq!(b.prepared_rows().await, rows);
    b.edit_reserve(|d| klend::set_available(d, available)).await;

    // Prepared while nothing stands in the way, then the admin caps borrows at 5 SOL an hour
    // with 4 SOL out since the hour began, now: the transaction fails at the borrow.
    let early = b.prepared(300.0).await;
    assert_eq!(early["transactions"], 1, "{early}");
    let now = b.ledger.harness.lock().await.now().await;
    let start = u64::try_from(now).unwrap();
    b.edit_reserve(|d| {
        klend::set_cap(
            d,
            klend::Cap::Debt,
            5 * SOL as i64,
            4 * SOL as i64,
            start,
            3_600,
        )
    })
    .await;
    b.fails_at_the_borrow(&early).await;

    // Asked now, refused before signing: retry when the hour ends; nothing stored.
    let rows = b.prepared_rows().await;
    let (status, retry_after, body) = b
        .server
        .post_with_retry_after(
            "/v1/borrow/prepare",
            &json!({"wallet": wallet, "protocol": "lend_b", "borrow_asset": "SOL",
                    "amount_usd": 300.0}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(retry_after.as_deref(), Some("3600"));
    assert_eq!(body["error"], "venue_liquidity_insufficient", "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains(&format!("{SOL} base units are left")),
        "{body}"
    );
    assert_eq!(b.prepared_rows().await, rows);

    // The hour over, the borrow goes through and the cap's new interval counts it.
    b.ledger.harness.lock().await.warp_by(3_600).await;
    let landed_at = b.ledger.harness.lock().await.now().await;
    b.borrow(300.0).await;
    assert_eq!(b.debt().await, 2 * SOL);
    assert_eq!(
        klend::cap_total(&b.reserve_data().await, klend::Cap::Debt),
        (2 * SOL as i64, u64::try_from(landed_at).unwrap())
    );
    b.server.stop().await;
}

/// Kamino refuses a borrow that would leave the reserve lent at or above its utilisation
/// ceiling (`BorrowingAboveUtilizationRateDisabled`). The prepare refuses it before the wallet
/// signs, with the room left below the ceiling, and stores nothing; a borrow prepared before
/// the ceiling was set fails on chain; a borrow within the room lands.
#[tokio::test]
async fn a_borrow_past_the_utilisation_ceiling_is_refused_before_the_wallet_signs() {
    let b = Borrower::ready().await;

    // 300 USD is 2 SOL at 150, prepared while the reserve has no ceiling. Then the admin sets
    // one at 51 % while borrowers hold 1,048 SOL of it: the transaction fails at the borrow.
    let early = b.prepared(300.0).await;
    let lent = 1_048 * SOL;
    b.edit_reserve(|d| {
        klend::set_borrowed(d, lent);
        klend::set_utilization_ceiling(d, 51);
    })
    .await;
    b.fails_at_the_borrow(&early).await;

    // Asked now, refused before signing. The room, worked out here in whole units: the most a
    // borrow takes (no origination fee on this reserve) while lent stays below 51 % of the
    // supply.
    let available = lend_b::Reserve::decode(&b.reserve_data().await)
        .unwrap()
        .available;
    let supply = u128::from(available + lent);
    let room = u64::try_from((supply * 51).div_ceil(100)).unwrap() - lent - 1;
    assert!(room > SOL && room < 2 * SOL, "{room}");
    b.refused_above_limit(300.0, room, "utilisation ceiling")
        .await;

    // 1 SOL stays below the ceiling: it is prepared and lands.
    b.borrow(150.0).await;
    assert_eq!(b.debt().await, SOL);
    b.server.stop().await;
}

/// Kamino lends to obligations outside an elevation group (the service's vanilla obligations)
/// only up to `borrow_limit_outside_elevation_group` (`BorrowLimitExceeded`). The prepare
/// refuses a borrow past it before the wallet signs, with the room left, and stores nothing; a
/// borrow prepared before the limit was lowered fails on chain; a borrow within it lands and
/// is counted.
#[tokio::test]
async fn a_borrow_past_the_limit_outside_elevation_groups_is_refused_before_the_wallet_signs() {
    let b = Borrower::ready().await;

    // 2 SOL prepared; then the admin lends at most 1.5 SOL outside elevation groups, none of
    // it lent yet: the transaction fails at the borrow.
    let early = b.prepared(300.0).await;
    b.edit_reserve(|d| klend::set_outside_groups(d, 3 * SOL / 2, 0))
        .await;
    b.fails_at_the_borrow(&early).await;

    // Asked now, refused before signing with the 1.5 SOL left (no origination fee here).
    b.refused_above_limit(300.0, 3 * SOL / 2, "outside its elevation groups")
        .await;

    // 1 SOL fits: it lands and is counted.
    b.borrow(150.0).await;
    assert_eq!(b.debt().await, SOL);
    assert_eq!(klend::borrowed_outside_groups(&b.reserve_data().await), SOL);
    b.server.stop().await;
}

/// Kamino's market owner can stop every borrow (`borrow_disabled`: `BorrowingDisabled`). A
/// borrow prepared before fails at the borrow; asked now, the prepare answers 503
/// `venue_borrowing_disabled` and stores nothing; with borrowing resumed the borrow lands.
#[tokio::test]
async fn a_borrow_while_kamino_stops_borrowing_is_refused_before_the_wallet_signs() {
    let b = Borrower::ready().await;
    let early = b.prepared(300.0).await;
    b.edit_market(|d| klend::set_borrow_disabled(d, true)).await;
    b.fails_at_the_borrow(&early).await;

    let rows = b.prepared_rows().await;
    let (status, refused) = b.prepare(300.0).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    assert_eq!(refused["error"], "venue_borrowing_disabled", "{refused}");
    assert_eq!(b.prepared_rows().await, rows);

    b.edit_market(|d| klend::set_borrow_disabled(d, false))
        .await;
    b.borrow(300.0).await;
    assert_eq!(b.debt().await, 2 * SOL);
    b.server.stop().await;
}

/// A reserve whose collateral Kamino lends against only inside an elevation group
/// (`disable_usage_as_coll_outside_emode`) stops the borrowing of an obligation in none that
/// holds it (the refresh sets its `borrowing_disabled`: `BorrowingDisabledOutsideElevationGroup`)
/// and is not taken into one that owes (`DepositDisabledOutsideElevationGroup`). The service's
/// obligations are vanilla: both are answered 409 `collateral_outside_elevation_group` before
/// the wallet signs, with nothing stored, and what was prepared before fails on chain. A deposit
/// into the obligation while it owes nothing is still taken, as Kamino takes it.
#[tokio::test]
async fn collateral_kamino_takes_only_in_elevation_groups_is_answered_before_the_wallet_signs() {
    let b = Borrower::ready().await;
    let early = b.prepared(300.0).await;
    b.edit_reserve(|d| klend::set_collateral_emode_only(d, true))
        .await;
    b.fails_at_the_borrow(&early).await;

    let refused_409 = |status: StatusCode, body: &Value| {
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert_eq!(
            body["error"], "collateral_outside_elevation_group",
            "{body}"
        );
    };
    let rows = b.prepared_rows().await;
    let (status, refused) = b.prepare(300.0).await;
    refused_409(status, &refused);
    assert_eq!(b.prepared_rows().await, rows);

    // Owing nothing, the obligation still takes the collateral.
    b.deposit(1).await;

    // Back to lending everywhere, a 1 SOL borrow lands; then the flag again: a deposit prepared
    // while it was off fails at the deposit, and asked now, a deposit named for lend_b or
    // routed (lend_b is the one SOL venue here) is refused.
    b.edit_reserve(|d| klend::set_collateral_emode_only(d, false))
        .await;
    b.borrow(150.0).await;
    assert_eq!(b.debt().await, SOL);
    let into_kamino =
        json!({"wallet": b.address(), "token_symbol": "SOL", "amount": 1, "protocol": "lend_b"});
    let (status, early) = b
        .server
        .post("/v1/defi/deposit/prepare", &into_kamino)
        .await;
    assert_eq!(status, StatusCode::OK, "{early}");
    b.edit_reserve(|d| klend::set_collateral_emode_only(d, true))
        .await;
    let deposit_at = chain::anchor_instruction_at(
        &early["transaction"],
        "deposit_reserve_liquidity_and_obligation_collateral_v2",
    );
    assert_eq!(
        b.ledger.process(chain::sign(&early, &b.wallet)).await,
        Err(format!("InstructionError({deposit_at}, InvalidArgument)")),
        "the deposit instruction fails"
    );
    let rows = b.prepared_rows().await;
    let routed = json!({"wallet": b.address(), "token_symbol": "SOL", "amount": 1});
    for body in [&into_kamino, &routed] {
        let (status, refused) = b.server.post("/v1/defi/deposit/prepare", body).await;
        refused_409(status, &refused);
    }
    assert_eq!(b.prepared_rows().await, rows);
    b.server.stop().await;
}

/// A wallet can put its vanilla Kamino obligation (the one the service uses) in an elevation
/// group in Kamino's app. klend then takes deposits into and borrows from only the group's
/// reserves (`InconsistentElevationGroup`) and lends inside the group under rules the service
/// does not read. A deposit into a reserve outside the group, and every borrow, are answered 409
/// `obligation_in_elevation_group` before the wallet signs, with nothing stored, and what was
/// prepared before fails on chain; a deposit into a reserve of the group is prepared and lands;
/// out of the group, the borrow lands.
#[tokio::test]
async fn an_obligation_in_an_elevation_group_is_answered_before_the_wallet_signs() {
    let b = Borrower::ready().await;
    let early_borrow = b.prepared(300.0).await;
    let into_kamino =
        json!({"wallet": b.address(), "token_symbol": "SOL", "amount": 1, "protocol": "lend_b"});
    let (status, early_deposit) = b
        .server
        .post("/v1/defi/deposit/prepare", &into_kamino)
        .await;
    assert_eq!(status, StatusCode::OK, "{early_deposit}");

    // The wallet puts its obligation in group 2, which the SOL reserve is not in.
    b.edit_obligation(|d| klend::set_obligation_group(d, 2))
        .await;
    b.fails_at_the_borrow(&early_borrow).await;
    let deposit_at = chain::anchor_instruction_at(
        &early_deposit["transaction"],
        "deposit_reserve_liquidity_and_obligation_collateral_v2",
    );
    assert_eq!(
        b.ledger
            .process(chain::sign(&early_deposit, &b.wallet))
            .await,
        Err(format!("InstructionError({deposit_at}, InvalidArgument)")),
        "the deposit instruction fails"
    );

    let in_group = |status: StatusCode, body: &Value| {
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert_eq!(body["error"], "obligation_in_elevation_group", "{body}");
        assert!(
            body["message"].as_str().unwrap().contains("group 2"),
            "{body}"
        );
    };
    let rows = b.prepared_rows().await;
    let (status, refused) = b.prepare(300.0).await;
    in_group(status, &refused);
    let (status, refused) = b
        .server
        .post("/v1/defi/deposit/prepare", &into_kamino)
        .await;
    in_group(status, &refused);
    assert_eq!(b.prepared_rows().await, rows);

    // The SOL reserve joins group 2: the deposit is prepared and lands; the borrow is still
    // refused.
    b.edit_reserve(|d| klend::set_reserve_groups(d, &[2])).await;
    b.deposit(1).await;
    let (status, refused) = b.prepare(300.0).await;
    in_group(status, &refused);

    // Out of the group, the borrow lands.
    b.edit_obligation(|d| klend::set_obligation_group(d, 0))
        .await;
    b.borrow(300.0).await;
    assert_eq!(b.debt().await, 2 * SOL);
    b.server.stop().await;
}

/// Kamino's emergency mode refuses every refresh and user instruction, borrows and repayments
/// included (`GlobalEmergencyMode`). A repayment prepared before it fails at its first reserve
/// refresh; asked now, a borrow and a repayment are answered 503 `venue_paused` with a retry and
/// nothing stored; out of emergency mode the repayment lands.
#[tokio::test]
async fn kaminos_emergency_mode_is_answered_to_borrows_and_repayments() {
    let b = Borrower::ready().await;
    let borrow_id = b.borrow(150.0).await;
    let repay_body = json!({"wallet": b.address(), "position_id": borrow_id});
    let (status, early) = b.server.post("/v1/borrow/repay/prepare", &repay_body).await;
    assert_eq!(status, StatusCode::OK, "{early}");

    b.edit_market(|d| klend::set_emergency_mode(d, true)).await;
    let refresh_at = chain::anchor_instruction_at(&early["transaction"], "refresh_reserve");
    assert_eq!(
        b.ledger.process(chain::sign(&early, &b.wallet)).await,
        Err(format!("InstructionError({refresh_at}, InvalidArgument)")),
        "the refresh fails"
    );
    assert_eq!(b.debt().await, SOL);

    let rows = b.prepared_rows().await;
    // The SOL debt is open (one a token), so the borrow asked is of USDC.
    let borrow_body = json!({"wallet": b.address(), "protocol": "lend_b", "borrow_asset": "USDC", "amount_usd": 150.0});
    for (path, body) in [
        ("/v1/borrow/prepare", &borrow_body),
        ("/v1/borrow/repay/prepare", &repay_body),
    ] {
        let (status, retry_after, refused) = b.server.post_with_retry_after(path, body).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{path}: {refused}");
        assert_eq!(refused["error"], "venue_paused", "{refused}");
        assert_eq!(retry_after.as_deref(), Some("2"), "{path}");
    }
    assert_eq!(b.prepared_rows().await, rows);

    b.edit_market(|d| klend::set_emergency_mode(d, false)).await;
    let (status, repay) = b.server.post("/v1/borrow/repay/prepare", &repay_body).await;
    assert_eq!(status, StatusCode::OK, "{repay}");
    b.sign_and_send(&repay, &b.wallet).await;
    assert_eq!(b.debt().await, 0);
    b.server.stop().await;
}
