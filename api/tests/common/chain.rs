//! A test server whose ledger is a program-test bank at the wall clock, and what a wallet does
//! with a prepared transaction.

use std::sync::Arc;

use integration_tests::harness::{Harness, HarnessOptions};
use narrative_api::clock::{SharedClock, SystemClock};
use narrative_api::providers::human::LocalVerifier;
use narrative_api::{Config, Providers};
use serde_json::Value;
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction::Transaction;

use super::bank::BankLedger;
use super::eventually;
use super::TestServer;

/// The `cf_token` the local human verifier accepts in these tests.
pub const HUMAN_TOKEN: &str = "human";

/// The lower-case hex SHA-256 of what a publish `body` records, encoded as the publish body's
/// `creator_signature` documents it (built here from that text, not from the service's code):
/// `<field>:<UTF-8 length>:<value>` and a line feed per field, in the documented order, absent
/// fields empty. The bodies of these tests send their values trimmed and single-spaced.
pub fn publish_content_hash(body: &Value) -> String {
    use sha2::{Digest, Sha256};
    let mut encoded = String::new();
    for field in [
        "thesis",
        "category",
        "deadline_days",
        "title",
        "sub_category",
        "asset_tag",
        "resolution_source",
        "criteria",
    ] {
        let value = match &body[field] {
            Value::String(text) => text.trim().to_owned(),
            Value::Number(n) => n.to_string(),
            _ => String::new(),
        };
        encoded.push_str(&format!("{field}:{}:{value}\n", value.len()));
    }
    hex::encode(Sha256::digest(encoded.as_bytes()))
}

/// The message `body`'s creator signs to publish its content with its `signature`.
pub fn publish_message(body: &Value, issued_at: i64) -> String {
    format!(
        "narrative-market-service:publish:{}:{}:issued-at:{issued_at}",
        body["signature"].as_str().unwrap_or_default(),
        publish_content_hash(body)
    )
}

/// `body` with `signer`'s proof of its content (`creator_signature`, `issued_at`).
pub fn sign_publish(mut body: Value, signer: &Keypair, issued_at: i64) -> Value {
    let message = publish_message(&body, issued_at);
    body["creator_signature"] = signer.sign_message(message.as_bytes()).to_string().into();
    body["issued_at"] = issued_at.into();
    body
}

/// A harness moved to the wall clock (the api checks deadlines and windows against it) behind a
/// server, with `prepare` run on the harness first.
pub async fn start_on_bank(configure: impl FnOnce(&mut Config)) -> (TestServer, Arc<BankLedger>) {
    start_on_bank_with(HarnessOptions::default(), |_, c| configure(c)).await
}

/// [`start_on_bank`] with harness options, and the started harness at hand when configuring.
pub async fn start_on_bank_with(
    options: HarnessOptions,
    configure: impl FnOnce(&Harness, &mut Config),
) -> (TestServer, Arc<BankLedger>) {
    start_on_bank_at(Arc::new(SystemClock), options, configure).await
}

/// [`start_on_bank_with`], the server's time being `clock` (a manual clock for a test whose
/// rules must not straddle a day boundary).
pub async fn start_on_bank_at(
    clock: SharedClock,
    options: HarnessOptions,
    configure: impl FnOnce(&Harness, &mut Config),
) -> (TestServer, Arc<BankLedger>) {
    let prices = Arc::new(narrative_api::providers::prices::FixedPrice(150.0));
    start_on_bank_priced(clock, prices, options, configure).await
}

/// [`start_on_bank_at`] with the SOL/USD price from `prices` (a test that moves it).
pub async fn start_on_bank_priced(
    clock: SharedClock,
    prices: Arc<dyn narrative_api::providers::prices::PriceFeed>,
    options: HarnessOptions,
    configure: impl FnOnce(&Harness, &mut Config),
) -> (TestServer, Arc<BankLedger>) {
    start_on_bank_providing(clock, prices, options, |_| {}, configure).await
}

/// [`start_on_bank_priced`] with the providers as `provide` leaves them (a test that puts a
/// real client of a provider in place of its local stand-in).
pub async fn start_on_bank_providing(
    clock: SharedClock,
    prices: Arc<dyn narrative_api::providers::prices::PriceFeed>,
    options: HarnessOptions,
    provide: impl FnOnce(&mut Providers),
    configure: impl FnOnce(&Harness, &mut Config),
) -> (TestServer, Arc<BankLedger>) {
    let mut harness = Harness::start_with(options).await;
    harness.warp_to(clock.now()).await;
    let ledger = BankLedger::new(harness);
    let mut providers = bank_providers(clock, prices, ledger.clone());
    provide(&mut providers);
    let server = TestServer::start_with(Some(providers), |c| {
        c.confirm_wait_ms = 300;
        let harness = ledger
            .harness
            .try_lock()
            .expect("nothing else holds the harness yet");
        configure(&harness, c);
    })
    .await;
    (server, ledger)
}

