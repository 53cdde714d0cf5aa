//! Creating a narrative over HTTP against a program-test bank: prepare-mint builds the Yield
//! market with the creator's 80 % YES stake and the treasury's 20 %, publish checks human
//! verification, moderation, uncertainty, the ledger, the daily cap and the conviction gate,
//! and what follows: the feed, the score job, rules, market history, `narrative.created`.

mod common;

use common::chain::{self, sign_publish, HUMAN_TOKEN};
use common::eventually;
use integration_tests::harness::{HarnessOptions, SOL};
use narrative_api::chain::ledger::Ledger;
use narrative_api::clock::{Clock, ManualClock};
use narrative_api::domain::retention;
use narrative_sdk::binary_vault::state::Side;
use narrative_store::entities::{
    jobs, narrative_mints, narratives, prepared_transactions, used_wallet_signatures,
};
use reqwest::StatusCode;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, IntoActiveModel,
    PaginatorTrait, QueryFilter, QueryTrait, Statement,
};
use serde_json::{json, Value};
use solana_signer::Signer;

const THESIS: &str = "SOL closes above $300 on Coinbase before 30 June 2027";

fn publish_body(creator: &str, signature: &str) -> Value {
    json!({
        "walletAddress": creator,
        "thesis": THESIS,
        "category": "MARKET",
        "deadline_days": 7,
        "signature": signature,
        "cf_token": HUMAN_TOKEN,
        "title": "SOL at $300",
        "asset_tag": "SOL",
        "resolution_source": "Coinbase SOL-USD daily close",
        "criteria": "YES if a daily close is above 300.00 USD before the deadline.",
    })
}

/// A server on a bank whose treasury is configured, and the bank's first wallet.
async fn start_with_treasury() -> (
    common::TestServer,
    std::sync::Arc<common::bank::BankLedger>,
    solana_keypair::Keypair,
) {
    let (server, ledger) = chain::start_on_bank_with(HarnessOptions::default(), |h, c| {
        c.treasury_wallet = Some(h.treasury.to_string());
    })
    .await;
    let creator = ledger.harness.lock().await.wallets[0].insecure_clone();
    (server, ledger, creator)
}

