//! DeFi earn over HTTP against solana-program-test, with the SPL token-lending double (`lend_a`)
//! and the Kamino Lending double (`lend_b`) registered under the programs' real ids: APYs read
//! from the reserves, deposits routed or sent to a venue, signed and confirmed (collateral
//! really minted, SOL really moved), allocation and yield as the reserves' rates grow, and the
//! withdrawals paying principal plus interest. What the flow must refuse is refused with nothing
//! recorded: another transaction's or another wallet's signature, a signature that never
//! landed, and everything while the RPC node does not answer.

mod common;

use std::sync::Arc;

use common::bank::BankLedger;
use common::{chain, TestServer};
use integration_tests::harness::{HarnessOptions, SOL};
use integration_tests::venues::klend::{self, KaminoMarket};
use integration_tests::venues::{LendingMarket, TOKEN_LENDING};
use narrative_api::chain::holdings::{associated_token_account, TOKEN_PROGRAM};
use narrative_api::chain::ledger::Ledger;
use narrative_api::chain::venues::lend_b;
use narrative_api::clock::{ManualClock, SharedClock};
use narrative_api::providers::prices::{FixedPrice, PriceFeed, PriceQuote};
use narrative_store::entities::defi_positions;
use reqwest::StatusCode;
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_signer::Signer;

struct Flow {
    server: TestServer,
    ledger: Arc<BankLedger>,
    clock: Arc<ManualClock>,
    market: LendingMarket,
    kamino: KaminoMarket,
    wallet: Keypair,
    stranger: Keypair,
}

impl Flow {
    async fn start() -> Flow {
        Flow::start_with(|_| {}).await
    }

    /// [`Flow::start`], with `configure` changing the service's settings last.
    async fn start_with(configure: impl FnOnce(&mut narrative_api::Config)) -> Flow {
        Flow::start_priced(Arc::new(FixedPrice(150.0)), configure).await
    }

    /// [`Flow::start_with`], the SOL/USD price from `prices`.
    async fn start_priced(
        prices: Arc<dyn PriceFeed>,
        configure: impl FnOnce(&mut narrative_api::Config),
    ) -> Flow {
        let clock = ManualClock::at_system_time();
        let shared: SharedClock = clock.clone();
        let options = HarnessOptions {
            token_lending: true,
            klend: true,
            ..Default::default()
        };
        let (server, ledger) = chain::start_on_bank_priced(shared, prices, options, |h, c| {
            let market = h.lending.expect("the double is installed");
            c.lend_a_reserves = vec![format!("SOL={}", market.sol_reserve)];
            let kamino = h.kamino.expect("the double is installed");
            c.lend_b_market = Some(kamino.market.to_string());
            c.lend_b_reserves = vec![format!("SOL={}", kamino.sol_reserve)];
            configure(c);
        })
        .await;
        let (market, kamino, wallet, stranger) = {
            let h = ledger.harness.lock().await;
            (
                h.lending.unwrap(),
                h.kamino.unwrap(),
                h.wallets[0].insecure_clone(),
                h.wallets[1].insecure_clone(),
            )
        };
        Flow {
            server,
            ledger,
            clock,
            market,
            kamino,
            wallet,
            stranger,
        }
    }

    async fn lamports(&self, key: &narrative_sdk::Pubkey) -> u64 {
        self.ledger.harness.lock().await.lamports(*key).await
    }

    async fn token_balance(&self, account: narrative_sdk::Pubkey) -> u64 {
        chain::token_balance(&self.ledger, account).await
    }

    /// Signs every transaction of a prepare answer in order and sends it; the last one's
    /// signature.
    async fn sign_and_send(&self, prepared: &Value, wallet: &Keypair) -> String {
        self.sign_and_send_all(prepared, wallet)
            .await
            .pop()
            .expect("one transaction at least")
    }

    /// Every signature, in order.
    async fn sign_and_send_all(&self, prepared: &Value, wallet: &Keypair) -> Vec<String> {
        chain::sign_and_send_all(&self.ledger, prepared, wallet).await
    }

    /// `POST path` (a deposit or withdrawal step) naming `backing_id` for the flow's wallet and,
    /// for a confirm, the `signature`.
    async fn post_backing(
        &self,
        path: &str,
        backing_id: &str,
        signature: Option<&str>,
    ) -> (StatusCode, Value) {
        let mut body =
            json!({"backing_id": backing_id, "wallet": self.wallet.pubkey().to_string()});
        if let Some(signature) = signature {
            body["tx_signature"] = json!(signature);
        }
        self.server.post(path, &body).await
    }

    /// Signs and sends a prepared withdrawal of `backing_id` and confirms it: the confirm's
    /// answer, asserted `withdrawn`.
    async fn withdrawn(&self, prepared: &Value, backing_id: &str) -> Value {
        let signature = self.sign_and_send(prepared, &self.wallet).await;
        let (status, done) = self
            .post_backing("/v1/defi/withdrawal/confirm", backing_id, Some(&signature))
            .await;
        assert_eq!(status, StatusCode::OK, "{done}");
        assert_eq!(done["status"], "withdrawn", "{done}");
        done
    }

    async fn kamino_collateral(&self, owner: &narrative_sdk::Pubkey) -> u64 {
        let obligation = klend::vanilla_obligation(owner, &self.kamino.market);
        let raw = self
            .ledger
            .harness
            .lock()
            .await
            .raw_account(obligation)
            .await;
        raw.map_or(0, |a| klend::deposited(&a.data, &self.kamino.sol_reserve))
    }

    async fn positions_recorded(&self) -> u64 {
        defi_positions::Entity::find()
            .count(self.server.db.store.db())
            .await
            .unwrap()
    }

    /// Moves the bank `slots` ahead and refreshes the reserve (as anyone may), so the
    /// reserve's rate accrues that much interest.
    // program-test's warp is the one way to move slots; its deprecation is about v4's feature flag.
    #[allow(deprecated)]
    async fn accrue(&self, slots: u64) {
        let mut h = self.ledger.harness.lock().await;
        let slot = h.clock().await.slot;
        h.ctx.warp_to_slot(slot + slots).expect("warp");
        let refresh = anchor_lang::solana_program::instruction::Instruction {
            program_id: TOKEN_LENDING,
            accounts: vec![
                anchor_lang::solana_program::instruction::AccountMeta::new(
                    self.market.sol_reserve,
                    false,
                ),
                anchor_lang::solana_program::instruction::AccountMeta::new_readonly(
                    self.market.oracle,
                    false,
                ),
                anchor_lang::solana_program::instruction::AccountMeta::new_readonly(
                    narrative_api::chain::ledger::CLOCK_SYSVAR,
                    false,
                ),
            ],
            data: vec![3],
        };
        h.process(&[refresh], &[]).await.expect("refresh");
    }

    /// Edits the Kamino SOL reserve's data in place, as its market's admin would change its
    /// config.
    async fn edit_kamino_reserve(&self, edit: impl FnOnce(&mut [u8])) {
        let mut h = self.ledger.harness.lock().await;
        let mut reserve = h.raw_account(self.kamino.sol_reserve).await.unwrap();
        edit(&mut reserve.data);
        h.plant_account(self.kamino.sol_reserve, reserve);
    }

    /// Edits the Kamino lending market's data in place, as its owner would.
    async fn edit_kamino_market(&self, edit: impl FnOnce(&mut [u8])) {
        let mut h = self.ledger.harness.lock().await;
        let mut market = h.raw_account(self.kamino.market).await.unwrap();
        edit(&mut market.data);
        h.plant_account(self.kamino.market, market);
    }