/// The outside world of a server on the bank: `ledger`, the SOL/USD price from `prices`, and
/// the local providers.
pub fn bank_providers(
    clock: SharedClock,
    prices: Arc<dyn narrative_api::providers::prices::PriceFeed>,
    ledger: Arc<BankLedger>,
) -> Providers {
    Providers {
        clock,
        ledger,
        human: Arc::new(LocalVerifier::accepting(HUMAN_TOKEN)),
        polisher: Arc::new(narrative_api::providers::polisher::LocalPolisher),
        reviewer: Arc::new(narrative_api::providers::reviewer::LocalReviewer),
        generator: Arc::new(narrative_api::providers::drafter::LocalGenerator),
        prices,
        resolver: Arc::new(narrative_api::providers::outbound::SystemResolver),
        kyc: Arc::new(narrative_api::providers::kyc::LocalKyc {
            hosted: "https://kyc.invalid/local-provider".into(),
        }),
        screening: Arc::new(narrative_api::providers::screening::LocalScreening {
            flagged: Default::default(),
        }),
        identity_pass: Arc::new(narrative_api::providers::identity_pass::LocalPass {
            accepted: None,
            flow: "https://idpass.invalid/local-provider".into(),
        }),
        passport: Arc::new(narrative_api::providers::passport::LocalPassport {
            scores: Default::default(),
            app: "https://app.passport.xyz".into(),
        }),
    }
}

/// The wallet's signature over a prepare response's `transaction`, as a wallet app makes it.
pub fn sign(prepared: &Value, wallet: &Keypair) -> Transaction {
    let mut tx =
        narrative_sdk::tx::from_base64(prepared["transaction"].as_str().expect("transaction"))
            .expect("a transaction");
    assert_eq!(
        tx.message.account_keys[0],
        wallet.pubkey(),
        "the wallet pays the fee"
    );
    let blockhash = tx.message.recent_blockhash;
    tx.sign(&[wallet], blockhash);
    tx
}

/// Signs every transaction of a prepare answer's `transactions_to_sign` in order, as the wallet
/// does, and sends each to the bank; their signatures. The answer's `transactions` counts them
/// and its `transaction` is the last (spec 4.0).
pub async fn sign_and_send_all(
    ledger: &BankLedger,
    prepared: &Value,
    wallet: &Keypair,
) -> Vec<String> {
    let all = prepared["transactions_to_sign"]
        .as_array()
        .expect("transactions_to_sign");
    assert_eq!(prepared["transactions"], all.len(), "{prepared}");
    assert_eq!(all.last(), Some(&prepared["transaction"]), "{prepared}");
    let mut signatures = Vec::new();
    for tx in all {
        let signed = sign(&serde_json::json!({"transaction": tx}), wallet);
        let signature = ledger
            .process(signed)
            .await
            .expect("the prepared transaction lands");
        signatures.push(signature.to_string());
    }
    signatures
}

/// A token account's balance on the bank (0 when it does not exist).
pub async fn token_balance(ledger: &BankLedger, account: narrative_sdk::Pubkey) -> u64 {
    let raw = ledger.harness.lock().await.raw_account(account).await;
    raw.map_or(0, |a| {
        u64::from_le_bytes(a.data[64..72].try_into().unwrap())
    })
}

/// Moves the bank `slots` ahead and refreshes the Kamino reserve (as anyone may), so it accrues
/// that much interest.
// program-test's warp is the one way to move slots; its deprecation is about v4's feature flag.
#[allow(deprecated)]
pub async fn accrue_kamino(ledger: &BankLedger, reserve: narrative_sdk::Pubkey, slots: u64) {
    use narrative_api::chain::venues::lend_b;
    let mut h = ledger.harness.lock().await;
    let slot = h.clock().await.slot;
    h.ctx.warp_to_slot(slot + slots).expect("warp");
    let account = h.raw_account(reserve).await.unwrap();
    let decoded = lend_b::Reserve::decode(&account.data).expect("a klend reserve");
    let refresh = lend_b::refresh_reserve(&reserve, &decoded);
    h.process(&[refresh], &[]).await.expect("refresh");
}

