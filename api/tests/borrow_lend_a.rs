//! Borrowing from `lend_a` (SPL token-lending) end to end over HTTP against solana-program-test
//! with the token-lending double under the program's devnet id: an `ember` wallet (the tier that
//! may borrow from lend_a only) deposits SOL through the DeFi flow, which leaves collateral
//! tokens in its wallet; its first borrow creates its obligation in a transaction of its own,
//! moves those tokens into it and borrows USDC; health and positions are read from the
//! obligation; a year of interest later the repayment pays it all back; and the deposit's
//! withdrawal takes the collateral back out of the obligation before redeeming it.

mod common;

use std::sync::Arc;

use common::bank::BankLedger;
use common::{chain, TestServer};
use integration_tests::harness::{HarnessOptions, SOL};
use integration_tests::venues::token_lending::{self, USDC};
use integration_tests::venues::{LendingMarket, TOKEN_LENDING};
use narrative_api::chain::holdings::{associated_token_account, TOKEN_PROGRAM};
use narrative_api::chain::venues::lend_a;
use narrative_api::clock::{Clock, ManualClock, SharedClock};
use reqwest::StatusCode;
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_signer::Signer;

const CREATOR: &str = "Creator1111111111111111111111111111111111";

struct Lender {
    server: TestServer,
    ledger: Arc<BankLedger>,
    clock: Arc<ManualClock>,
    market: LendingMarket,
    wallet: Keypair,
}

impl Lender {
    async fn start() -> Lender {
        let clock = ManualClock::at_system_time();
        let shared: SharedClock = clock.clone();
        let options = HarnessOptions {
            token_lending: true,
            ..Default::default()
        };
        let (server, ledger) = chain::start_on_bank_at(shared, options, |h, c| {
            let m = h.lending.expect("the double is installed");
            c.lend_a_reserves = vec![
                format!("SOL={}", m.sol_reserve),
                format!("USDC={}", m.usdc_reserve),
            ];
            c.usdc_mint = Some(m.usdc_mint.to_string());
            c.borrow_enabled = true;
        })
        .await;
        let (market, wallet) = {
            let h = ledger.harness.lock().await;
            (h.lending.unwrap(), h.wallets[0].insecure_clone())
        };
        Lender {
            server,
            ledger,
            clock,
            market,
            wallet,
        }
    }

    fn address(&self) -> String {
        self.wallet.pubkey().to_string()
    }

    async fn send(&self, prepared: &Value) -> String {
        chain::sign_and_send_all(&self.ledger, prepared, &self.wallet)
            .await
            .pop()
            .unwrap()
    }

    async fn raw(&self, key: narrative_sdk::Pubkey) -> Option<solana_account::Account> {
        self.ledger.harness.lock().await.raw_account(key).await
    }

    async fn balance(&self, account: narrative_sdk::Pubkey) -> u64 {
        chain::token_balance(&self.ledger, account).await
    }

    fn obligation(&self) -> narrative_sdk::Pubkey {
        let seed: String = self.market.market.to_string().chars().take(32).collect();
        narrative_sdk::Pubkey::create_with_seed(&self.wallet.pubkey(), &seed, &TOKEN_LENDING)
            .unwrap()
    }

    /// Moves the bank `slots` ahead and refreshes the USDC reserve, which accrues interest.
    #[allow(deprecated)]
    async fn accrue_usdc(&self, slots: u64) {
        let mut h = self.ledger.harness.lock().await;
        let slot = h.clock().await.slot;
        h.ctx.warp_to_slot(slot + slots).expect("warp");
        let account = h.raw_account(self.market.usdc_reserve).await.unwrap();
        let reserve = lend_a::Reserve::decode(&account.data).expect("a reserve");
        let refresh = lend_a::refresh_reserve(&TOKEN_LENDING, &self.market.usdc_reserve, &reserve);
        h.process(&[refresh], &[]).await.expect("refresh");
    }