/// prepare-mint for `creator` paying `amount`, signed and processed: the prepare answer and
/// the transaction's signature.
async fn minted(
    server: &common::TestServer,
    ledger: &common::bank::BankLedger,
    creator: &solana_keypair::Keypair,
    amount: u64,
) -> (Value, String) {
    let (status, prepared) = server
        .post(
            "/v1/narratives/prepare-mint",
            &json!({"backer_wallet": creator.pubkey().to_string(), "amount_lamports": amount, "deadline_days": 7}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    let signature = ledger
        .process(chain::sign(&prepared, creator))
        .await
        .unwrap()
        .to_string();
    (prepared, signature)
}

#[tokio::test]
async fn a_narrative_is_minted_on_chain_then_published_once_every_check_passes() {
    // A fixed clock: the daily cap must not roll over mid-test.
    let clock = ManualClock::at_system_time();
    let (server, ledger) =
        chain::start_on_bank_at(clock.clone(), HarnessOptions::default(), |h, c| {
            c.treasury_wallet = Some(h.treasury.to_string());
            c.narrative_daily_cap = 1;
            // The subscribed agent's receiver is on this machine.
            c.outbound_allow_local = true;
        })
        .await;
    let (creator, stranger, treasury) = {
        let h = ledger.harness.lock().await;
        (
            h.wallets[0].insecure_clone(),
            h.wallets[1].insecure_clone(),
            h.treasury,
        )
    };
    let wallet = creator.pubkey().to_string();
    let db = server.db.store.db();

    // An agent subscribed to narrative.created.
    let (_, agent) = server
        .post(
            "/v1/agent/register",
            &json!({"wallet_address": stranger.pubkey().to_string(), "name": "watcher"}),
        )
        .await;
    let key = agent["agent"]["api_key"].as_str().unwrap();
    let (status, subscribed) = server
        .key_post(
            "/v1/agent/webhook",
            key,
            &json!({"url": "http://127.0.0.1:9/hook", "events": ["narrative.created"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{subscribed}");

    let mint = json!({"backer_wallet": wallet, "amount_lamports": 5 * SOL, "deadline_days": 7});
    for (change, why) in [
        (
            json!({"amount_lamports": 5 * SOL - 1}),
            "below the publish fee",
        ),
        (json!({"deadline_days": 0}), "no resolution window"),
        (json!({"deadline_days": 731}), "beyond the program's bound"),
        (json!({"backer_wallet": "nope"}), "not a wallet"),
        (json!({"narrative_id": "not-a-uuid"}), "not a UUID"),
    ] {
        let mut bad = mint.clone();
        for (k, v) in change.as_object().unwrap() {
            bad[k] = v.clone();
        }
        let (status, body) = server.post("/v1/narratives/prepare-mint", &bad).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{why}: {body}");
        assert_eq!(body["ok"], false, "{why}: {body}");
    }
    assert_eq!(
        prepared_transactions::Entity::find()
            .count(db)
            .await
            .unwrap(),
        0
    );

    let now = clock.now();
    let (status, prepared) = server.post("/v1/narratives/prepare-mint", &mint).await;
    assert_eq!(status, StatusCode::OK, "{prepared}");
    let id = prepared["narrativeId"].as_str().unwrap().to_owned();
    let market_id = narrative_sdk::market_id::market_id_from_str(&id).unwrap();
    assert_eq!(prepared["stake_lamports"], 4 * SOL);
    assert_eq!(prepared["treasury_lamports"], SOL);
    let deadline = prepared["deadlineTimestamp"].as_i64().unwrap();
    // One packet: with its signature slot filled, the transaction fits Solana's 1232 bytes.
    let unsigned =
        narrative_sdk::tx::from_base64(prepared["transaction"].as_str().unwrap()).unwrap();
    let wire = bincode::serialize(&unsigned).unwrap().len();
    assert!(wire <= 1_232, "{wire} bytes");
    assert_eq!(deadline, now + 7 * 86_400);

    let treasury_before = ledger.harness.lock().await.lamports(treasury).await;
    let signature = ledger
        .process(chain::sign(&prepared, &creator))
        .await
        .unwrap()
        .to_string();
    {
        let mut h = ledger.harness.lock().await;
        assert_eq!(h.lamports(treasury).await - treasury_before, SOL);
        let market = h.market(&market_id).await;
        assert_eq!(market.creator, creator.pubkey());
        assert_eq!(market.deadline, deadline);
        assert_eq!((market.yes_total, market.no_total), (4 * SOL, 0));
        assert_eq!(h.vault_balance(&market_id, Side::Yes).await, 4 * SOL);
    }

    // Refusals, each recording nothing (each body signed by the wallet it names, so the check
    // after the proof is the one refusing).
    let good = sign_publish(publish_body(&wallet, &signature), &creator, clock.now());
    for (change, status, error) in [
        (
            json!({"cf_token": null}),
            StatusCode::BAD_REQUEST,
            "TURNSTILE_FAILED",
        ),
        (
            json!({"cf_token": "robot"}),
            StatusCode::BAD_REQUEST,
            "TURNSTILE_FAILED",
        ),
        (
            json!({"thesis": "Bitcoin will still exist tomorrow"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "narrative_too_obvious",
        ),
        (
            json!({"thesis": "The senator is assassinated before June 2027"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "content_flagged",
        ),
        (
            json!({"category": "GOSSIP"}),
            StatusCode::BAD_REQUEST,
            "validation_error",
        ),
        (
            json!({"deadline_days": 8}),
            StatusCode::BAD_REQUEST,
            "validation_error",
        ),
        (
            json!({"criteria": null}),
            StatusCode::BAD_REQUEST,
            "validation_error",
        ),
        (
            json!({"walletAddress": stranger.pubkey().to_string()}),
            StatusCode::BAD_REQUEST,
            "transaction_mismatch",
        ),
        (
            json!({"signature": "not-a-signature"}),
            StatusCode::BAD_REQUEST,
            "validation_error",
        ),
        // A signature the ledger does not know stops before the review (which may cost a model
        // call): not 422 for this flagged thesis.
        (
            json!({
                "signature": bs58::encode([9u8; 64]).into_string(),
                "thesis": "The senator is assassinated before June 2027",
            }),
            StatusCode::SERVICE_UNAVAILABLE,
            "transaction_pending",
        ),
    ] {
        let mut bad = good.clone();
        for (k, v) in change.as_object().unwrap() {
            bad[k] = v.clone();
        }
        let signer = if bad["walletAddress"] == wallet.as_str() {
            &creator
        } else {
            &stranger
        };
        let bad = sign_publish(bad, signer, clock.now());
        let (got, body) = server.post("/v1/narratives/publish", &bad).await;
        assert_eq!(got, status, "{change}: {body}");
        if error == "validation_error" {
            // Spec 7: a malformed request answers `{ok:false, error:<message>}`.
            assert_eq!(body["ok"], false, "{change}: {body}");
        } else {
            assert_eq!(body["error"], error, "{change}: {body}");
        }
    }
    assert_eq!(narratives::Entity::find().count(db).await.unwrap(), 0);
    let mut obvious = good.clone();
    obvious["thesis"] = "Bitcoin will still exist tomorrow".into();
    let obvious = sign_publish(obvious, &creator, clock.now());
    let (_, obvious) = server.post("/v1/narratives/publish", &obvious).await;
    assert_eq!(obvious["uncertainty_score"], 15.0, "{obvious}");

    // The refusals consumed nothing (not the transaction's signature, not the creator's proof
    // that the turnstile refusals carried): the same body publishes.
    assert_eq!(
        used_wallet_signatures::Entity::find()
            .count(db)
            .await
            .unwrap(),
        0
    );
    let (status, published) = server.post("/v1/narratives/publish", &good).await;
    assert_eq!(status, StatusCode::OK, "{published}");
    assert_eq!(
        published,
        json!({"success": true, "narrativeId": id, "message": "narrative published"})
    );
    // A replay answers the same and writes nothing, even without a fresh token or proof.
    let mut replay = good.clone();
    replay["cf_token"] = Value::Null;
    replay["issued_at"] = (clock.now() - 3_600).into();
    let (status, again) = server.post("/v1/narratives/publish", &replay).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["narrativeId"], id.as_str());
    assert_eq!(again["message"], "already published");
    assert_eq!(narratives::Entity::find().count(db).await.unwrap(), 1);
    let mint_row = narrative_mints::Entity::find_by_id(id.clone())
        .one(db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(mint_row.status, "published");

    let (status, single) = server.get(&format!("/v1/narratives/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    let n = &single["narrative"];
    assert_eq!(n["wallet_address"], wallet.as_str());
    assert_eq!(n["title"], "SOL at $300");
    assert_eq!(n["thesis"], THESIS);
    assert_eq!(n["category"], "MARKET");
    assert_eq!(n["asset_tag"], "SOL");
    assert_eq!(n["deadline_tag"], "SHORT");
    assert_eq!(n["oracle_status"], "open");
    assert_eq!(n["uncertainty_score"], 80.0);
    assert_eq!(n["is_pre_market"], false);

    // The follow-ups: the market read back into the index, the score computed.
    eventually("the stake in the index", || async {
        let (_, body) = server.get(&format!("/v1/narratives/{id}")).await;
        body["narrative"]["sol_backed"] == 4.0 && body["narrative"]["backers"] == 1
    })
    .await;
    eventually("the score", || async {
        let (_, body) = server.get(&format!("/v1/narratives/{id}")).await;
        body["narrative"]["score"] != 0.0
    })
    .await;
    let (_, single) = server.get(&format!("/v1/narratives/{id}")).await;
    // Nothing else is published, so the thesis is wholly original: (100 + 80) / 2.
    assert_eq!(single["narrative"]["score"], 90.0);
    let (status, history) = server
        .get(&format!("/v1/narratives/{id}/score-history"))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(history["points"].as_array().unwrap().len(), 1, "{history}");
    assert_eq!(history["points"][0]["score"], 90.0);
    assert_eq!(history["points"][0]["originality"], 100.0);
    assert_eq!(history["points"][0]["uncertainty"], 80.0);

    let (status, rules) = server.get(&format!("/v1/narratives/{id}/rules")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        rules,
        json!({"rules": {
            "resolution_source": "Coinbase SOL-USD daily close",
            "criteria": "YES if a daily close is above 300.00 USD before the deadline.",
        }})
    );

    let created_events = jobs::Entity::find()
        .filter(jobs::Column::Kind.eq("deliver_webhook"))
        .all(db)
        .await
        .unwrap();
    assert_eq!(created_events.len(), 1);
    let delivered: Value =
        serde_json::from_str(created_events[0].payload["body"].as_str().unwrap()).unwrap();
    assert_eq!(delivered["type"], "narrative.created");
    assert_eq!(delivered["data"]["narrative_id"], id.as_str());
    assert_eq!(delivered["data"]["stake_sol"], 4.0);

    // The daily cap (1 here) is checked before anyone pays again.
    let (status, capped) = server.post("/v1/narratives/prepare-mint", &mint).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{capped}");
    assert_eq!(capped["error"], "daily_limit_reached");
    // Someone else may still publish today; reusing a minted narrative id is refused.
    let mut reuse = mint.clone();
    reuse["backer_wallet"] = stranger.pubkey().to_string().into();
    reuse["narrative_id"] = id.clone().into();
    let (status, body) = server.post("/v1/narratives/prepare-mint", &reuse).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"], "narrative_exists");
    server.stop().await;
}

#[tokio::test]
async fn market_history_comes_from_indexed_backings() {
    let (server, ledger, creator) = start_with_treasury().await;
    let backer = ledger.harness.lock().await.wallets[1].insecure_clone();
    let id = chain::mint_and_publish(
        &server,
        &ledger,
        &creator,
        json!({"thesis": THESIS, "category": "MARKET", "deadline_days": 40}),
    )
    .await;
    let (status, rules) = server.get(&format!("/v1/narratives/{id}/rules")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{rules}");
    let (status, empty) = server
        .get(&format!("/v1/narratives/{id}/market-history"))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(empty["points"], json!([]));
    assert_eq!(empty["note"], "market_event_unavailable");
    let (_, single) = server.get(&format!("/v1/narratives/{id}")).await;
    assert_eq!(single["narrative"]["deadline_tag"], "LONG");

    let market_id = narrative_sdk::market_id::market_id_from_str(&id).unwrap();
    for (side, amount) in [(Side::No, 2 * SOL), (Side::Yes, SOL)] {
        chain::process_and_index_events(
            &server,
            &ledger,
            &[narrative_sdk::binary::back_market(
                backer.pubkey(),
                &market_id,
                side,
                amount,
            )],
            &backer,
        )
        .await;
    }
    let (status, history) = server
        .get(&format!("/v1/narratives/{id}/market-history"))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(history["note"], Value::Null);
    let points = history["points"].as_array().unwrap();
    assert_eq!(points.len(), 2, "{history}");
    // The creator's 4 SOL YES stake came first (not indexed here), then NO 2, then YES 1.
    assert_eq!(points[0]["side"], "false");
    assert_eq!(points[0]["amount_sol"], 2.0);
    assert_eq!(points[0]["yes_total_sol"], 4.0);
    assert_eq!(points[0]["no_total_sol"], 2.0);
    assert_eq!(points[0]["yes_share"], 0.6666);
    assert_eq!(points[1]["side"], "true");
    assert_eq!(points[1]["yes_total_sol"], 5.0);
    assert_eq!(points[1]["yes_share"], 0.7142);
    assert!(points[0]["slot"].as_i64() < points[1]["slot"].as_i64());
    let (_, latest) = server
        .get(&format!("/v1/narratives/{id}/market-history?limit=1"))
        .await;
    assert_eq!(latest["points"].as_array().unwrap().len(), 1);
    assert_eq!(
        latest["points"][0]["side"], "true",
        "the latest, not the first"
    );

    let (status, missing) = server
        .get(&format!(
            "/v1/narratives/{}/market-history",
            uuid::Uuid::new_v4()
        ))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
    server.stop().await;
}

#[tokio::test]
async fn the_conviction_gate_refuses_before_payment_and_at_publish() {
    let (server, ledger) = chain::start_on_bank_with(HarnessOptions::default(), |h, c| {
        c.treasury_wallet = Some(h.treasury.to_string());
        c.narrative_min_conviction_score = 50.0;
    })
    .await;
    let creator = ledger.harness.lock().await.wallets[0].insecure_clone();
    let wallet = creator.pubkey().to_string();
    let (status, body) = server
        .post(
            "/v1/narratives/prepare-mint",
            &json!({"backer_wallet": wallet, "amount_lamports": 5 * SOL, "deadline_days": 7}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"], "conviction_score_required");
    assert_eq!(body["required_score"], 50.0);
    assert_eq!(body["conviction_score"], 0.0);
    let fake_signature = bs58::encode([7u8; 64]).into_string();
    let body = sign_publish(
        publish_body(&wallet, &fake_signature),
        &creator,
        server.clock.now(),
    );
    let (status, body) = server.post("/v1/narratives/publish", &body).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"], "conviction_score_required");
    server.stop().await;
}

#[tokio::test]
async fn publishing_needs_a_treasury() {
    let (server, ledger) = chain::start_on_bank(|_| {}).await;
    let creator = ledger.harness.lock().await.wallets[0].insecure_clone();
    let (status, body) = server
        .post(
            "/v1/narratives/prepare-mint",
            &json!({"backer_wallet": creator.pubkey().to_string(), "amount_lamports": 5 * SOL, "deadline_days": 7}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "treasury_not_configured");
    server.stop().await;
}

#[tokio::test]
async fn a_mint_whose_deadline_passed_is_not_published() {
    let (server, ledger, creator) = start_with_treasury().await;
    let wallet = creator.pubkey().to_string();
    let (prepared, signature) = minted(&server, &ledger, &creator, 6 * SOL).await;
    // Beyond the fee, everything is stake: 6 SOL − 1 SOL for the treasury.
    assert_eq!(prepared["stake_lamports"], 5 * SOL);
    // The creator waits until after the deadline before publishing.
    let id = prepared["narrativeId"].as_str().unwrap().to_owned();
    let db = server.db.store.db();
    let mut mint = narrative_mints::Entity::find_by_id(id)
        .one(db)
        .await
        .unwrap()
        .unwrap()
        .into_active_model();
    mint.deadline_at = sea_orm::ActiveValue::Set(chrono::Utc::now().timestamp() - 1);
    mint.update(db).await.unwrap();
    let body = sign_publish(
        publish_body(&wallet, &signature),
        &creator,
        server.clock.now(),
    );
    let (status, body) = server.post("/v1/narratives/publish", &body).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"], "deadline_passed");
    assert_eq!(narratives::Entity::find().count(db).await.unwrap(), 0);
    server.stop().await;
}

#[tokio::test]
async fn two_publishes_racing_on_one_signature_record_one_narrative() {
    let (server, ledger, creator) = start_with_treasury().await;
    let wallet = creator.pubkey().to_string();
    let (prepared, signature) = minted(&server, &ledger, &creator, 5 * SOL).await;
    let body = sign_publish(
        publish_body(&wallet, &signature),
        &creator,
        server.clock.now(),
    );
    let (first, second) = tokio::join!(
        server.post("/v1/narratives/publish", &body),
        server.post("/v1/narratives/publish", &body)
    );
    for (status, answer) in [&first, &second] {
        assert_eq!(*status, StatusCode::OK, "{answer}");
        assert_eq!(answer["narrativeId"], prepared["narrativeId"]);
    }
    let mut messages = [
        first.1["message"].as_str().unwrap(),
        second.1["message"].as_str().unwrap(),
    ];
    messages.sort();
    assert_eq!(messages, ["already published", "narrative published"]);
    let db = server.db.store.db();
    assert_eq!(narratives::Entity::find().count(db).await.unwrap(), 1);
    let created = jobs::Entity::find()
        .filter(jobs::Column::Kind.eq("score_narrative"))
        .count(db)
        .await
        .unwrap();
    assert_eq!(created, 1, "one narrative, scored once");
    server.stop().await;
}

/// The prepare-mint signature is public once it lands: whoever sees it must not be able to
/// publish other content on the creator's stake. Each attempt is refused and records nothing;
/// the creator's own publish, even with the very proof an attacker replayed with other content,
/// still succeeds afterwards, once.
#[tokio::test]
async fn a_publish_is_bound_to_the_content_its_creator_signed() {
    let (server, ledger, creator) = start_with_treasury().await;
    let attacker = ledger.harness.lock().await.wallets[1].insecure_clone();
    let wallet = creator.pubkey().to_string();
    let (prepared, signature) = minted(&server, &ledger, &creator, 5 * SOL).await;
    let id = prepared["narrativeId"].as_str().unwrap().to_owned();
    let now = server.clock.now();
    // What the creator means to publish, and its proof (seen by the attacker, say).
    let own = sign_publish(publish_body(&wallet, &signature), &creator, now);
    // The attacker's content on the creator's mint.
    let mut hijack = publish_body(&wallet, &signature);
    hijack["thesis"] = "ETH closes above $9000 on Coinbase before 30 June 2027".into();
    hijack["category"] = "ECONOMICS".into();
    hijack["resolution_source"] = "the attacker's word".into();
    hijack["criteria"] = "YES whenever the attacker says so.".into();

    let unsigned = hijack.clone();
    let by_attacker = sign_publish(hijack.clone(), &attacker, now);
    let mut with_creators_proof = hijack.clone();
    with_creators_proof["creator_signature"] = own["creator_signature"].clone();
    with_creators_proof["issued_at"] = own["issued_at"].clone();
    // Only the rules differ from what the creator signed.
    let mut other_rules = own.clone();
    other_rules["criteria"] = "YES whenever the attacker says so.".into();
    // The creator's content under a title the creator did not sign.
    let mut other_title = own.clone();
    other_title["title"] = "Attacker's title".into();
    // The attacker's own wallet named, with its own proof: not the attacker's mint.
    let mut as_attacker = hijack.clone();
    as_attacker["walletAddress"] = attacker.pubkey().to_string().into();
    let as_attacker = sign_publish(as_attacker, &attacker, now);
    for (attempt, status, error) in [
        (&unsigned, StatusCode::BAD_REQUEST, None),
        (
            &by_attacker,
            StatusCode::UNAUTHORIZED,
            Some("invalid_signature"),
        ),
        (
            &with_creators_proof,
            StatusCode::UNAUTHORIZED,
            Some("invalid_signature"),
        ),
        (
            &other_rules,
            StatusCode::UNAUTHORIZED,
            Some("invalid_signature"),
        ),
        (
            &other_title,
            StatusCode::UNAUTHORIZED,
            Some("invalid_signature"),
        ),
        (
            &as_attacker,
            StatusCode::BAD_REQUEST,
            Some("transaction_mismatch"),
        ),
    ] {
        let (got, body) = server.post("/v1/narratives/publish", attempt).await;
        assert_eq!(got, status, "{attempt}: {body}");
        match error {
            Some(error) => assert_eq!(body["error"], error, "{body}"),
            None => assert_eq!(body["ok"], false, "{body}"),
        }
    }
    // A proof from before the window is refused though it is the creator's.
    let stale = sign_publish(publish_body(&wallet, &signature), &creator, now - 301);
    let (got, body) = server.post("/v1/narratives/publish", &stale).await;
    assert_eq!(got, StatusCode::UNAUTHORIZED, "{body}");
    assert!(body["server_time"].as_i64().unwrap() >= now, "{body}");

    let db = server.db.store.db();
    assert_eq!(narratives::Entity::find().count(db).await.unwrap(), 0);
    let mint = narrative_mints::Entity::find_by_id(id.clone())
        .one(db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(mint.status, "prepared");
    assert_eq!(mint.published_at, None);
    assert_eq!(
        used_wallet_signatures::Entity::find()
            .count(db)
            .await
            .unwrap(),
        0,
        "no refusal used a proof up"
    );

    // The creator publishes what it signed, with the proof the attacker replayed.
    let (status, published) = server.post("/v1/narratives/publish", &own).await;
    assert_eq!(status, StatusCode::OK, "{published}");
    assert_eq!(published["message"], "narrative published");
    assert_eq!(published["narrativeId"], id.as_str());
    let (_, single) = server.get(&format!("/v1/narratives/{id}")).await;
    assert_eq!(single["narrative"]["thesis"], THESIS);
    assert_eq!(single["narrative"]["category"], "MARKET");
    assert_eq!(single["narrative"]["title"], "SOL at $300");
    let (_, rules) = server.get(&format!("/v1/narratives/{id}/rules")).await;
    assert_eq!(
        rules["rules"]["resolution_source"],
        "Coinbase SOL-USD daily close"
    );
    // The proof is used up with the record.
    let used = used_wallet_signatures::Entity::find()
        .all(db)
        .await
        .unwrap();
    assert_eq!(used.len(), 1);
    assert_eq!(
        (used[0].purpose.as_str(), used[0].wallet.as_str()),
        ("publish", wallet.as_str())
    );
    // Afterwards, the attacker's content with the transaction's signature changes nothing.
    let (status, again) = server.post("/v1/narratives/publish", &by_attacker).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["message"], "already published");
    let (_, single) = server.get(&format!("/v1/narratives/{id}")).await;
    assert_eq!(single["narrative"]["thesis"], THESIS);
    assert_eq!(narratives::Entity::find().count(db).await.unwrap(), 1);
    server.stop().await;
}

/// Where the retention job stands: its next run.
async fn retention_due(db: &sea_orm::DatabaseConnection) -> Option<i64> {
    jobs::Entity::find()
        .filter(jobs::Column::Kind.eq("retention"))
        .one(db)
        .await
        .unwrap()
        .filter(|job| job.status == "queued")
        .map(|job| job.run_at)
}

/// Moves the server's clock to the retention job's next run and waits for that run to end.
async fn run_retention(server: &common::TestServer, clock: &ManualClock) {
    let db = server.db.store.db();
    let due = common::eventually_some("the retention job queued", || retention_due(db)).await;
    if due > clock.now() {
        clock.advance(due - clock.now());
    }
    eventually("the retention run", || async {
        retention_due(db).await.is_some_and(|next| next > due)
    })
    .await;
}

/// A prepare-mint whose transaction never landed can never be published, its blockhash lapsed
/// within minutes. A day on, retention asks the ledger: the mint whose market is not there goes
/// with its prepared transaction, the one that landed is kept and still publishes. While the
/// node does not answer, nothing goes.
#[tokio::test]
async fn a_prepare_mint_that_never_landed_is_forgotten_a_day_on_and_a_landed_one_stays() {
    let clock = common::clock_at_hour_start();
    let (server, ledger) =
        chain::start_on_bank_at(clock.clone(), HarnessOptions::default(), |h, c| {
            c.treasury_wallet = Some(h.treasury.to_string());
        })
        .await;
    let (creator, stranger) = {
        let harness = ledger.harness.lock().await;
        (
            harness.wallets[0].insecure_clone(),
            harness.wallets[1].insecure_clone(),
        )
    };
    let db = server.db.store.db();
    // The service's first run, before any mint.
    run_retention(&server, &clock).await;

    let (landed, signature) = minted(&server, &ledger, &creator, 6 * SOL).await;
    let (status, unsent) = server
        .post(
            "/v1/narratives/prepare-mint",
            &json!({"backer_wallet": stranger.pubkey().to_string(), "amount_lamports": 6 * SOL, "deadline_days": 7}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{unsent}");
    let mint_of = |prepared: &Value| {
        let id = prepared["narrativeId"].as_str().unwrap().to_owned();
        async move {
            narrative_mints::Entity::find_by_id(id)
                .one(db)
                .await
                .unwrap()
        }
    };
    let prepared_row = |id: String| async move {
        prepared_transactions::Entity::find_by_id(id)
            .one(db)
            .await
            .unwrap()
    };
    let unsent_prepared = mint_of(&unsent).await.unwrap().prepared_id;
    let landed_prepared = mint_of(&landed).await.unwrap().prepared_id;

    // A day on, with the node down: both stay as they were.
    clock.advance(narrative_api::domain::retention::UNCONFIRMED_PREPARED_SECS + 1);
    ledger.set_offline(true);
    run_retention(&server, &clock).await;
    assert_eq!(mint_of(&unsent).await.unwrap().status, "prepared");
    assert_eq!(mint_of(&landed).await.unwrap().status, "prepared");
    assert!(prepared_row(unsent_prepared.clone()).await.is_some());

    // The node answers: the mint that never landed goes, with its prepared transaction, even
    // with lamports a stranger sent to its market's address (an account only the program can
    // own says the mint landed).
    ledger.set_offline(false);
    let bystander = ledger.harness.lock().await.wallets[2].insecure_clone();
    let market_id =
        narrative_sdk::market_id::market_id_from_str(unsent["narrativeId"].as_str().unwrap())
            .unwrap();
    let squat = anchor_lang::solana_program::system_instruction::transfer(
        &bystander.pubkey(),
        &narrative_sdk::pda::binary::market(&market_id),
        SOL,
    );
    let blockhash = ledger.latest_blockhash().await.unwrap();
    let squat = solana_transaction::Transaction::new_signed_with_payer(
        &[squat],
        Some(&bystander.pubkey()),
        &[&bystander],
        blockhash,
    );
    ledger.process(squat).await.expect("the transfer lands");
    run_retention(&server, &clock).await;
    assert_eq!(mint_of(&unsent).await, None);
    assert_eq!(prepared_row(unsent_prepared).await, None);
    let kept = mint_of(&landed).await.unwrap();
    assert_eq!(kept.status, narrative_api::domain::retention::MINT_LANDED);
    assert!(prepared_row(landed_prepared).await.is_some());

    // The one that landed still publishes.
    let body = sign_publish(
        publish_body(&creator.pubkey().to_string(), &signature),
        &creator,
        server.clock.now(),
    );
    let (status, published) = server.post("/v1/narratives/publish", &body).await;
    assert_eq!(status, StatusCode::OK, "{published}");
    assert_eq!(published["narrativeId"], landed["narrativeId"]);
    server.stop().await;
}

/// `narrative_mints` keeps a row for every narrative ever published, so the retention pass's
/// read of the prepare-mints due for a ledger check must come from the status index in its
/// order, not from a scan of the table and a sort. The table is seeded as a deployment's looks
/// (thousands of published mints, a few still prepared) and analysed, so each database's
/// planner chooses as it would there.
#[tokio::test]
async fn the_retention_read_of_unlanded_mints_is_served_by_the_status_index() {
    let db = narrative_store::testing::TestDb::new().await;
    let conn = db.store.db();
    let backend = db.store.backend();
    for chunk in 0..10 {
        let rows: Vec<String> = (0..500)
            .map(|i| {
                let n = chunk * 500 + i;
                let status = if n % 1000 == 0 { "prepared" } else { "published" };
                format!(
                    "('mint-{n:05}', 'prep-{n:05}', 'wallet-{}', 7, {}, 1000000, 10000, '{status}', {}, NULL)",
                    n % 97,
                    1_700_000_000 + n,
                    1_690_000_000 + n
                )
            })
            .collect();
        conn.execute_unprepared(&format!(
            "INSERT INTO narrative_mints (narrative_id, prepared_id, wallet, deadline_days, \
             deadline_at, stake_lamports, treasury_lamports, status, created_at, published_at) \
             VALUES {}",
            rows.join(", ")
        ))
        .await
        .unwrap();
    }
    conn.execute_unprepared("ANALYZE").await.unwrap();

    let read = retention::unlanded_mints_due(1_800_000_000).build(backend);
    let (explain, column) = match backend {
        DbBackend::Sqlite => ("EXPLAIN QUERY PLAN", "detail"),
        _ => ("EXPLAIN", "QUERY PLAN"),
    };
    let rows = conn
        .query_all_raw(Statement::from_sql_and_values(
            backend,
            format!("{explain} {}", read.sql),
            read.values.map(|v| v.0).unwrap_or_default(),
        ))
        .await
        .unwrap();
    let plan: Vec<String> = rows
        .iter()
        .map(|row| row.try_get::<String>("", column).unwrap())
        .collect();
    let plan = plan.join("\n");
    assert!(
        plan.contains("idx_narrative_mints_status_created"),
        "the read does not use the status index:\n{}\n{plan}",
        read.sql
    );
    assert!(
        !plan.contains("TEMP B-TREE") && !plan.contains("Sort"),
        "the read sorts instead of reading the index in order:\n{}\n{plan}",
        read.sql
    );
    // And it reads what it should: the five still prepared, oldest first.
    let due = retention::unlanded_mints_due(1_800_000_000)
        .all(conn)
        .await
        .unwrap();
    let due: Vec<&str> = due.iter().map(|m| m.narrative_id.as_str()).collect();
    assert_eq!(
        due,
        [
            "mint-00000",
            "mint-01000",
            "mint-02000",
            "mint-03000",
            "mint-04000"
        ]
    );
}