/// The wallet's part of prepare → sign → confirm: signs the prepared transaction, sends it to
/// the bank, and posts `{prepared_id, signature}` to `confirm_path`; the confirm's answer.
pub async fn sign_send_confirm(
    server: &TestServer,
    ledger: &BankLedger,
    prepared: &Value,
    wallet: &Keypair,
    confirm_path: &str,
) -> (reqwest::StatusCode, Value) {
    let signature = ledger
        .process(sign(prepared, wallet))
        .await
        .expect("the prepared transaction lands")
        .to_string();
    server
        .post(
            confirm_path,
            &serde_json::json!({"prepared_id": prepared["prepared_id"], "signature": signature}),
        )
        .await
}

/// What the indexer does with an account change: the bank's accounts through the store's batch
/// writer, at the bank's slot.
pub async fn index_from_bank(
    server: &TestServer,
    ledger: &BankLedger,
    addresses: &[narrative_sdk::Pubkey],
) {
    let mut batch = narrative_store::Batch::default();
    {
        let mut h = ledger.harness.lock().await;
        let slot = h.clock().await.slot;
        for address in addresses {
            let account = h.raw_account(*address).await.expect("account exists");
            batch.accounts.push(narrative_store::AccountUpdate {
                address: *address,
                owner: account.owner,
                lamports: account.lamports,
                data: account.data,
                slot,
                write_version: 1,
            });
        }
    }
    server
        .db
        .store
        .write_batch("test", &batch)
        .await
        .expect("indexed");
}

/// What the indexer writes for one transaction at `slot`: the programs' events among its inner
/// instructions, and the current state of every account it names that one of the programs owns.
async fn indexed_batch(
    h: &mut integration_tests::harness::Harness,
    transaction: &Transaction,
    inner_instructions: &[solana_message::inner_instruction::InnerInstructions],
    slot: u64,
) -> narrative_store::Batch {
    let mut batch = narrative_store::Batch::default();
    let keys = &transaction.message.account_keys;
    for (top, inner) in inner_instructions.iter().enumerate() {
        for (position, ix) in inner.iter().enumerate() {
            let program = keys[ix.instruction.program_id_index as usize];
            if let Some(event) = narrative_sdk::decode::decode_event(&program, &ix.instruction.data)
            {
                batch.events.push(narrative_store::EventRecord {
                    event,
                    raw: ix.instruction.data.clone(),
                    slot,
                    signature: transaction.signatures[0].to_string(),
                    tx_index: 0,
                    instruction_index: top as u32,
                    inner_index: position as u32,
                });
            }
        }
    }
    let programs = [
        narrative_sdk::ids::BINARY_VAULT,
        narrative_sdk::ids::CRUCIBLE_POOL,
        narrative_sdk::ids::SHIELD_VAULT,
    ];
    for address in keys {
        if let Some(account) = h.raw_account(*address).await {
            if programs.contains(&account.owner) {
                batch.accounts.push(narrative_store::AccountUpdate {
                    address: *address,
                    owner: account.owner,
                    lamports: account.lamports,
                    data: account.data,
                    slot,
                    write_version: 1,
                });
            }
        }
    }
    batch
}

/// Runs `ixs` on the bank signed by `signers` (the harness pays the fee) and indexes it as the
/// indexer would: its events, and the program accounts it names at the bank's slot. Panics
/// when the transaction fails.
pub async fn run_indexed(
    server: &TestServer,
    ledger: &BankLedger,
    ixs: &[narrative_sdk::Instruction],
    signers: &[&Keypair],
) -> narrative_store::Batch {
    let batch = {
        let mut h = ledger.harness.lock().await;
        let slot = h.clock().await.slot;
        let executed = h.process_recorded(ixs, signers).await.expect("processed");
        let batch = indexed_batch(
            &mut h,
            &executed.transaction,
            &executed.inner_instructions,
            slot,
        )
        .await;
        h.next_slot().await;
        batch
    };
    write(server, &batch).await;
    batch
}

/// Writes `batch` as the indexer's writer does.
async fn write(server: &TestServer, batch: &narrative_store::Batch) {
    server
        .db
        .store
        .write_batch("test", batch)
        .await
        .expect("indexed");
}