    /// Asks for the withdrawal of `backing_id` and asserts it is refused with 503
    /// `venue_liquidity_insufficient` and nothing stored: the retry-after and the body.
    async fn withdrawal_refused_for_liquidity(&self, backing_id: &str) -> (Option<String>, Value) {
        let rows = self.prepared_rows().await;
        let (status, retry_after, refused) = self
            .server
            .post_with_retry_after(
                "/v1/defi/withdrawal/prepare",
                &json!({"backing_id": backing_id, "wallet": self.wallet.pubkey().to_string()}),
            )
            .await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
        assert_eq!(
            refused["error"], "venue_liquidity_insufficient",
            "{refused}"
        );
        assert_eq!(self.prepared_rows().await, rows, "nothing stored");
        (retry_after, refused)
    }

    async fn prepared_rows(&self) -> u64 {
        narrative_store::entities::prepared_transactions::Entity::find()
            .count(self.server.db.store.db())
            .await
            .unwrap()
    }

    /// The same for the Kamino reserve (its refresh is public too).
    async fn accrue_kamino(&self, slots: u64) {
        chain::accrue_kamino(&self.ledger, self.kamino.sol_reserve, slots).await
    }
}

#[tokio::test]
async fn a_deposit_earns_at_the_reserves_rate_and_comes_back_with_its_yield() {
    let f = Flow::start().await;
    let wallet = f.wallet.pubkey();

    // APYs: lend_a from the reserve on the ledger (75 % utilised, 7.5 % borrow APR → 5.786 %
    // supply APY); mainnet venues are not available on devnet.
    let (status, apys) = f.server.get("/v1/defi/apys").await;
    assert_eq!(status, StatusCode::OK, "{apys}");
    let lend_a = apys["apys"]["lend_a_sol"].as_f64().unwrap();
    assert!((lend_a - 5.786).abs() < 0.001, "{apys}");
    assert_eq!(apys["apys"]["lend_a"], apys["apys"]["lend_a_sol"]);
    assert_eq!(apys["sources"]["lend_a_sol"]["source"], "ledger");
    assert_eq!(apys["protocols"]["lend_a"]["testnet_available"], true);
    assert_eq!(apys["protocols"]["stake_a"]["testnet_available"], false);
    assert_eq!(apys["borrow_enabled"], false);

    // Deposit 10 SOL, routed: lend_a pays more than lend_b (below), so it gets the deposit.
    let (status, prepared) = f
        .server
        .post(
            "/v1/defi/deposit/prepare",
            &json!({"wallet": wallet.to_string(), "token_symbol": "sol", "amount": 10}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(prepared["protocol"], "lend_a");
    assert_eq!(prepared["amount_base"], 10 * SOL);
    assert_eq!(prepared["status"], "ready_to_confirm");
    let backing_id = prepared["backing_id"].as_str().unwrap().to_owned();
    let before = f.lamports(&wallet).await;
    let signature = f.sign_and_send(&prepared, &f.wallet).await;

    // The deposit moved 10 SOL into the reserve's supply and minted collateral at 3,800/4,000
    // (a little less: the few slots since genesis accrued interest first).
    let collateral_account =
        associated_token_account(&wallet, &f.market.collateral_mint, &TOKEN_PROGRAM);
    let minted = f.token_balance(collateral_account).await;
    assert!((9_499_900_000..9_500_000_000).contains(&minted), "{minted}");
    assert_eq!(
        f.token_balance(f.market.liquidity_supply).await,
        integration_tests::venues::START_AVAILABLE + 10 * SOL
    );
    let spent = before - f.lamports(&wallet).await;
    assert!((10 * SOL..10 * SOL + SOL / 100).contains(&spent), "{spent}");

    // Confirm by another wallet: refused, nothing recorded.
    let confirm = |who: &Keypair, sig: &str| json!({"backing_id": backing_id, "tx_signature": sig, "wallet": who.pubkey().to_string()});
    let (status, refused) = f
        .server
        .post(
            "/v1/defi/deposit/confirm",
            &confirm(&f.stranger, &signature),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["error"], "not_backing_owner");
    let db = f.server.db.store.db();
    assert_eq!(defi_positions::Entity::find().count(db).await.unwrap(), 0);

    let (status, confirmed) = f
        .server
        .post("/v1/defi/deposit/confirm", &confirm(&f.wallet, &signature))
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["protocol"], "lend_a");
    assert_eq!(confirmed["amount_sol"], 10.0);
    assert_eq!(confirmed["status"], "confirmed");
    // A replay answers what was recorded and records nothing more.
    let (status, replay) = f
        .server
        .post("/v1/defi/deposit/confirm", &confirm(&f.wallet, &signature))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(replay, confirmed);
    assert_eq!(defi_positions::Entity::find().count(db).await.unwrap(), 1);

    // Allocation right after the confirm: the position, all of the split, no yield yet.
    let path = format!("/v1/defi/allocation/{wallet}");
    let (status, allocation) = f.server.get(&path).await;
    assert_eq!(status, StatusCode::OK, "{allocation}");
    assert_eq!(allocation["empty"], false);
    assert_eq!(allocation["total_sol"], 10.0);
    assert_eq!(
        allocation["positions"][0]["backing_id"],
        backing_id.as_str()
    );
    assert_eq!(allocation["positions"][0]["can_withdraw"], true);
    assert_eq!(allocation["positions"][0]["yield_earned_sol"], 0.0);
    assert_eq!(allocation["allocation"][0]["percentage"], 100.0);

    // A tenth of a year of slots at the 8 % the double accrues: 3,000 lent → +24 SOL over
    // 4,010 SOL of liquidity. Once the rate cache lapses, the yield shows it.
    f.accrue(7_884_000).await;
    f.clock.advance(11);
    let (_, earned) = f.server.get(&format!("/v1/defi/yield/{wallet}")).await;
    let yield_sol = earned["yield_earned_sol"].as_f64().unwrap();
    // 9.5 collateral × 4,034 / 3,809.5 = 10.0598… SOL.
    assert!((yield_sol - 0.0598).abs() < 0.0005, "{earned}");
    assert_eq!(
        earned["breakdown"]["echo_pool_sol"],
        earned["yield_earned_sol"]
    );
    assert_eq!(earned["breakdown"]["narrative_yield_sol"], 0.0);

    // Only the backing's wallet may withdraw it.
    let (status, refused) = f
        .server
        .post(
            "/v1/defi/withdrawal/prepare",
            &json!({"backing_id": backing_id, "wallet": f.stranger.pubkey().to_string()}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");

    // lend_a's own withdrawal names the backing by its receipt and amount: a backing is
    // withdrawn whole, so another amount is refused; its amount answers the backing's yield.
    let by_receipt = |sol: f64| json!({"wallet_address": wallet.to_string(), "amount_sol": sol, "receipt": backing_id});
    let (status, refused) = f
        .server
        .post("/v1/defi/lend_a/withdraw", &by_receipt(4.0))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("withdrawn whole"),
        "{refused}"
    );
    let (status, named) = f
        .server
        .post("/v1/defi/lend_a/withdraw", &by_receipt(10.0))
        .await;
    assert_eq!(status, StatusCode::OK, "{named}");
    assert_eq!(named["backing_id"], backing_id.as_str());
    assert_eq!(named["protocol"], "lend_a");
    assert_eq!(named["yield_earned_sol"], earned["yield_earned_sol"]);
    assert_eq!(
        (&named["status"], &named["transactions"]),
        (&json!("ready_to_confirm"), &json!(1))
    );

    // The generic withdrawal of the same backing, a second later: the confirm, which names
    // only the backing, takes the newest prepared.
    f.clock.advance(1);
    let (status, withdrawal) = f
        .server
        .post(
            "/v1/defi/withdrawal/prepare",
            &json!({"backing_id": backing_id, "wallet": wallet.to_string()}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{withdrawal}");
    let expected = withdrawal["expected_amount_base"].as_u64().unwrap();
    assert!(expected > 10 * SOL + 59 * SOL / 1_000, "{withdrawal}");
    let before = f.lamports(&wallet).await;
    let signature = f.sign_and_send(&withdrawal, &f.wallet).await;
    let received = f.lamports(&wallet).await - before;
    // Principal and interest, less the fee (the wrapped-SOL account's rent comes back too).
    assert!(
        received + 10_000 >= expected && received <= expected,
        "{received} vs {expected}"
    );
    assert_eq!(f.token_balance(collateral_account).await, 0);

    let (status, done) = f
        .server
        .post(
            "/v1/defi/withdrawal/confirm",
            &json!({"backing_id": backing_id, "tx_signature": signature,
                    "wallet": wallet.to_string()}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["status"], "withdrawn");
    assert_eq!(done["withdrawn_base"].as_u64(), Some(expected));
    let (_, allocation) = f.server.get(&path).await;
    assert_eq!(allocation["empty"], true);
    // A second withdrawal of it is refused.
    let (status, again) = f
        .server
        .post(
            "/v1/defi/withdrawal/prepare",
            &json!({"backing_id": backing_id, "wallet": wallet.to_string()}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
}

/// A wallet that confirms minutes after it sent (the app closed, a first confirm timed out)
/// meets a node whose status cache no longer holds the signature. The deposit and the
/// withdrawal are still recorded: confirm looks for the transaction itself, which the node
/// finds however long ago it landed. A signature that never landed stays pending.
/// A wallet confirms while its deposit is on the way, and the confirm waits for it. What the
/// deposit bought is read once it has landed: before, the reserve holds the rate of its last
/// refresh (a year ago here), and the deposit's own refresh moves it, so a receipt read then
/// would be more than was minted.
// program-test's warp is the one way to move slots; its deprecation is about v4's feature flag.
#[allow(deprecated)]
#[tokio::test]
async fn a_confirm_waiting_for_its_deposit_records_what_the_deposit_minted() {
    let f = Flow::start_with(|c| c.confirm_wait_ms = 20_000).await;
    let wallet = f.wallet.pubkey();
    let deposit = |amount: &'static str| {
        let f = &f;
        async move {
            let (status, prepared) = f
                .server
                .post(
                    "/v1/defi/deposit/prepare",
                    &json!({"wallet": wallet.to_string(), "token_symbol": "SOL",
                            "amount": amount, "protocol": "lend_b"}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{prepared}");
            prepared
        }
    };
    // The first deposit sets up the obligation; nobody refreshes the reserve for a year after.
    let first = deposit("10").await;
    let signature = f.sign_and_send(&first, &f.wallet).await;
    let backing_id = first["backing_id"].as_str().unwrap();
    let (status, confirmed) = f
        .post_backing("/v1/defi/deposit/confirm", backing_id, Some(&signature))
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    {
        let mut h = f.ledger.harness.lock().await;
        let slot = h.clock().await.slot;
        h.ctx
            .warp_to_slot(slot + klend::SLOTS_PER_YEAR as u64)
            .expect("warp");
    }
    let before = f.kamino_collateral(&wallet).await;
    let second = deposit("5").await;
    let backing_id = second["backing_id"].as_str().unwrap();
    let signed = chain::sign(&second, &f.wallet);
    let signature = signed.signatures[0].to_string();
    // The confirm goes first; the transaction is sent once the confirm asks the ledger for it.
    let asked_before = f.ledger.lookups();
    let confirming = f.post_backing("/v1/defi/deposit/confirm", backing_id, Some(&signature));
    let sending = async {
        common::eventually("the confirm to ask for its transaction", || async {
            f.ledger.lookups() > asked_before
        })
        .await;
        f.ledger.process(signed).await.expect("the deposit lands");
    };
    let ((status, confirmed), ()) = tokio::join!(confirming, sending);
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    let minted = f.kamino_collateral(&wallet).await - before;
    let recorded = defi_positions::Entity::find_by_id(backing_id.to_owned())
        .one(f.server.db.store.db())
        .await
        .unwrap()
        .expect("the position")
        .receipt_amount as u64;
    assert!(
        recorded <= minted && minted - recorded <= minted / 10_000,
        "recorded {recorded} receipt units, minted {minted}"
    );
}

#[tokio::test]
async fn a_confirm_sent_after_the_nodes_recent_statuses_still_records_the_move() {
    let f = Flow::start().await;
    let wallet = f.wallet.pubkey().to_string();
    let (backing_id, signature) = deposit_sent(&f, "lend_a", "2").await;

    // Ten minutes on, the node answers no status for anything that landed back then.
    f.ledger.forget_statuses();
    f.clock.advance(600);
    let (status, confirmed) = f
        .post_backing("/v1/defi/deposit/confirm", &backing_id, Some(&signature))
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(
        (&confirmed["status"], &confirmed["amount_sol"]),
        (&json!("confirmed"), &json!(2.0))
    );
    assert_eq!(f.positions_recorded().await, 1);

    // The withdrawal, confirmed as late.
    let (status, withdrawal) = f
        .post_backing("/v1/defi/withdrawal/prepare", &backing_id, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{withdrawal}");
    let signature = f.sign_and_send(&withdrawal, &f.wallet).await;
    f.clock.advance(600);
    let (status, done) = f
        .post_backing("/v1/defi/withdrawal/confirm", &backing_id, Some(&signature))
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["status"], "withdrawn");
    assert_eq!(
        done["withdrawn_base"], withdrawal["expected_amount_base"],
        "{done}"
    );

    // A signature the ledger never saw is still pending, and records nothing.
    let (_, prepared) = f
        .server
        .post(
            "/v1/defi/deposit/prepare",
            &json!({"wallet": wallet, "token_symbol": "SOL", "amount": 1, "protocol": "lend_a"}),
        )
        .await;
    let unknown = bs58::encode([9u8; 64]).into_string();
    let backing_id = prepared["backing_id"].as_str().unwrap();
    let (status, body) = f
        .post_backing("/v1/defi/deposit/confirm", backing_id, Some(&unknown))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "transaction_pending");
    assert_eq!(f.positions_recorded().await, 1);
}

/// Deposits a SOL `amount` (a decimal string) into `protocol` for the flow's wallet, signed and
/// sent: its backing id and the deposit's signature.
async fn deposit_sent(f: &Flow, protocol: &str, amount: &str) -> (String, String) {
    let (status, prepared) = f
        .server
        .post(
            "/v1/defi/deposit/prepare",
            &json!({"wallet": f.wallet.pubkey().to_string(), "token_symbol": "SOL",
                    "amount": amount, "protocol": protocol}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    let signature = f.sign_and_send(&prepared, &f.wallet).await;
    (
        prepared["backing_id"].as_str().unwrap().to_owned(),
        signature,
    )
}

/// [`deposit_sent`], confirmed: its backing id.
async fn deposit_confirmed(f: &Flow, protocol: &str, amount: &str) -> String {
    let (backing_id, signature) = deposit_sent(f, protocol, amount).await;
    let (status, confirmed) = f
        .post_backing("/v1/defi/deposit/confirm", &backing_id, Some(&signature))
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    backing_id
}

/// A wallet that prepared a withdrawal twice and signed the first: the two differ (a dust-sized
/// deposit landed in between, which the wallet's last backing sweeps), and the confirm, which
/// names only the backing, records the one that landed, with what it redeemed.
#[tokio::test]
async fn a_withdrawal_prepared_twice_is_confirmed_by_the_one_the_wallet_signed() {
    let f = Flow::start().await;
    let backing_id = deposit_confirmed(&f, "lend_a", "20").await;
    let (status, first) = f
        .post_backing("/v1/defi/withdrawal/prepare", &backing_id, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    // 0.01 SOL more lands (not confirmed): a twentieth of a per cent of the backing, within
    // the dust its last withdrawal sweeps, so a withdrawal prepared now redeems it too.
    deposit_sent(&f, "lend_a", "0.01").await;
    f.clock.advance(1);
    let (status, second) = f
        .post_backing("/v1/defi/withdrawal/prepare", &backing_id, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{second}");
    let (first_base, second_base) = (
        first["expected_amount_base"].as_u64().unwrap(),
        second["expected_amount_base"].as_u64().unwrap(),
    );
    assert!(
        second_base > first_base + SOL / 200,
        "{first_base} {second_base}"
    );

    // The wallet signs the first.
    let done = f.withdrawn(&first, &backing_id).await;
    assert_eq!(done["withdrawn_base"].as_u64(), Some(first_base), "{done}");
}

/// Anyone may ask for a prepare naming any wallet. A stranger who asks for sixty withdrawals of
/// the wallet's other backing after the wallet signed its own (more than the 50 newest a confirm
/// used to look through) cannot make that confirm, which names only the backing, miss it: the
/// confirm looks among the prepares made with the blockhash the landed transaction carries.
#[tokio::test]
async fn prepares_anyone_asks_for_the_wallet_do_not_hide_the_withdrawal_it_signed() {
    let f = Flow::start().await;
    let signed_backing = deposit_confirmed(&f, "lend_a", "2").await;
    let other_backing = deposit_confirmed(&f, "lend_a", "3").await;
    let (status, withdrawal) = f
        .post_backing("/v1/defi/withdrawal/prepare", &signed_backing, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{withdrawal}");
    let expected = withdrawal["expected_amount_base"].as_u64().unwrap();
    let signature = f.sign_and_send(&withdrawal, &f.wallet).await;

    // A few slots later (another blockhash), the stranger's sixty prepares, each newer.
    f.accrue(5).await;
    for _ in 0..60 {
        f.clock.advance(1);
        let (status, prepared) = f
            .server
            .post(
                "/v1/defi/withdrawal/prepare",
                &json!({"backing_id": other_backing, "wallet": f.wallet.pubkey().to_string()}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{prepared}");
    }
    let rows: Vec<_> = narrative_store::entities::prepared_transactions::Entity::find()
        .all(f.server.db.store.db())
        .await
        .unwrap()
        .into_iter()
        .filter(|row| row.kind == "defi_withdrawal")
        .collect();
    assert_eq!(rows.len(), 61);
    let signed_blockhash = &rows
        .iter()
        .find(|row| withdrawal["withdrawal_id"] == row.id.as_str())
        .expect("the signed one's row")
        .blockhash;
    assert!(signed_blockhash.is_some());
    assert_eq!(
        rows.iter()
            .filter(|r| &r.blockhash == signed_blockhash)
            .count(),
        1,
        "the stranger's were prepared with later blockhashes"
    );

    let (status, done) = f
        .post_backing(
            "/v1/defi/withdrawal/confirm",
            &signed_backing,
            Some(&signature),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["status"], "withdrawn", "{done}");
    assert_eq!(done["withdrawn_base"].as_u64(), Some(expected), "{done}");
    let other = defi_positions::Entity::find_by_id(other_backing)
        .one(f.server.db.store.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(other.status, "confirmed", "the other backing stays open");
}

/// A deposit prepare for the wallet's move asked for by a stranger (the same instructions, its
/// own backing id): the wallet's signature does not confirm the stranger's copy, asked for
/// once the move landed with another blockhash, or before the wallet's own prepare with the
/// same blockhash (each prepared message ends with a memo of its own id); the refusal names
/// the prepare the wallet signed, and the wallet's own confirm records it.
#[tokio::test]
async fn a_strangers_copy_of_a_deposit_cannot_take_the_wallets_signature() {
    let f = Flow::start().await;
    deposit_confirmed(&f, "lend_a", "2").await;
    let deposit = || {
        let body = json!({"wallet": f.wallet.pubkey().to_string(), "token_symbol": "SOL",
                          "amount": "1", "protocol": "lend_a"});
        let server = &f.server;
        async move { server.post("/v1/defi/deposit/prepare", &body).await }
    };
    let confirm = |backing_id: &str, signature: &str| {
        let body = json!({"backing_id": backing_id, "wallet": f.wallet.pubkey().to_string(),
                          "tx_signature": signature});
        let server = &f.server;
        async move { server.post("/v1/defi/deposit/confirm", &body).await }
    };
    let message = |prepared: &Value| {
        narrative_sdk::tx::from_base64(prepared["transaction"].as_str().unwrap())
            .unwrap()
            .message
    };

    // Another blockhash: asked for a few slots after the wallet's landed.
    let (signed, signature) = deposit_sent(&f, "lend_a", "1").await;
    f.accrue(5).await;
    f.clock.advance(11);
    let (status, copy) = deposit().await;
    assert_eq!(status, StatusCode::OK, "{copy}");
    let theirs = message(&copy);
    let landed_blockhash = f
        .ledger
        .transaction(&signature.parse().unwrap())
        .await
        .unwrap()
        .unwrap()
        .recent_blockhash;
    assert_ne!(
        theirs.recent_blockhash, landed_blockhash,
        "another blockhash"
    );
    let (status, refused) = confirm(copy["backing_id"].as_str().unwrap(), &signature).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["error"], "transaction_mismatch");
    assert_eq!(refused["prepared_id"], signed.as_str(), "{refused}");
    assert_eq!(f.positions_recorded().await, 1);
    let (status, confirmed) = confirm(&signed, &signature).await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["backing_id"], signed.as_str(), "{confirmed}");

    // The same blockhash, and the stranger asks first: each prepare's memo names its own row,
    // so the two are different messages and the wallet's signature is its own prepare's alone.
    f.accrue(5).await;
    f.clock.advance(11);
    f.ledger.hold_blockhash().await;
    let (status, copy) = deposit().await;
    assert_eq!(status, StatusCode::OK, "{copy}");
    f.clock.advance(1);
    let (status, own) = deposit().await;
    assert_eq!(status, StatusCode::OK, "{own}");
    f.ledger.release_blockhash();
    let (ours, theirs) = (message(&own), message(&copy));
    assert_eq!(
        ours.recent_blockhash, theirs.recent_blockhash,
        "one blockhash"
    );
    assert_ne!(ours, theirs, "two messages");
    let memo = ours.instructions.last().unwrap();
    assert_eq!(
        ours.account_keys[usize::from(memo.program_id_index)],
        narrative_sdk::memo::MEMO_PROGRAM
    );
    assert_eq!(memo.data, own["backing_id"].as_str().unwrap().as_bytes());
    let signature = f.sign_and_send(&own, &f.wallet).await;
    let (status, refused) = confirm(copy["backing_id"].as_str().unwrap(), &signature).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["error"], "transaction_mismatch");
    assert_eq!(refused["prepared_id"], own["backing_id"], "{refused}");
    let (status, confirmed) = confirm(own["backing_id"].as_str().unwrap(), &signature).await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["backing_id"], own["backing_id"], "{confirmed}");
    assert_eq!(f.positions_recorded().await, 3);
    f.server.stop().await;
}

/// A price source that never answers.
struct NoPrice;

#[async_trait::async_trait]
impl PriceFeed for NoPrice {
    async fn quote(&self) -> anyhow::Result<PriceQuote> {
        anyhow::bail!("the price source is down")
    }
}

/// A SOL backing's withdrawal needs no price: with the price source down, `lend_a/withdraw`
/// still prepares it, with its yield, while the allocation (valued in USD) answers 503.
#[tokio::test]
async fn a_sol_withdrawal_is_prepared_while_the_price_source_is_down() {
    let f = Flow::start_priced(Arc::new(NoPrice), |_| {}).await;
    let backing_id = deposit_confirmed(&f, "lend_a", "10").await;
    f.accrue(100).await;
    let wallet = f.wallet.pubkey().to_string();
    let (status, allocation) = f.server.get(&format!("/v1/defi/allocation/{wallet}")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{allocation}");
    assert_eq!(allocation["error"], "price_unavailable");
    let (status, named) = f
        .server
        .post(
            "/v1/defi/lend_a/withdraw",
            &json!({"wallet_address": wallet, "amount_sol": 10.0, "receipt": backing_id}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{named}");
    assert_eq!(named["backing_id"], backing_id.as_str());
    let earned = named["yield_earned_sol"].as_f64().unwrap();
    assert!(earned > 0.0, "{named}");
    let done = f.withdrawn(&named, &backing_id).await;
    let withdrawn = done["withdrawn_base"].as_u64().unwrap();
    assert!(withdrawn > 10 * SOL, "{done}");
    f.server.stop().await;
}

/// The wallet's last open backing at a venue redeems what it bought and its dust, not what the
/// wallet holds beyond that: a later deposit that landed but is not confirmed yet keeps its
/// receipt, and once confirmed it is withdrawn with it.
#[tokio::test]
async fn the_last_backings_withdrawal_leaves_a_later_deposits_receipt_alone() {
    let f = Flow::start().await;
    let first = deposit_confirmed(&f, "lend_a", "2").await;
    let (later, later_signature) = deposit_sent(&f, "lend_a", "1").await;
    let collateral_account = associated_token_account(
        &f.wallet.pubkey(),
        &f.market.collateral_mint,
        &TOKEN_PROGRAM,
    );
    let held = f.token_balance(collateral_account).await;

    // The first backing is the wallet's only open one, yet it redeems only its own receipt.
    let (status, withdrawal) = f
        .post_backing("/v1/defi/withdrawal/prepare", &first, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{withdrawal}");
    let expected = withdrawal["expected_amount_base"].as_u64().unwrap();
    assert!(
        (2 * SOL..2 * SOL + SOL / 1_000).contains(&expected),
        "{withdrawal}"
    );
    let signature = f.sign_and_send(&withdrawal, &f.wallet).await;
    let (status, done) = f
        .post_backing("/v1/defi/withdrawal/confirm", &first, Some(&signature))
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    let left = f.token_balance(collateral_account).await;
    // About a third of what the wallet held: the later deposit's 1 SOL of the 3.
    assert!(
        left * 3 > held - held / 100 && left * 3 < held + held / 100,
        "{left} of {held}"
    );

    // The later deposit, confirmed now, comes back whole, and nothing is left behind.
    let backing = later.as_str();
    let (status, _) = f
        .post_backing("/v1/defi/deposit/confirm", backing, Some(&later_signature))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, withdrawal) = f
        .post_backing("/v1/defi/withdrawal/prepare", backing, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{withdrawal}");
    let expected = withdrawal["expected_amount_base"].as_u64().unwrap();
    assert!((SOL..SOL + SOL / 1_000).contains(&expected), "{withdrawal}");
    f.sign_and_send(&withdrawal, &f.wallet).await;
    assert_eq!(f.token_balance(collateral_account).await, 0);
}

#[tokio::test]
async fn bad_requests_and_unwired_venues_are_refused_in_the_envelope() {
    let f = Flow::start().await;
    let wallet = f.wallet.pubkey().to_string();
    let prepare = |body: Value| {
        let server = &f.server;
        async move { server.post("/v1/defi/deposit/prepare", &body).await }
    };
    for (amount, why) in [
        (json!(0), "zero"),
        (json!(-1), "negative"),
        (json!("NaN"), "not a number"),
        (json!("0.0000000001"), "more decimals than SOL"),
        (json!("18446744074"), "beyond u64 lamports"),
        (json!(0.001), "below the 0.01 SOL minimum"),
    ] {
        let (status, body) =
            prepare(json!({"wallet": wallet, "token_symbol": "SOL", "amount": amount})).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{why}: {body}");
        assert!(body["error"].is_string(), "{why}: {body}");
    }
    let (status, body) =
        prepare(json!({"wallet": wallet, "token_symbol": "DOGE", "amount": 1})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) =
        prepare(json!({"wallet": "not-a-wallet", "token_symbol": "SOL", "amount": 1})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    // USDC has no reserve configured here.
    let (status, body) = prepare(
        json!({"wallet": wallet, "token_symbol": "USDC", "amount": 5, "protocol": "lend_a"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"], "unsupported_protocol");
    for protocol in ["stake_a", "stake_b", "lend_c", "pool_a"] {
        let (status, body) = prepare(
            json!({"wallet": wallet, "token_symbol": "SOL", "amount": 1, "protocol": protocol}),
        )
        .await;
        assert_eq!(
            status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{protocol}: {body}"
        );
        assert_eq!(body["error"], "coming_soon", "{protocol}");
        assert_eq!(body["feature"], "coming_soon", "{protocol}");
    }
    // p0 has routes of its own: the generic flow does not take it.
    let (status, body) =
        prepare(json!({"wallet": wallet, "token_symbol": "SOL", "amount": 1, "protocol": "p0"}))
            .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"], "unsupported_protocol");
    // The SOL venues' own routes take `amount_sol` in lamports' precision and range, refused
    // at the boundary in the envelope, whatever the venue (stake_b is not wired here).
    let receipt = "00000000-0000-4000-8000-000000000000";
    for (path, extra) in [
        ("/v1/defi/lend_a/deposit", json!({})),
        ("/v1/defi/lend_a/withdraw", json!({"receipt": receipt})),
        ("/v1/defi/stake_b/withdraw", json!({})),
    ] {
        for (amount, why) in [
            (json!(5e-324), "has more than 9 decimals"),
            (json!("18446744073.709551616"), "is too large for the token"),
            (json!(0), "must be greater than 0"),
        ] {
            let mut body = json!({"wallet_address": wallet, "amount_sol": amount});
            for (k, v) in extra.as_object().unwrap() {
                body[k] = v.clone();
            }
            let (status, answer) = f.server.post(path, &body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{path} {amount}: {answer}");
            assert_eq!(
                answer["error"],
                format!("invalid request body: amount_sol: {why}"),
                "{path} {amount}"
            );
        }
    }
    // lend_a's own deposit route: the generic answer with its receipt, the backing id.
    let (status, body) = f
        .server
        .post(
            "/v1/defi/lend_a/deposit",
            &json!({"wallet_address": wallet, "amount_sol": 0.5}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (&body["protocol"], &body["amount_base"]),
        (&json!("lend_a"), &json!(SOL / 2))
    );
    assert_eq!(body["receipt"], body["backing_id"]);
    // pool_a and the staking deposit are not wired: spec 7's 503 with its `feature`.
    for path in ["/v1/defi/pool_a/deposit", "/v1/staking/deposit"] {
        let (status, body) = f.server.post(path, &json!({})).await;
        assert_eq!(
            (status, body["error"].as_str(), body["feature"].as_str()),
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Some("coming_soon"),
                Some("coming_soon")
            ),
            "{path}: {body}"
        );
    }
    // A signature the ledger never saw: refused, nothing recorded.
    let (_, prepared) =
        prepare(json!({"wallet": wallet, "token_symbol": "SOL", "amount": 1})).await;
    let unknown = bs58::encode([7u8; 64]).into_string();
    let backing_id = prepared["backing_id"].as_str().unwrap();
    let (status, body) = f
        .post_backing("/v1/defi/deposit/confirm", backing_id, Some(&unknown))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "transaction_pending");
    let db = f.server.db.store.db();
    assert_eq!(defi_positions::Entity::find().count(db).await.unwrap(), 0);
    // The staking read of a wallet with nothing staked.
    let (status, staking) = f.server.get(&format!("/v1/staking/{wallet}")).await;
    assert_eq!(status, StatusCode::OK, "{staking}");
    assert_eq!(staking["staked_amount"], 0.0);
    assert_eq!(staking["positions"], json!([]));
}

#[tokio::test]
async fn a_kamino_deposit_sets_up_the_obligation_once_and_comes_back_with_its_interest() {
    let f = Flow::start().await;
    let wallet = f.wallet.pubkey();
    let k = f.kamino;

    // lend_b's APY from its reserve: 50 % utilised on a 0 → 20 % curve is a 10 % borrow APR,
    // a 5 % supply APR, 5.127 % compounded per slot. Routing prefers lend_a's 5.786 %.
    let (_, apys) = f.server.get("/v1/defi/apys").await;
    let lend_b = apys["apys"]["lend_b"].as_f64().unwrap();
    assert!((lend_b - 5.127).abs() < 0.001, "{apys}");
    assert_eq!(apys["sources"]["lend_b"]["source"], "ledger", "{apys}");
    assert_eq!(apys["protocols"]["lend_b"]["testnet_available"], true);
    let (status, routed) = f
        .server
        .post(
            "/v1/defi/deposit/prepare",
            &json!({"wallet": wallet.to_string(), "token_symbol": "SOL", "amount": 1}),
        )
        .await;
    assert_eq!(
        (status, &routed["protocol"]),
        (StatusCode::OK, &json!("lend_a"))
    );

    // The first lend_b deposit: the wallet's user metadata and obligation first, then the
    // deposit.
    let (status, first) = f
        .server
        .post(
            "/v1/defi/lend_b/deposit",
            &json!({"wallet_address": wallet.to_string(), "symbol": "SOL", "amount_base": 10 * SOL}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first["protocol"], "lend_b");
    assert_eq!(first["status"], "ready_to_sign");
    assert_eq!(first["transactions"], 2);
    assert_eq!(first["transactions_to_sign"][1], first["transaction"]);
    let signatures = f.sign_and_send_all(&first, &f.wallet).await;
    // 10 SOL at 1,900 collateral units per 2,000 SOL (a little less: interest accrued since
    // genesis) sit in the obligation; the SOL is in the reserve's supply.
    let collateral = f.kamino_collateral(&wallet).await;
    assert!(
        (9_499_000_000..9_500_000_000).contains(&collateral),
        "{collateral}"
    );
    assert_eq!(
        f.token_balance(k.liquidity_supply).await,
        klend::START_AVAILABLE + 10 * SOL
    );
    assert_eq!(f.token_balance(k.collateral_vault).await, collateral);

    // A stranger's own deposit lands too (its own obligation).
    let (_, theirs) = f
        .server
        .post(
            "/v1/defi/deposit/prepare",
            &json!({"wallet": f.stranger.pubkey().to_string(), "token_symbol": "SOL",
                    "amount": 3, "protocol": "lend_b"}),
        )
        .await;
    let their_signature = f.sign_and_send(&theirs, &f.stranger).await;
    assert!(f.kamino_collateral(&f.stranger.pubkey()).await > 2 * SOL);

    // Confirming with the set-up transaction's signature, or with the stranger's deposit, is
    // refused: neither is the prepared transaction. Nothing is recorded.
    let backing_id = first["backing_id"].as_str().unwrap().to_owned();
    let confirm = |sig: &str| json!({"backing_id": backing_id, "tx_signature": sig, "wallet": wallet.to_string()});
    for (signature, what) in [
        (&signatures[0], "the set-up transaction"),
        (&their_signature, "another wallet's deposit"),
    ] {
        let (status, refused) = f
            .server
            .post("/v1/defi/deposit/confirm", &confirm(signature))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{what}: {refused}");
        assert_eq!(refused["error"], "transaction_mismatch", "{what}");
    }
    assert_eq!(f.positions_recorded().await, 0);
    let (status, confirmed) = f
        .server
        .post("/v1/defi/deposit/confirm", &confirm(&signatures[1]))
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["protocol"], "lend_b");
    assert_eq!(f.positions_recorded().await, 1);

    // A second deposit needs no set-up any more: one transaction.
    let (status, second) = f
        .server
        .post(
            "/v1/defi/deposit/prepare",
            &json!({"wallet": wallet.to_string(), "token_symbol": "SOL", "amount": "2",
                    "protocol": "lend_b"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{second}");
    assert_eq!(second["status"], "ready_to_confirm");
    assert_eq!(second["transactions"], 1);
    let second_signature = f.sign_and_send(&second, &f.wallet).await;

    // While the RPC node does not answer: a prepare and a confirm get 503 and write nothing.
    let prepared_rows = || async {
        narrative_store::entities::prepared_transactions::Entity::find()
            .count(f.server.db.store.db())
            .await
            .unwrap()
    };
    let rows_before = prepared_rows().await;
    f.ledger.set_offline(true);
    f.clock.advance(11); // past the rate cache, so the venue is asked
    let (status, down) = f
        .server
        .post(
            "/v1/defi/deposit/prepare",
            &json!({"wallet": wallet.to_string(), "token_symbol": "SOL", "amount": 1,
                    "protocol": "lend_b"}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{down}");
    let second_confirm = json!({"backing_id": second["backing_id"], "tx_signature": second_signature,
                                "wallet": wallet.to_string()});
    let (status, down) = f
        .server
        .post("/v1/defi/deposit/confirm", &second_confirm)
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{down}");
    assert_eq!(prepared_rows().await, rows_before);
    assert_eq!(f.positions_recorded().await, 1);
    // Back online, the same confirm records it.
    f.ledger.set_offline(false);
    let (status, confirmed) = f
        .server
        .post("/v1/defi/deposit/confirm", &second_confirm)
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(f.positions_recorded().await, 2);

    // lend_a's withdrawal route does not take a lend_b backing.
    let (status, refused) = f
        .server
        .post(
            "/v1/defi/lend_a/withdraw",
            &json!({"wallet_address": wallet.to_string(), "amount_sol": 2,
                    "receipt": second["backing_id"]}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["error"], "unsupported_protocol");

    let path = format!("/v1/defi/allocation/{wallet}");
    let (_, allocation) = f.server.get(&path).await;
    assert_eq!(allocation["total_sol"], 12.0, "{allocation}");
    assert_eq!(allocation["positions"].as_array().unwrap().len(), 2);
    assert_eq!(allocation["allocation"][0]["protocol"], "lend_b");

    // A tenth of a year of slots: 1,000 SOL lent at 9.9 % (the curve at 49.6 % utilised) is
    // ~9.9 SOL more over ~2,015 SOL of liquidity, so the wallet's 12 SOL earn ~0.059 SOL.
    f.accrue_kamino(6_307_200).await;
    f.clock.advance(11);
    let (_, earned) = f.server.get(&format!("/v1/defi/yield/{wallet}")).await;
    let yield_sol = earned["yield_earned_sol"].as_f64().unwrap();
    assert!((yield_sol - 0.0590).abs() < 0.001, "{earned}");

    // The per-venue withdrawal names a backing by its amount: 2 SOL is the second deposit;
    // an amount no backing has is not found.
    let per_venue = |amount: u64| json!({"wallet_address": wallet.to_string(), "symbol": "SOL", "amount_base": amount});
    let (status, none) = f
        .server
        .post("/v1/defi/lend_b/withdraw", &per_venue(5 * SOL))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{none}");
    let (status, withdrawal) = f
        .server
        .post("/v1/defi/lend_b/withdraw", &per_venue(2 * SOL))
        .await;
    assert_eq!(status, StatusCode::OK, "{withdrawal}");
    assert_eq!(withdrawal["backing_id"], second["backing_id"]);
    // The second backing, then the first: the wallet's last open backing at the venue redeems
    // everything the obligation holds of it, so no rounding dust stays behind.
    let mut paid = 0;
    for backing in [second["backing_id"].clone(), json!(backing_id)] {
        let withdrawal = if backing == second["backing_id"] {
            withdrawal.clone()
        } else {
            let (status, withdrawal) = f
                .server
                .post(
                    "/v1/defi/withdrawal/prepare",
                    &json!({"backing_id": backing, "wallet": wallet.to_string()}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{withdrawal}");
            withdrawal
        };
        let expected = withdrawal["expected_amount_base"]
            .as_u64()
            .expect("expected");
        let before = f.lamports(&wallet).await;
        let signature = f.sign_and_send(&withdrawal, &f.wallet).await;
        let received = f.lamports(&wallet).await - before;
        assert!(
            received + 10_000 >= expected && received <= expected,
            "{received} vs {expected}"
        );
        paid += expected;
        let (status, done) = f
            .server
            .post(
                "/v1/defi/withdrawal/confirm",
                &json!({"backing_id": backing, "tx_signature": signature,
                        "wallet": wallet.to_string()}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{done}");
        assert_eq!(done["status"], "withdrawn");
    }
    // Principal and interest came back; the obligation holds nothing of the reserve; every
    // collateral unit minted for the wallet was burned (the stranger's remain).
    assert!(paid > 12 * SOL + 58 * SOL / 1_000, "{paid}");
    assert_eq!(f.kamino_collateral(&wallet).await, 0);
    assert_eq!(
        f.token_balance(k.collateral_vault).await,
        f.kamino_collateral(&f.stranger.pubkey()).await
    );
    let (_, allocation) = f.server.get(&path).await;
    assert_eq!(allocation["empty"], true, "{allocation}");
}

#[tokio::test]
async fn a_kamino_deposit_the_reserve_would_refuse_is_refused_before_the_wallet_signs() {
    let f = Flow::start().await;
    let wallet = f.wallet.pubkey();
    let deposit = |amount: u64| {
        json!({"wallet": wallet.to_string(), "token_symbol": "SOL", "amount": amount,
               "protocol": "lend_b"})
    };

    // Prepared while the reserve has room: the wallet's set-up, then the deposit.
    let (status, early) = f
        .server
        .post("/v1/defi/deposit/prepare", &deposit(10))
        .await;
    assert_eq!(status, StatusCode::OK, "{early}");
    assert_eq!(early["transactions"], 2);

    // The market's admin lowers the deposit limit to 5 SOL above the reserve's supply (2,000
    // SOL as installed, not refreshed since).
    let supply = klend::START_AVAILABLE + klend::START_BORROWED;
    f.edit_kamino_reserve(|data| klend::set_deposit_limit(data, supply + 5 * SOL))
        .await;

    // What was prepared before fails on chain at the deposit, as the program refuses it: the
    // double checks the limit too.
    let txs = early["transactions_to_sign"].as_array().unwrap();
    let signed = |tx: &Value| chain::sign(&json!({"transaction": tx}), &f.wallet);
    f.ledger
        .process(signed(&txs[0]))
        .await
        .expect("the set-up lands");
    let failed = f.ledger.process(signed(&txs[1])).await;
    let deposit_at = chain::anchor_instruction_at(
        &txs[1],
        "deposit_reserve_liquidity_and_obligation_collateral_v2",
    );
    assert_eq!(
        failed,
        Err(format!("InstructionError({deposit_at}, InvalidArgument)")),
        "the deposit instruction fails"
    );
    assert_eq!(f.kamino_collateral(&wallet).await, 0);

    // Asked now, the prepare refuses it before the wallet signs, naming the room left; nothing
    // is stored.
    let rows = f.prepared_rows().await;
    let (status, refused) = f
        .server
        .post("/v1/defi/deposit/prepare", &deposit(10))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["error"], "amount_above_deposit_limit", "{refused}");
    assert_eq!(refused["room_base"], 5 * SOL, "{refused}");
    let (status, refused) = f
        .server
        .post(
            "/v1/defi/lend_b/deposit",
            &json!({"wallet_address": wallet.to_string(), "symbol": "SOL", "amount_base": 5 * SOL + 1}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["error"], "amount_above_deposit_limit", "{refused}");
    assert_eq!(f.prepared_rows().await, rows);

    // Within the room (less the interest the deposit's own refresh accrues) it lands.
    let (status, within) = f.server.post("/v1/defi/deposit/prepare", &deposit(4)).await;
    assert_eq!(status, StatusCode::OK, "{within}");
    let signature = f.sign_and_send(&within, &f.wallet).await;
    let (status, confirmed) = f
        .post_backing(
            "/v1/defi/deposit/confirm",
            within["backing_id"].as_str().unwrap(),
            Some(&signature),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(f.positions_recorded().await, 1);

    // An obsolete reserve takes nothing: 503 without a retry (it will not come back), and
    // nothing stored.
    f.edit_kamino_reserve(|data| klend::set_status(data, klend::STATUS_OBSOLETE))
        .await;
    let rows = f.prepared_rows().await;
    let (status, retry_after, refused) = f
        .server
        .post_with_retry_after("/v1/defi/deposit/prepare", &deposit(1))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    assert_eq!(retry_after, None);
    assert_eq!(refused["error"], "venue_reserve_obsolete", "{refused}");
    assert_eq!(f.prepared_rows().await, rows);
    assert_eq!(f.positions_recorded().await, 1);

    // Automatic routing passes a venue that would refuse the deposit on to the next. lend_b,
    // active again, is made the better venue (75 % lent out: a 15 % borrow APR, about 11 %
    // supply APR against lend_a's 5.8 %) but is still full.
    f.edit_kamino_reserve(|data| {
        klend::set_status(data, 0);
        klend::set_borrowed(data, 3 * klend::START_BORROWED);
    })
    .await;
    f.clock.advance(61); // past the APY read's 60 s
    let (_, apys) = f.server.get("/v1/defi/apys").await;
    let apy = |venue: &str| apys["apys"][venue].as_f64().unwrap();
    assert!(apy("lend_b") > 2.0 * apy("lend_a"), "{apys}");
    let routed = json!({"wallet": wallet.to_string(), "token_symbol": "SOL", "amount": 1});
    let (status, prepared) = f.server.post("/v1/defi/deposit/prepare", &routed).await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(prepared["protocol"], "lend_a", "{prepared}");
    // With room again, the better venue takes it.
    f.edit_kamino_reserve(|data| klend::set_deposit_limit(data, u64::MAX))
        .await;
    let (status, prepared) = f.server.post("/v1/defi/deposit/prepare", &routed).await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(prepared["protocol"], "lend_b", "{prepared}");
}

/// Kamino caps the liquidity that may leave a reserve in an interval (`WithdrawalCapReached`).
/// A withdrawal prepared before the cap tightened fails on chain; asked now, the prepare refuses
/// it before the wallet signs, with a retry-after at the interval's end, and stores nothing; once
/// the interval is over the same withdrawal is prepared, lands and counts against the cap.
#[tokio::test]
async fn a_withdrawal_past_kaminos_withdrawal_cap_is_refused_until_the_interval_ends() {
    let f = Flow::start().await;
    let backing_id = &deposit_confirmed(&f, "lend_b", "10").await;
    let (status, early) = f
        .post_backing("/v1/defi/withdrawal/prepare", backing_id, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{early}");

    // The market's admin caps withdrawals at 12 SOL an hour; the hour began ten minutes ago and
    // 9 SOL have left since, so 3 SOL may go until it ends in 50 minutes.
    let now = f.ledger.harness.lock().await.now().await;
    let start = u64::try_from(now - 600).unwrap();
    f.edit_kamino_reserve(|data| {
        klend::set_cap(
            data,
            klend::Cap::Withdrawals,
            12 * SOL as i64,
            9 * SOL as i64,
            start,
            3_600,
        )
    })
    .await;

    // What was prepared before fails on chain at the withdrawal: the double counts the cap too.
    let withdraw_at = chain::anchor_instruction_at(
        &early["transaction"],
        "withdraw_obligation_collateral_and_redeem_reserve_collateral_v2",
    );
    let failed = f.ledger.process(chain::sign(&early, &f.wallet)).await;
    assert_eq!(
        failed,
        Err(format!("InstructionError({withdraw_at}, InvalidArgument)")),
        "the withdrawal instruction fails"
    );

    // Asked now, refused before signing: retry when the interval ends; nothing stored.
    let (retry_after, refused) = f.withdrawal_refused_for_liquidity(backing_id).await;
    assert_eq!(retry_after.as_deref(), Some("3000"), "the interval's end");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains(&format!("{} base units are left", 3 * SOL)),
        "{refused}"
    );

    // The hour over, the withdrawal is prepared, lands and is recorded; the cap's new interval
    // starts at the withdrawal and counts the liquidity it took out of the reserve.
    f.ledger.harness.lock().await.warp_by(3_000).await;
    let (status, withdrawal) = f
        .post_backing("/v1/defi/withdrawal/prepare", backing_id, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{withdrawal}");
    let expected = withdrawal["expected_amount_base"].as_u64().unwrap();
    assert!(
        (10 * SOL - 10..=10 * SOL).contains(&expected),
        "{withdrawal}"
    );
    let reserve = || async {
        let raw = f
            .ledger
            .harness
            .lock()
            .await
            .raw_account(f.kamino.sol_reserve)
            .await
            .unwrap();
        (
            lend_b::Reserve::decode(&raw.data).unwrap().available,
            klend::cap_total(&raw.data, klend::Cap::Withdrawals),
        )
    };
    let (available_before, _) = reserve().await;
    let landed_at = f.ledger.harness.lock().await.now().await;
    f.withdrawn(&withdrawal, backing_id).await;
    let (available_after, cap) = reserve().await;
    let taken = available_before - available_after;
    // The refresh in the withdrawal's transaction accrued the interest of the hour.
    assert!(
        (expected..expected + SOL / 1_000).contains(&taken),
        "{taken}"
    );
    assert_eq!(cap, (taken as i64, u64::try_from(landed_at).unwrap()));
}

/// A Kamino reserve whose liquidity is lent out cannot pay a withdrawal (the program refuses
/// with `InsufficientLiquidity`): the prepare says so before the wallet signs, with a retry, and
/// stores nothing; once liquidity is back the same withdrawal is prepared.
#[tokio::test]
async fn a_withdrawal_the_reserve_cannot_pay_now_is_refused_before_the_wallet_signs() {
    let f = Flow::start().await;
    let backing_id = &deposit_confirmed(&f, "lend_b", "10").await;

    // Borrowers take all but 1 SOL of the reserve's liquidity.
    f.edit_kamino_reserve(|data| klend::set_available(data, SOL))
        .await;
    let (retry_after, _) = f.withdrawal_refused_for_liquidity(backing_id).await;
    assert!(retry_after.is_some());

    // Liquidity back (repaid), the withdrawal is prepared and pays the 10 SOL.
    f.edit_kamino_reserve(|data| klend::set_available(data, klend::START_AVAILABLE + 10 * SOL))
        .await;
    let (status, withdrawal) = f
        .post_backing("/v1/defi/withdrawal/prepare", backing_id, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{withdrawal}");
    let expected = withdrawal["expected_amount_base"].as_u64().unwrap();
    assert!(
        (10 * SOL - 10..=10 * SOL).contains(&expected),
        "{withdrawal}"
    );
}

/// Kamino's lending market in emergency mode refuses every refresh and user instruction
/// (`GlobalEmergencyMode`). A deposit and a withdrawal prepared before it fail on chain; asked
/// now, both are refused with 503 `venue_paused` (retry shortly) and nothing is stored, and
/// automatic routing passes over Kamino to the next venue even where Kamino pays more. Out of
/// emergency mode the withdrawal lands.
#[tokio::test]
async fn kaminos_emergency_mode_is_answered_before_the_wallet_signs() {
    let f = Flow::start().await;
    let wallet = f.wallet.pubkey();
    let backing_id = &deposit_confirmed(&f, "lend_b", "10").await;
    let (status, early_withdrawal) = f
        .post_backing("/v1/defi/withdrawal/prepare", backing_id, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{early_withdrawal}");
    let into_kamino = json!({"wallet": wallet.to_string(), "token_symbol": "SOL", "amount": "1", "protocol": "lend_b"});
    let (status, early_deposit) = f
        .server
        .post("/v1/defi/deposit/prepare", &into_kamino)
        .await;
    assert_eq!(status, StatusCode::OK, "{early_deposit}");
    assert_eq!(early_deposit["transactions"], 1, "the obligation exists");
    let collateral = f.kamino_collateral(&wallet).await;
    assert!(collateral > 0);

    // Kamino pays more than lend_a (75 % lent out), then its market's owner turns emergency
    // mode on: both prepared transactions fail at their first reserve refresh.
    f.edit_kamino_reserve(|data| klend::set_borrowed(data, 3 * klend::START_BORROWED))
        .await;
    f.edit_kamino_market(|data| klend::set_emergency_mode(data, true))
        .await;
    for early in [&early_deposit, &early_withdrawal] {
        let refresh_at = chain::anchor_instruction_at(&early["transaction"], "refresh_reserve");
        assert_eq!(
            f.ledger.process(chain::sign(early, &f.wallet)).await,
            Err(format!("InstructionError({refresh_at}, InvalidArgument)")),
            "the refresh fails"
        );
    }
    assert_eq!(f.kamino_collateral(&wallet).await, collateral);

    // Asked now, both are refused before the wallet signs; nothing is stored.
    let rows = f.prepared_rows().await;
    let withdrawal = json!({"backing_id": backing_id, "wallet": wallet.to_string()});
    for (path, body) in [
        ("/v1/defi/deposit/prepare", &into_kamino),
        ("/v1/defi/withdrawal/prepare", &withdrawal),
    ] {
        let (status, retry_after, refused) = f.server.post_with_retry_after(path, body).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{path}: {refused}");
        assert_eq!(refused["error"], "venue_paused", "{refused}");
        assert!(
            refused["message"]
                .as_str()
                .unwrap()
                .contains("emergency mode"),
            "{refused}"
        );
        assert_eq!(retry_after.as_deref(), Some("2"), "{path}");
    }
    assert_eq!(f.prepared_rows().await, rows);

    // Routed, the deposit goes to lend_a although Kamino pays more.
    f.clock.advance(61); // past the APY read's 60 s
    let (_, apys) = f.server.get("/v1/defi/apys").await;
    let apy = |venue: &str| apys["apys"][venue].as_f64().unwrap();
    assert!(apy("lend_b") > apy("lend_a"), "{apys}");
    let routed = json!({"wallet": wallet.to_string(), "token_symbol": "SOL", "amount": 1});
    let (status, prepared) = f.server.post("/v1/defi/deposit/prepare", &routed).await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    assert_eq!(prepared["protocol"], "lend_a", "{prepared}");

    // Out of emergency mode, the withdrawal is prepared again and lands.
    f.edit_kamino_market(|data| klend::set_emergency_mode(data, false))
        .await;
    let (status, prepared) = f
        .post_backing("/v1/defi/withdrawal/prepare", backing_id, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    f.withdrawn(&prepared, backing_id).await;
    assert_eq!(f.kamino_collateral(&wallet).await, 0);
}
