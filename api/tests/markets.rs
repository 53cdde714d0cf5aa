//! `POST /v1/markets` over HTTP against a program-test bank: each gate of the fee-gated
//! creation refuses with the spec's error, and a market that passes them is created on chain
//! by the creator's signed transaction and confirmed; a Classic one waits for the operator's
//! review, approved by the program admin's signature or rejected.

mod common;

use common::chain::{self, HUMAN_TOKEN};
use integration_tests::harness::SOL;
use narrative_api::chain::ledger::Ledger;
use narrative_sdk::binary_vault::state::{Market, MarketVariant};
use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::{market_creations, markets};
use reqwest::StatusCode;
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_signer::Signer;
use solana_transaction::Transaction;

const FEE: u64 = 5 * SOL;

/// The message of the API contract, but for its issued-at time: the fields in order, the
/// question last.
fn statement(
    variant: &str,
    deadline: i64,
    yes: u64,
    no: u64,
    fee_tx: &str,
    question: &str,
) -> String {
    format!(
        "narrative-market-service:create-market:{variant}:{deadline}:{yes}:{no}:{fee_tx}:{question}"
    )
}

struct Setup {
    server: common::TestServer,
    ledger: std::sync::Arc<common::bank::BankLedger>,
    creator: Keypair,
    treasury: Pubkey,
}

async fn setup() -> Setup {
    let treasury = integration_tests::harness::keypair(3, 0).pubkey();
    let (server, ledger) = chain::start_on_bank(|c| {
        c.treasury_wallet = Some(treasury.to_string());
        c.binary_market_fee_sol = Some(5.0);
        // The operator is binary_vault's admin: its wallet signs approvals.
        c.admin_wallet = Some(
            integration_tests::harness::keypair(1, 0)
                .pubkey()
                .to_string(),
        );
    })
    .await;
    let creator = ledger.harness.lock().await.wallets[1].insecure_clone();
    Setup {
        server,
        ledger,
        creator,
        treasury,
    }
}

impl Setup {
    /// A landed transfer of `lamports` from `from` to `to`; its signature.
    async fn pay(&self, from: &Keypair, to: &Pubkey, lamports: u64) -> String {
        let blockhash = self.ledger.latest_blockhash().await.unwrap();
        let ix =
            anchor_lang::solana_program::system_instruction::transfer(&from.pubkey(), to, lamports);
        let tx =
            Transaction::new_signed_with_payer(&[ix], Some(&from.pubkey()), &[from], blockhash);
        self.ledger
            .process(tx)
            .await
            .expect("transfer lands")
            .to_string()
    }

    /// The admin signs and lands a prepared approval; the confirm's answer.
    async fn land_approval(&self, prepared: &Value, admin: &Keypair) -> (StatusCode, Value) {
        let signature = self
            .ledger
            .process(chain::sign(prepared, admin))
            .await
            .expect("approval lands")
            .to_string();
        self.admin(
            reqwest::Method::POST,
            "/v1/admin/markets/approval/confirm",
            &json!({"prepared_id": prepared["prepared_id"], "signature": signature}),
        )
        .await
    }

    fn body(&self, signer: &Keypair, variant: &str, fee_tx: &str, seed_yes: f64) -> Value {
        self.body_at(
            signer,
            variant,
            fee_tx,
            seed_yes,
            chrono::Utc::now().timestamp(),
            true,
        )
    }

    /// A request signed at `issued_at`, the message with its time when `timed` (without it,
    /// as it was signed before messages had one).
    fn body_at(
        &self,
        signer: &Keypair,
        variant: &str,
        fee_tx: &str,
        seed_yes: f64,
        issued_at: i64,
        timed: bool,
    ) -> Value {
        let deadline = chrono::Utc::now().timestamp() + 7 * 86_400;
        let question = "Will the \"Kestrel\" upgrade ship before the deadline?";
        let yes = (seed_yes * 1e9).round() as u64;
        let mut message = statement(variant, deadline, yes, 0, fee_tx, question);
        if timed {
            message = format!("{message}:issued-at:{issued_at}");
        }
        let signed = signer.sign_message(message.as_bytes());
        json!({
            "cf_token": HUMAN_TOKEN,
            "signature": signed.to_string(),
            "issued_at": issued_at,
            "fee_tx_signature": fee_tx,
            "variant": variant,
            "question": question,
            "deadline": deadline,
            "seed_yes": seed_yes,
        })
    }