/// Creates the Yield SOL market `market_id` by `creator`, its deadline `deadline_in` seconds
/// ahead of the bank's clock, and indexes it.
pub async fn create_yield_market(
    server: &TestServer,
    ledger: &BankLedger,
    creator: &Keypair,
    market_id: [u8; 32],
    deadline_in: i64,
) {
    let deadline = ledger.harness.lock().await.now().await + deadline_in;
    let create = narrative_sdk::binary::create_market(
        creator.pubkey(),
        None,
        narrative_sdk::binary_vault::instructions::CreateMarketArgs {
            market_id,
            variant: narrative_sdk::binary_vault::state::MarketVariant::Yield,
            source: narrative_sdk::binary_vault::state::MarketSource::Seed,
            deadline,
        },
    );
    run_indexed(server, ledger, &[create], &[creator]).await;
}

/// Indexes a transaction that went through the ledger (a wallet's prepared one), as the indexer
/// would once it lands.
pub async fn index_landed(server: &TestServer, ledger: &BankLedger, signature: &str) {
    let recorded = ledger
        .recorded(&signature.parse().expect("a signature"))
        .expect("the ledger processed it");
    let batch = {
        let mut h = ledger.harness.lock().await;
        let slot = h.clock().await.slot;
        indexed_batch(
            &mut h,
            &recorded.transaction,
            &recorded.inner_instructions,
            slot,
        )
        .await
    };
    write(server, &batch).await;
}

/// Executes `ixs` signed by `signer` (the harness pays the fee) and writes the programs' events
/// it emitted to the store, as the indexer does with a transaction's inner instructions.
pub async fn process_and_index_events(
    server: &TestServer,
    ledger: &BankLedger,
    ixs: &[narrative_sdk::Instruction],
    signer: &Keypair,
) {
    let batch = run_indexed(server, ledger, ixs, &[signer]).await;
    assert!(!batch.events.is_empty(), "the transaction emitted events");
}

/// The settlement tests' narrative, published through the api by `creator`: a Yield market
/// closing in a day with a 4 SOL YES stake. Its narrative id and market id.
pub async fn publish_kestrel(
    server: &TestServer,
    ledger: &BankLedger,
    creator: &Keypair,
) -> (String, [u8; 32]) {
    let uuid = mint_and_publish(
        server,
        ledger,
        creator,
        serde_json::json!({
            "thesis": "Kestrel ships its mainnet release before 2027",
            "category": "TECHNOLOGY",
            "deadline_days": 1,
        }),
    )
    .await;
    let market_id = narrative_sdk::market_id::market_id_from_str(&uuid).unwrap();
    (uuid, market_id)
}

/// A narrative created through the api: prepare-mint, the creator signs, the bank processes,
/// publish, and the market reaches the index. Returns the narrative id.
pub async fn mint_and_publish(
    server: &TestServer,
    ledger: &BankLedger,
    creator: &Keypair,
    publish: serde_json::Value,
) -> String {
    let (status, prepared) = server
        .post(
            "/v1/narratives/prepare-mint",
            &serde_json::json!({
                "backer_wallet": creator.pubkey().to_string(),
                "amount_lamports": 5_000_000_000u64,
                "deadline_days": publish["deadline_days"],
            }),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{prepared}");
    let signature = ledger
        .process(sign(&prepared, creator))
        .await
        .expect("the mint lands")
        .to_string();
    let mut body = publish;
    body["walletAddress"] = creator.pubkey().to_string().into();
    body["signature"] = signature.into();
    body["cf_token"] = HUMAN_TOKEN.into();
    let body = sign_publish(body, creator, server.clock.now());
    let (status, published) = server.post("/v1/narratives/publish", &body).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{published}");
    assert_eq!(published["narrativeId"], prepared["narrativeId"]);
    let id = published["narrativeId"].as_str().unwrap().to_owned();
    // Publish enqueues the market's refresh into the index; backings are prepared from there.
    eventually("the new market in the index", || async {
        let (_, body) = server.get(&format!("/v1/narratives/{id}")).await;
        body["narrative"]["backers"] == 1
    })
    .await;
    id
}

/// Where the Anchor instruction `name` (as in `global:<name>`) sits in a prepared transaction
/// (base64): the index a failed transaction's `InstructionError` names.
pub fn anchor_instruction_at(transaction: &Value, name: &str) -> usize {
    let discriminator =
        narrative_api::chain::venues::anchor_discriminator(&format!("global:{name}"));
    narrative_sdk::tx::from_base64(transaction.as_str().expect("a base64 transaction"))
        .expect("a transaction")
        .message
        .instructions
        .iter()
        .position(|ix| ix.data.starts_with(&discriminator))
        .unwrap_or_else(|| panic!("no {name} instruction"))
}