    async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        self.server.post(path, &body).await
    }

    /// Deposits `sol` SOL into lend_a through the DeFi flow, confirmed: the prepare's answer.
    async fn deposit(&self, sol: u32) -> Value {
        let wallet = self.address();
        let (status, deposit) = self
            .post(
                "/v1/defi/deposit/prepare",
                json!({"wallet": wallet, "token_symbol": "SOL", "amount": sol, "protocol": "lend_a"}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{deposit}");
        let signature = self.send(&deposit).await;
        let (status, confirmed) = self
            .post(
                "/v1/defi/deposit/confirm",
                json!({"backing_id": deposit["backing_id"], "tx_signature": signature, "wallet": wallet}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{confirmed}");
        deposit
    }

    /// Accepts the borrow terms by the wallet's signature.
    async fn accept_terms(&self) {
        let wallet = self.address();
        let now = self.clock.now();
        let message = format!("narrative-market-service:borrow-terms:{wallet}:issued-at:{now}");
        let signature = self.wallet.sign_message(message.as_bytes()).to_string();
        let (status, body) = self
            .post(
                "/v1/borrow/accept-terms",
                json!({"wallet": wallet, "signature": signature, "issued_at": now}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    /// Sets the USDC reserve's unlent liquidity, as borrowers (or their repayments) would.
    async fn set_usdc_available(&self, amount: u64) {
        let mut h = self.ledger.harness.lock().await;
        let mut reserve = h.raw_account(self.market.usdc_reserve).await.unwrap();
        token_lending::set_available(&mut reserve.data, amount);
        h.plant_account(self.market.usdc_reserve, reserve);
    }
}

fn close(actual: &Value, expected: f64, tolerance: f64) -> bool {
    actual
        .as_f64()
        .is_some_and(|v| (v - expected).abs() <= tolerance)
}

#[tokio::test]
async fn an_ember_wallet_borrows_usdc_from_lend_a_against_its_deposit_and_repays_it() {
    let l = Lender::start().await;
    let wallet = l.address();
    let collateral_account = associated_token_account(
        &l.wallet.pubkey(),
        &l.market.collateral_mint,
        &TOKEN_PROGRAM,
    );
    let usdc_account =
        associated_token_account(&l.wallet.pubkey(), &l.market.usdc_mint, &TOKEN_PROGRAM);

    // 10 SOL into lend_a: about 9.5 collateral tokens in the wallet (4,000 SOL for 3,800
    // tokens, a little fewer as the reserve's interest accrued since it was installed).
    let deposit = l.deposit(10).await;
    let pledged = l.balance(collateral_account).await;
    assert!(
        (9_499_000_000..=9_500_000_000).contains(&pledged),
        "{pledged}"
    );

    l.accept_terms().await;

    // Ember: 50 % of 1,500 USD. Fast actions stay flare's.
    let (status, capacity) = l.server.get(&format!("/v1/borrow/capacity/{wallet}")).await;
    assert_eq!(status, StatusCode::OK, "{capacity}");
    assert_eq!(capacity["conviction_tier"], "ember");
    assert!(close(&capacity["capacity_usd"], 750.0, 1e-6), "{capacity}");
    let (status, refused) = l
        .post(
            "/v1/borrow/fast-action",
            json!({"wallet": wallet, "action": "safe"}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["error"], "flare_required");

    // 300 USDC: the obligation is created first, then the collateral moves in and USDC out.
    let (status, prepared) = l
        .post(
            "/v1/borrow/prepare",
            json!({"wallet": wallet, "protocol": "lend_a", "borrow_asset": "USDC", "amount_usd": 300}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(prepared["transactions"], 2);
    assert_eq!(prepared["amount_base"], 300 * USDC);
    let signature = l.send(&prepared).await;
    let borrow_id = prepared["borrow_id"].as_str().unwrap().to_owned();
    let (status, confirmed) = l
        .post(
            "/v1/borrow/confirm",
            json!({"wallet": wallet, "borrow_id": borrow_id, "tx_signature": signature}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["position"]["protocol"], "lend_a");
    assert_eq!(confirmed["position"]["tier"], "ember");
    assert_eq!(l.balance(usdc_account).await, 300 * USDC);
    assert_eq!(l.balance(collateral_account).await, 0);
    let obligation = l.raw(l.obligation()).await.expect("the obligation exists");
    assert_eq!(obligation.owner, TOKEN_LENDING);
    assert_eq!(
        token_lending::deposited(&obligation.data, &l.market.sol_reserve),
        pledged
    );
    assert_eq!(
        token_lending::borrowed_wads(&obligation.data, &l.market.usdc_reserve),
        u128::from(300 * USDC) * token_lending::WAD
    );

    // Health from the obligation: 1,500 USD of collateral over 300 owed.
    let (status, health) = l.server.get(&format!("/v1/borrow/health/{wallet}")).await;
    assert_eq!(status, StatusCode::OK, "{health}");
    assert!(
        close(&health["positions"][0]["health_factor"], 5.0, 1e-6),
        "{health}"
    );

    // While it owes, the deposit is pledged: its withdrawal waits for the repayment.
    let (status, refused) = l
        .post(
            "/v1/defi/withdrawal/prepare",
            json!({"backing_id": deposit["backing_id"], "wallet": wallet}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert_eq!(refused["error"], "collateral_pledged");

    // A year of slots at the USDC reserve's 10 %: about 330 USDC owed. The wallet tops its
    // USDC up to pay the interest.
    l.accrue_usdc(token_lending::SLOTS_PER_YEAR as u64).await;
    {
        let mut h = l.ledger.harness.lock().await;
        h.plant_account(
            usdc_account,
            integration_tests::venues::token_account(
                l.market.usdc_mint,
                l.wallet.pubkey(),
                400 * USDC,
            ),
        );
    }
    let (status, repay) = l
        .post(
            "/v1/borrow/repay/prepare",
            json!({"wallet": wallet, "position_id": borrow_id}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{repay}");
    let total = repay["total_repay_base"].as_u64().unwrap();
    assert!(total.abs_diff(330 * USDC) <= USDC / 100, "{repay}");
    let signature = l.send(&repay).await;
    let (status, repaid) = l
        .post(
            "/v1/borrow/repay/confirm",
            json!({"wallet": wallet, "position_id": borrow_id, "repay_id": repay["repay_id"], "tx_signature": signature}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{repaid}");
    assert_eq!(repaid["status"], "repaid");
    let paid = 400 * USDC - l.balance(usdc_account).await;
    assert!(
        paid >= total && paid <= total + total / 1_000 + 1,
        "{paid} vs {total}"
    );
    let obligation = l.raw(l.obligation()).await.unwrap();
    assert_eq!(
        token_lending::borrowed_wads(&obligation.data, &l.market.usdc_reserve),
        0
    );

    // The deposit comes back: the collateral leaves the obligation, then is redeemed.
    let (status, withdrawal) = l
        .post(
            "/v1/defi/withdrawal/prepare",
            json!({"backing_id": deposit["backing_id"], "wallet": wallet}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{withdrawal}");
    let expected = withdrawal["expected_amount_base"].as_u64().unwrap();
    assert!(expected >= 10 * SOL - 2, "{withdrawal}");
    let before = l
        .ledger
        .harness
        .lock()
        .await
        .lamports(l.wallet.pubkey())
        .await;
    let signature = l.send(&withdrawal).await;
    let received = l
        .ledger
        .harness
        .lock()
        .await
        .lamports(l.wallet.pubkey())
        .await
        - before;
    assert!(
        received + 10_000 >= expected && received <= expected,
        "{received} vs {expected}"
    );
    let obligation = l.raw(l.obligation()).await.unwrap();
    assert_eq!(
        token_lending::deposited(&obligation.data, &l.market.sol_reserve),
        0
    );
    let (status, done) = l
        .post(
            "/v1/defi/withdrawal/confirm",
            json!({"backing_id": deposit["backing_id"], "tx_signature": signature, "wallet": wallet}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    l.server.stop().await;
}

#[tokio::test]
async fn a_flare_wallets_fast_action_borrows_usdc_from_lend_a_by_default() {
    let l = Lender::start().await;
    let db = l.server.db.store.db();
    let wallet = l.address();
    // Seven winning backings: `flare`, 60 %.
    for t in 0..7 {
        common::fixtures::settled(db, CREATOR, t, "yes", &[(wallet.as_str(), "yes")]).await;
    }
    l.deposit(10).await;
    l.accept_terms().await;

    // `safe`, the defaults lend_a and USDC: 30 % of 60 % of 1,500 USD, 270 USDC.
    let (status, prepared) = l
        .post(
            "/v1/borrow/fast-action",
            json!({"wallet": wallet, "action": "safe"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(prepared["protocol"], "lend_a");
    assert_eq!(prepared["amount_base"], 270 * USDC);
    let signature = l.send(&prepared).await;
    let (status, confirmed) = l
        .post(
            "/v1/borrow/confirm",
            json!({"wallet": wallet, "borrow_id": prepared["borrow_id"], "tx_signature": signature}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["position"]["asset"], "USDC");
    let usdc_account =
        associated_token_account(&l.wallet.pubkey(), &l.market.usdc_mint, &TOKEN_PROGRAM);
    assert_eq!(l.balance(usdc_account).await, 270 * USDC);

    // 100 of those USDC back into lend_a. lend_a's own withdrawal names a backing by its
    // amount in SOL, the figure the allocation shows (100 USD at 150 USD a SOL), not by the
    // USDC it deposited.
    let (status, deposit) = l
        .post(
            "/v1/defi/deposit/prepare",
            json!({"wallet": wallet, "token_symbol": "USDC", "amount": 100, "protocol": "lend_a"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{deposit}");
    let signature = l.send(&deposit).await;
    let (status, confirmed) = l
        .post(
            "/v1/defi/deposit/confirm",
            json!({"backing_id": deposit["backing_id"], "tx_signature": signature, "wallet": wallet}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(l.balance(usdc_account).await, 170 * USDC);
    let (_, allocation) = l.server.get(&format!("/v1/defi/allocation/{wallet}")).await;
    let position = allocation["positions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["backing_id"] == deposit["backing_id"])
        .unwrap_or_else(|| panic!("{allocation}"))
        .clone();
    assert_eq!(position["amount_sol"], json!(0.666666667), "{position}");
    let withdraw = |amount: Value| json!({"wallet_address": wallet, "amount_sol": amount, "receipt": deposit["backing_id"]});
    let (status, refused) = l
        .post("/v1/defi/lend_a/withdraw", withdraw(json!(100)))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("0.666666667 SOL"),
        "{refused}"
    );
    let (status, prepared) = l
        .post(
            "/v1/defi/lend_a/withdraw",
            withdraw(position["amount_sol"].clone()),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(prepared["backing_id"], deposit["backing_id"]);
    assert_eq!(prepared["protocol"], "lend_a");
    l.server.stop().await;
}

/// SPL token-lending lends only what its reserve holds unlent (`InsufficientLiquidity`): a
/// borrow of more is refused before the wallet signs, with a retry-after, and nothing is stored;
/// with liquidity back the same borrow is prepared.
#[tokio::test]
async fn a_borrow_the_reserve_cannot_lend_now_is_refused_before_the_wallet_signs() {
    let l = Lender::start().await;
    let wallet = l.address();
    l.deposit(10).await;
    l.accept_terms().await;

    // Borrowers took all but 100 USDC of the reserve.
    l.set_usdc_available(100 * USDC).await;
    let rows = prepared_rows(&l).await;
    let borrow = json!({"wallet": wallet, "protocol": "lend_a", "borrow_asset": "USDC",
                        "amount_usd": 300});
    let (status, retry_after, refused) = l
        .server
        .post_with_retry_after("/v1/borrow/prepare", &borrow)
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    assert!(retry_after.is_some());
    assert_eq!(
        refused["error"], "venue_liquidity_insufficient",
        "{refused}"
    );
    assert_eq!(prepared_rows(&l).await, rows);

    // Repaid by others: the same borrow is prepared.
    l.set_usdc_available(token_lending::USDC_START_AVAILABLE)
        .await;
    let (status, prepared) = l.post("/v1/borrow/prepare", borrow).await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(prepared["amount_base"], 300 * USDC);
}

async fn prepared_rows(l: &Lender) -> u64 {
    use sea_orm::{EntityTrait, PaginatorTrait};
    narrative_store::entities::prepared_transactions::Entity::find()
        .count(l.server.db.store.db())
        .await
        .unwrap()
}