    async fn create(&self, body: &Value) -> (StatusCode, Value) {
        self.server.post("/v1/markets", body).await
    }

    /// A request with the operator's pair (the program admin's wallet).
    async fn admin(
        &self,
        method: reqwest::Method,
        path: &str,
        body: &Value,
    ) -> (StatusCode, Value) {
        let wallet = integration_tests::harness::keypair(1, 0)
            .pubkey()
            .to_string();
        let body = (!body.is_null()).then_some(body);
        self.server.admin_request(&wallet, method, path, body).await
    }

    /// A Classic market created, signed, sent and confirmed: its creation id, pending review.
    async fn pending_classic(&self) -> (String, Value) {
        let paid = self.pay(&self.creator, &self.treasury, FEE).await;
        let (status, created) = self
            .create(&self.body(&self.creator, "classic", &paid, 0.0))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        let tx = chain::sign(&created, &self.creator);
        let signature = self
            .ledger
            .process(tx)
            .await
            .expect("market created")
            .to_string();
        let (status, confirmed) = self
            .server
            .post(
                "/v1/markets/confirm",
                &json!({"prepared_id": created["prepared_id"], "signature": signature}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{confirmed}");
        assert_eq!(confirmed["status"], "pending_review");
        let creation = market_creations::Entity::find()
            .all(self.server.db.store.db())
            .await
            .unwrap()
            .into_iter()
            .find(|c| c.status == "pending_review")
            .expect("the creation");
        (creation.id, confirmed)
    }
}

#[tokio::test]
async fn each_gate_refuses_with_the_spec_error_and_records_nothing() {
    let s = setup().await;
    let paid = s.pay(&s.creator, &s.treasury, FEE).await;
    let valid = s.body(&s.creator, "yield", &paid, 0.0);

    let mut no_token = valid.clone();
    no_token.as_object_mut().unwrap().remove("cf_token");
    let mut bad_token = valid.clone();
    bad_token["cf_token"] = json!("robot");
    for body in [no_token, bad_token] {
        let (status, answer) = s.create(&body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert_eq!(answer["error"], "TURNSTILE_FAILED");
    }

    // A fee transaction the ledger does not have, one paying too little, one paying elsewhere.
    let unknown = solana_signature::Signature::from([4u8; 64]).to_string();
    let too_little = s.pay(&s.creator, &s.treasury, FEE - 1).await;
    let elsewhere = s.pay(&s.creator, &Pubkey::new_unique(), FEE).await;
    for fee_tx in [unknown.as_str(), too_little.as_str(), elsewhere.as_str()] {
        let (status, answer) = s.create(&s.body(&s.creator, "yield", fee_tx, 0.0)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{fee_tx}: {answer}");
        assert_eq!(answer["error"], "market_fee_missing_treasury");
    }
    // Not a signature at all: refused as malformed before any gate. The body holds two
    // signatures (the fee's and the creator's), both sent, so both are named.
    let (status, answer) = s.create(&s.body(&s.creator, "yield", "garbage", 0.0)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(
        answer,
        json!({"ok": false, "error": "invalid request body: fee_tx_signature or signature: must be a base58 signature of 64 bytes"})
    );
    let (_, answer) = s
        .create(&s.body(&s.creator, "yield", &too_little, 0.0))
        .await;
    assert_eq!(answer["required_lamports"], FEE);
    assert_eq!(answer["paid_lamports"], FEE - 1);

    // Signed by someone other than the creator who paid, or over other content.
    let stranger = Keypair::new();
    let (status, answer) = s.create(&s.body(&stranger, "yield", &paid, 0.0)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    assert_eq!(answer["error"], "invalid_signature");
    let mut altered = valid.clone();
    altered["question"] = json!("Something else entirely?");
    let (status, answer) = s.create(&altered).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{answer}");
    // Signed 301 s ago, signed without its issued-at time (as before), or without issued_at.
    let now = chrono::Utc::now().timestamp();
    let mut untimed = valid.clone();
    untimed.as_object_mut().unwrap().remove("issued_at");
    for (body, why) in [
        (
            s.body_at(&s.creator, "yield", &paid, 0.0, now - 301, true),
            "stale",
        ),
        (
            s.body_at(&s.creator, "yield", &paid, 0.0, now, false),
            "timeless",
        ),
        (untimed, "no issued_at"),
    ] {
        let (status, answer) = s.create(&body).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{why}: {answer}");
        assert_eq!(answer["error"], "invalid_signature");
    }

    // binary_vault refuses deadlines beyond 731 days: refused here, before the fee is tied.
    let mut far = valid.clone();
    far["deadline"] = json!(chrono::Utc::now().timestamp() + 800 * 86_400);
    let (status, answer) = s.create(&far).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    assert_eq!(answer["error"], "deadline must be at most 730 days ahead");

    let mut bad_variant = valid.clone();
    bad_variant["variant"] = json!("exotic");
    let (status, answer) = s.create(&bad_variant).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        answer,
        json!({"ok": false, "error": "invalid request body: variant: must be one of classic, yield"})
    );

    let db = s.server.db.store.db();
    assert_eq!(market_creations::Entity::find().count(db).await.unwrap(), 0);
    s.server.stop().await;
}

#[tokio::test]
async fn a_paid_signed_market_is_created_on_chain_and_confirmed() {
    let s = setup().await;
    let paid = s.pay(&s.creator, &s.treasury, FEE).await;
    let request = s.body(&s.creator, "yield", &paid, 0.5);
    let (status, created) = s.create(&request).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["status"], "ready_to_confirm");
    // The same signed request again is a replayed proof.
    let (status, again) = s.create(&request).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{again}");
    assert_eq!(again["error"], "invalid_signature");
    assert_eq!(created["creator"], s.creator.pubkey().to_string());
    assert_eq!(created["fee_lamports"], FEE);

    // The fee pays for one market only.
    let (status, again) = s.create(&s.body(&s.creator, "yield", &paid, 0.0)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    assert_eq!(again["error"], "fee_already_used");

    let tx = chain::sign(&created, &s.creator);
    let signature = s
        .ledger
        .process(tx)
        .await
        .expect("market created")
        .to_string();
    let body = json!({"prepared_id": created["prepared_id"], "signature": signature});
    let (status, confirmed) = s.server.post("/v1/markets/confirm", &body).await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["status"], "open");
    assert_eq!(confirmed["market_id"], created["market_id"]);

    let market_id =
        narrative_sdk::market_id::market_id_from_str(created["market_id"].as_str().unwrap())
            .unwrap();
    let on_chain: Market = s.ledger.harness.lock().await.market(&market_id).await;
    assert_eq!(on_chain.variant, MarketVariant::Yield);
    assert_eq!(on_chain.creator, s.creator.pubkey());
    assert_eq!(on_chain.yes_total, SOL / 2);
    assert_eq!(
        confirmed["address"],
        pda::binary::market(&market_id).to_string()
    );

    // The follow-up job indexes the new market from the ledger.
    let address = pda::binary::market(&market_id).to_string();
    let indexed = common::eventually_some("the market indexed", || async {
        markets::Entity::find_by_id(address.clone())
            .one(s.server.db.store.db())
            .await
            .unwrap()
    })
    .await;
    assert_eq!(indexed.yes_total, (SOL / 2) as i64);
    assert_eq!(
        indexed.market_uuid,
        created["market_id"].as_str().map(String::from)
    );

    let (status, replay) = s.server.post("/v1/markets/confirm", &body).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(replay, confirmed);
    s.server.stop().await;
}

/// A creation whose transaction never landed (the wallet signed after its blockhash lapsed)
/// is asked again with the same fee, by its creator, every field the same: a fresh transaction
/// for the same market, which lands and confirms. Another market on that fee is still refused.
#[tokio::test]
async fn a_creation_asked_again_before_it_landed_gets_a_fresh_transaction() {
    let s = setup().await;
    let paid = s.pay(&s.creator, &s.treasury, FEE).await;
    let request = s.body(&s.creator, "yield", &paid, 0.5);
    let (status, first) = s.create(&request).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");

    // The same request, signed again (a proof is used once).
    let resigned = |at: i64| {
        let message = format!(
            "{}:issued-at:{at}",
            statement(
                "yield",
                request["deadline"].as_i64().unwrap(),
                SOL / 2,
                0,
                &paid,
                request["question"].as_str().unwrap(),
            )
        );
        let mut body = request.clone();
        body["issued_at"] = json!(at);
        body["signature"] = json!(s.creator.sign_message(message.as_bytes()).to_string());
        body
    };
    let issued_at = request["issued_at"].as_i64().unwrap() + 1;
    let (status, second) = s.create(&resigned(issued_at)).await;
    assert_eq!(status, StatusCode::CREATED, "{second}");
    assert_eq!(second["market_id"], first["market_id"]);
    assert_ne!(second["prepared_id"], first["prepared_id"]);
    let creations = market_creations::Entity::find()
        .all(s.server.db.store.db())
        .await
        .unwrap();
    assert_eq!(creations.len(), 1);
    assert_eq!(creations[0].status, "awaiting_signature");

    // Another market on the same payment is a second use.
    let (status, other) = s.create(&s.body(&s.creator, "yield", &paid, 0.0)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{other}");
    assert_eq!(other["error"], "fee_already_used");

    let signature = s
        .ledger
        .process(chain::sign(&second, &s.creator))
        .await
        .expect("market created")
        .to_string();
    // Landed but not confirmed: asked again, the answer is to confirm it, not a transaction
    // that could only fail.
    let issued_at = issued_at + 1;
    let (status, landed) = s.create(&resigned(issued_at)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{landed}");
    assert_eq!(landed["error"], "fee_already_used");
    assert_eq!(landed["market_id"], first["market_id"]);
    assert!(
        landed["message"].as_str().unwrap().contains("confirm"),
        "{landed}"
    );
    let (status, confirmed) = s
        .server
        .post(
            "/v1/markets/confirm",
            &json!({"prepared_id": second["prepared_id"], "signature": signature}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["status"], "open");
    let market_id =
        narrative_sdk::market_id::market_id_from_str(first["market_id"].as_str().unwrap()).unwrap();
    let on_chain: Market = s.ledger.harness.lock().await.market(&market_id).await;
    assert_eq!(on_chain.yes_total, SOL / 2);

    // Once confirmed, the fee has bought its market.
    let (status, third) = s.create(&resigned(issued_at + 1)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{third}");
    assert_eq!(third["error"], "fee_already_used");
    s.server.stop().await;
}

/// A transaction that paid the treasury beside a call of this service's programs (as a
/// narrative's mint does) paid for that; it buys no market too.
#[tokio::test]
async fn a_payment_for_something_else_buys_no_market() {
    let s = setup().await;
    let mut market_id = [0u8; 32];
    market_id[..16].copy_from_slice(&[7; 16]);
    let create = narrative_sdk::binary::create_market(
        s.creator.pubkey(),
        None,
        narrative_sdk::binary_vault::instructions::CreateMarketArgs {
            market_id,
            variant: MarketVariant::Yield,
            source: narrative_sdk::binary_vault::state::MarketSource::Seed,
            deadline: chrono::Utc::now().timestamp() + 7 * 86_400,
        },
    );
    let fee = anchor_lang::solana_program::system_instruction::transfer(
        &s.creator.pubkey(),
        &s.treasury,
        FEE,
    );
    let blockhash = s.ledger.latest_blockhash().await.unwrap();
    let tx = Transaction::new_signed_with_payer(
        &[create, fee],
        Some(&s.creator.pubkey()),
        &[&s.creator],
        blockhash,
    );
    let paid = s.ledger.process(tx).await.expect("lands").to_string();
    let (status, refused) = s.create(&s.body(&s.creator, "yield", &paid, 0.0)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["error"], "market_fee_missing_treasury");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("pays for something else"),
        "{refused}"
    );
    assert_eq!(
        market_creations::Entity::find()
            .count(s.server.db.store.db())
            .await
            .unwrap(),
        0
    );
    s.server.stop().await;
}

#[tokio::test]
async fn a_classic_market_waits_for_review() {
    let s = setup().await;
    let paid = s.pay(&s.creator, &s.treasury, FEE).await;
    let (status, answer) = s.create(&s.body(&s.creator, "classic", &paid, 1.0)).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "classic markets are seeded after review: {answer}"
    );
    let (creation, _) = s.pending_classic().await;
    let (status, pending) = s
        .admin(
            reqwest::Method::GET,
            "/v1/admin/markets/pending",
            &Value::Null,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{pending}");
    assert_eq!(pending["markets"][0]["id"], creation.as_str());
    assert_eq!(pending["markets"][0]["variant"], "classic");
    let market_id = pending["markets"][0]["market_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let market_ref: narrative_api::values::MarketRef = market_id.parse().unwrap();
    let address = pda::binary::market(&market_ref.market_id());
    let market: Market = s.ledger.harness.lock().await.account(address).await;
    assert!(!market.approved, "not approved before review");

    // Approve: a prepared approve_market the operator's wallet signs and pays.
    let (status, prepared) = s
        .admin(
            reqwest::Method::POST,
            &format!("/v1/admin/markets/{creation}/approve"),
            &json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    let admin = integration_tests::harness::keypair(1, 0);
    let (status, confirmed) = s.land_approval(&prepared, &admin).await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["market"]["status"], "open");
    let market: Market = s.ledger.harness.lock().await.account(address).await;
    assert!(market.approved, "approved on chain");
    let (status, again) = s
        .admin(
            reqwest::Method::POST,
            &format!("/v1/admin/markets/{creation}/approve"),
            &json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    assert_eq!(again["error"], "not_pending_review");

    // Reject another: it stops waiting, unapproved on chain.
    let (second, _) = s.pending_classic().await;
    let (status, rejected) = s
        .admin(
            reqwest::Method::POST,
            &format!("/v1/admin/markets/{second}/reject"),
            &json!({"reason": "not falsifiable"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{rejected}");
    assert_eq!(rejected["market"]["status"], "rejected");
    let (_, pending) = s
        .admin(
            reqwest::Method::GET,
            "/v1/admin/markets/pending",
            &Value::Null,
        )
        .await;
    assert_eq!(pending["markets"], json!([]));
    let (status, _) = s
        .admin(
            reqwest::Method::POST,
            &format!("/v1/admin/markets/{}/reject", uuid::Uuid::new_v4()),
            &json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // An approval prepared, then the market rejected, then the approval lands and is
    // confirmed: the market is open on chain, and the store follows it.
    let (third, _) = s.pending_classic().await;
    let (status, prepared) = s
        .admin(
            reqwest::Method::POST,
            &format!("/v1/admin/markets/{third}/approve"),
            &json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    let (status, rejected) = s
        .admin(
            reqwest::Method::POST,
            &format!("/v1/admin/markets/{third}/reject"),
            &json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{rejected}");
    assert_eq!(rejected["market"]["status"], "rejected");
    let (status, confirmed) = s.land_approval(&prepared, &admin).await;
    assert_eq!(status, StatusCode::OK, "{confirmed}");
    assert_eq!(confirmed["market"]["status"], "open");
    s.server.stop().await;
}
