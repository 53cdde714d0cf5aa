//! The narrative loop on a program-test bank: a narrative created through prepare-mint and
//! publish, backed on both sides by two wallets through the api,
//! resolved by an agent an operator granted oracle authority over HTTP, settled on chain by the durable job (the service's
//! oracle vote, then `finalize_resolution` once the 48 h hold has passed on the warped clock),
//! claimed by the winner, and the conviction profiles changed.

mod common;

use common::chain::{self, index_from_bank};
use common::eventually;
use integration_tests::harness::{HarnessOptions, SOL};
use narrative_sdk::binary_vault::state::Side;
use narrative_sdk::pda;
use narrative_store::entities::{jobs, narratives, oracle_audit_log};
use reqwest::StatusCode;
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, IntoActiveModel, QueryFilter};
use serde_json::{json, Value};
use solana_signer::Signer;

const AGENT_WALLET: &str = "C9QjHcuPyyncqkpSqKdQpFJjUNTgbwmbEN4GeGUoSpjN";

async fn resolve(server: &common::TestServer, key: &str, body: &Value) -> (StatusCode, Value) {
    server.key_post("/v1/agent/resolve", key, body).await
}

#[tokio::test]
async fn resolve_settle_claim_and_the_profiles_change() {
    // One oracle signature proposes an outcome, as on devnet.
    let (server, ledger) = start_single_oracle().await;
    let (creator, winner, loser) = {
        let h = ledger.harness.lock().await;
        (
            h.wallets[2].insecure_clone(),
            h.wallets[0].insecure_clone(),
            h.wallets[1].insecure_clone(),
        )
    };
    let (uuid, market_id) = chain::publish_kestrel(&server, &ledger, &creator).await;
    // Two wallets back opposite sides through the api, each confirmed on the ledger.
    for (wallet, side, amount) in [(&winner, "true", 2.0), (&loser, "false", 1.0)] {
        let path = format!("/v1/narratives/{uuid}/back");
        let (status, prepared) = server
            .post(
                &path,
                &json!({"wallet_address": wallet.pubkey().to_string(), "amount_sol": amount, "side": side}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{prepared}");
        let (status, confirmed) = chain::sign_send_confirm(
            &server,
            &ledger,
            &prepared,
            wallet,
            &format!("{path}/confirm"),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{confirmed}");
    }
    {
        let mut h = ledger.harness.lock().await;
        let market = h.market(&market_id).await;
        assert_eq!((market.yes_total, market.no_total), (6 * SOL, SOL));
        // Voting opens at the deadline.
        h.warp_by(86_400 + 60).await;
    }

    // An operator grants the agent oracle authority; the stranger has none.
    let key = oracle_agent(&server).await;
    let (status, other) = server
        .post(
            "/v1/agent/register",
            &json!({"wallet_address": "11111111111111111111111111111111", "name": "stranger"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let stranger_key = other["agent"]["api_key"].as_str().unwrap().to_owned();

    let verdict = json!({
        "narrative_id": uuid,
        "resolution": "true",
        "evidence": "x".repeat(1_500),
        "confidence": 0.9,
    });
    // Refusals first: nothing is recorded by them.
    let (status, body) = resolve(&server, &stranger_key, &verdict).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let mut unsure = verdict.clone();
    unsure["confidence"] = json!(0.65);
    let (status, body) = resolve(&server, &key, &unsure).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body,
        json!({"ok": false, "error": "invalid request body: confidence: must be between 0.7 and 1.0"})
    );
    let mut missing = verdict.clone();
    missing["narrative_id"] = json!(uuid::Uuid::new_v4().to_string());
    let (status, body) = resolve(&server, &key, &missing).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["ok"], false);

    let progress = format!("/v1/narratives/{uuid}/settlement");
    let (status, before) = server.get(&progress).await;
    assert_eq!(status, StatusCode::OK, "{before}");
    assert_eq!(before["oracle_status"], "open");
    assert_eq!(before["settlement"], Value::Null, "no verdict yet");

    let (status, body) = resolve(&server, &key, &verdict).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["resolution"], "resolved_true");
    assert_eq!(body["narrative_id"], uuid.as_str());
    // A narrative resolved once is no longer eligible.
    let (status, _) = resolve(&server, &key, &verdict).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let db = server.db.store.db();
    let log = oracle_audit_log::Entity::find().all(db).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].evidence.chars().count(), 1_000);
    assert!(log[0].resolution);
    assert_eq!(log[0].confidence, 0.9);
    let narrative = narratives::Entity::find_by_id(uuid.clone())
        .one(db)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(narrative.oracle_status, "resolved_true");

    // The job casts the service's vote and then waits for the 48 h hold on the ledger's clock.
    eventually("the oracle vote on chain", || async {
        let mut h = ledger.harness.lock().await;
        h.market(&market_id).await.outcome == Some(Side::Yes)
    })
    .await;
    let settle = || settle_job(db);
    eventually("the job to wait for the hold", || async {
        let job = settle().await;
        job.status == "queued" && job.run_at > chrono::Utc::now().timestamp() + 86_400
    })
    .await;
    // The progress shows the hold, from the job and the market the vote refreshed.
    eventually("the hold in the settlement status", || async {
        server.get(&progress).await.1["settlement"]["stage"] == "hold"
    })
    .await;
    let (_, holding) = server.get(&progress).await;
    let holding = &holding["settlement"];
    assert_eq!(holding["job_status"], "queued", "{holding}");
    assert_eq!(holding["outcome"], "true");
    assert!(
        holding.get("last_error").is_none(),
        "the job's error is not public"
    );
    let hold_ends = chrono::DateTime::parse_from_rfc3339(holding["hold_ends_at"].as_str().unwrap())
        .unwrap()
        .timestamp();
    let proposed = ledger
        .harness
        .lock()
        .await
        .market(&market_id)
        .await
        .resolution_proposed_at;
    assert_eq!(hold_ends, proposed + 2 * 86_400);
    // Queued until the hold ends (by the worker's clock, which the bank's warp does not move).
    assert!(holding["next_attempt_at"].is_string(), "{holding}");
    assert!(
        !ledger
            .harness
            .lock()
            .await
            .market(&market_id)
            .await
            .finalized
    );

    // The losing wallet disputes during the hold, and the admin never rules: once the market's
    // resolution delay after the hold's end has passed on the ledger, the job lapses the dispute
    // (the outcome stands, the bond is forfeit) and settles, then forwards the bond to the
    // treasury.
    let (treasury, delay) = {
        let mut h = ledger.harness.lock().await;
        h.open_dispute(&loser, &market_id).await.unwrap();
        let delay = h.market(&market_id).await.max_resolution_delay_secs;
        (h.treasury, delay)
    };
    let treasury_before = ledger.harness.lock().await.lamports(treasury).await;
    ledger
        .harness
        .lock()
        .await
        .warp_to(hold_ends + delay + 60)
        .await;
    let mut job = settle().await.into_active_model();
    job.run_at = sea_orm::ActiveValue::Set(chrono::Utc::now().timestamp());
    job.update(db).await.unwrap();
    eventually("the settlement job to finish", || async {
        settle().await.status == "done"
    })
    .await;
    let market = ledger.harness.lock().await.market(&market_id).await;
    assert!(market.finalized);
    {
        let mut h = ledger.harness.lock().await;
        let dispute = h.dispute(&market_id).await;
        assert_eq!(
            (dispute.status, dispute.bond_forwarded),
            (
                narrative_sdk::binary_vault::state::DisputeStatus::Lapsed,
                true
            )
        );
        assert_eq!(
            h.lamports(treasury).await - treasury_before,
            dispute.bond_lamports,
            "the job forwarded the unruled dispute's forfeit bond to the treasury"
        );
    }
    assert_eq!(market.outcome, Some(Side::Yes));
    // The losing side forfeited: the job forwarded the crucible share after finalising.
    assert!(market.crucible_amount > 0);
    assert!(
        market.crucible_forwarded,
        "the crucible share was forwarded"
    );
    eventually("finalized in the settlement status", || async {
        server.get(&progress).await.1["settlement"]["stage"] == "finalized"
    })
    .await;
    let (_, done) = server.get(&progress).await;
    assert_eq!(done["settlement"]["job_status"], "done", "{done}");
    assert_eq!(done["oracle_status"], "resolved_true");
    assert!(done["settlement"]["finalized_at"]
        .as_str()
        .unwrap()
        .ends_with('Z'));

    // The winner claims; the profiles read the settled result from the index.
    {
        let mut h = ledger.harness.lock().await;
        let before = h.lamports(winner.pubkey()).await;
        h.claim(&winner, &market_id, Side::Yes).await.unwrap();
        assert!(h.lamports(winner.pubkey()).await > before + 2 * SOL);
    }
    let market_address = pda::binary::market(&market_id);
    index_from_bank(
        &server,
        &ledger,
        &[
            market_address,
            pda::binary::backing(&market_id, &winner.pubkey(), Side::Yes),
            pda::binary::backing(&market_id, &loser.pubkey(), Side::No),
            pda::binary::backing(&market_id, &creator.pubkey(), Side::Yes),
        ],
    )
    .await;
    let (_, won) = server
        .get(&format!("/v1/conviction/{}", winner.pubkey()))
        .await;
    assert_eq!(won["correct_backings"], 1, "{won}");
    assert_eq!(won["conviction_score"], 10.0);
    assert_eq!(won["per_category_stats"]["TECHNOLOGY"]["correct"], 1);
    let (_, lost) = server
        .get(&format!("/v1/conviction/{}", loser.pubkey()))
        .await;
    assert_eq!(lost["incorrect_backings"], 1, "{lost}");
    assert_eq!(lost["conviction_tier"], "initiate");
    let (_, staked) = server
        .get(&format!("/v1/conviction/{}", creator.pubkey()))
        .await;
    assert_eq!(
        staked["correct_backings"], 1,
        "the creator's stake won: {staked}"
    );
    // The creator's narrative resolved TRUE with two outside backers: 20 + 2 points, and 5 %
    // of what the market sent to the Crucible (half of 35 % of the 1 SOL NO side).
    let (_, made) = server
        .get(&format!("/v1/conviction/creator/{}", creator.pubkey()))
        .await;
    assert_eq!(made["narratives_submitted"], 1, "{made}");
    assert_eq!(made["narratives_resolved_true"], 1);
    assert_eq!(made["narratives_pending"], 0);
    assert_eq!(made["creator_score"], 22.0);
    assert_eq!(made["creator_tier"], "initiate");
    assert_eq!(made["total_creator_earnings_sol"], 0.00875);
    server.stop().await;
}

/// A bank whose markets take one oracle signature (as on devnet), the service's oracle key
/// being that oracle's, behind a server.
async fn start_single_oracle() -> (common::TestServer, std::sync::Arc<common::bank::BankLedger>) {
    let options = HarnessOptions {
        threshold: 1,
        ..Default::default()
    };
    chain::start_on_bank_with(options, |h, c| {
        c.oracle_keypair = Some(h.oracles[0].to_base58_string().into());
        c.treasury_wallet = Some(h.treasury.to_string());
    })
    .await
}

/// The narrative's settlement job (a test settles one narrative).
async fn settle_job(db: &sea_orm::DatabaseConnection) -> jobs::Model {
    jobs::Entity::find()
        .filter(jobs::Column::Kind.eq("settle_narrative"))
        .one(db)
        .await
        .unwrap()
        .expect("the settlement job")
}

/// Registers an agent and has an operator grant it oracle authority; answers its API key.
async fn oracle_agent(server: &common::TestServer) -> String {
    let (status, registered) = server
        .post(
            "/v1/agent/register",
            &json!({"wallet_address": AGENT_WALLET, "name": "oracle-bot"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{registered}");
    let agent_id = registered["agent"]["id"].as_str().unwrap();
    let (status, granted) = server
        .admin_post(&format!("/v1/admin/agents/{agent_id}/oracle"), &json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{granted}");
    registered["agent"]["api_key"].as_str().unwrap().to_owned()
}

/// The service is one oracle of three (threshold 2). When the other two proposed the outcome
/// before the agent's verdict came, the service's vote would be refused on chain; the job goes
/// on to the hold and finalises instead of failing until it dies.
#[tokio::test]
async fn settlement_goes_on_when_the_other_oracles_proposed_first() {
    let (server, ledger) = chain::start_on_bank_with(HarnessOptions::default(), |h, c| {
        c.oracle_keypair = Some(h.oracles[2].to_base58_string().into());
        c.treasury_wallet = Some(h.treasury.to_string());
    })
    .await;
    let (creator, service_oracle) = {
        let h = ledger.harness.lock().await;
        (h.wallets[2].insecure_clone(), h.oracles[2].pubkey())
    };
    let (uuid, market_id) = chain::publish_kestrel(&server, &ledger, &creator).await;
    {
        let mut h = ledger.harness.lock().await;
        h.warp_by(86_400 + 60).await;
        h.vote(0, &market_id, Side::Yes, 9_000).await.unwrap();
        h.vote(1, &market_id, Side::Yes, 9_000).await.unwrap();
        assert_eq!(h.market(&market_id).await.outcome, Some(Side::Yes));
    }
    let key = oracle_agent(&server).await;
    let verdict = json!({
        "narrative_id": uuid,
        "resolution": "true",
        "evidence": "The release shipped on the announced date.",
        "confidence": 0.9,
    });
    let (status, body) = resolve(&server, &key, &verdict).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let db = server.db.store.db();
    let settle = || settle_job(db);
    // It waits for the hold without having failed once.
    let waiting = common::eventually_some("the job to wait for the hold", || async {
        let job = settle().await;
        (job.status == "queued" && job.run_at > chrono::Utc::now().timestamp() + 86_400)
            .then_some(job)
    })
    .await;
    assert_eq!(waiting.last_error, None);
    assert_eq!(waiting.attempts, 0, "waiting is not failing");
    let hold_ends = {
        let mut h = ledger.harness.lock().await;
        let market = h.market(&market_id).await;
        market.resolution_proposed_at + 2 * 86_400
    };
    ledger.harness.lock().await.warp_to(hold_ends + 60).await;
    let mut job = waiting.into_active_model();
    job.run_at = sea_orm::ActiveValue::Set(chrono::Utc::now().timestamp());
    job.update(db).await.unwrap();
    eventually("the settlement job to finish", || async {
        settle().await.status == "done"
    })
    .await;
    let mut h = ledger.harness.lock().await;
    let market = h.market(&market_id).await;
    assert!(market.finalized);
    assert_eq!(market.outcome, Some(Side::Yes));
    assert_eq!((market.yes_votes, market.no_votes), (2, 0));
    assert_eq!(
        h.lamports(pda::binary::oracle_vote(&market_id, &service_oracle))
            .await,
        0,
        "the service cast no vote"
    );
    drop(h);
    server.stop().await;
}

/// Spec 3.2 lets an open narrative be resolved, and binary_vault takes votes only from the
/// market's deadline: a verdict before it is recorded, its settlement waits for the deadline on
/// the ledger's clock (no refused votes spending its attempts), and the service prepares no
/// more backings of the resolved narrative. Past the deadline the vote goes out.
#[tokio::test]
async fn a_verdict_before_the_deadline_waits_for_it_and_ends_the_backings() {
    let (server, ledger) = start_single_oracle().await;
    let (creator, backer) = {
        let h = ledger.harness.lock().await;
        (h.wallets[2].insecure_clone(), h.wallets[0].insecure_clone())
    };
    let (uuid, market_id) = chain::publish_kestrel(&server, &ledger, &creator).await;
    let deadline = ledger
        .harness
        .lock()
        .await
        .market(&market_id)
        .await
        .deadline;
    let bank_now = ledger.harness.lock().await.now().await;
    assert!(deadline > bank_now + 3_600, "the deadline is ahead");

    let key = oracle_agent(&server).await;
    let verdict = json!({"narrative_id": uuid, "resolution": "true", "confidence": 0.9});
    let (status, body) = resolve(&server, &key, &verdict).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let db = server.db.store.db();
    eventually("the job to wait for the deadline", || async {
        let job = settle_job(db).await;
        job.status == "queued"
            && job.attempts == 0
            && job.run_at >= chrono::Utc::now().timestamp() + (deadline - bank_now) - 60
    })
    .await;
    assert_eq!(settle_job(db).await.last_error, None);
    assert_eq!(
        ledger.harness.lock().await.market(&market_id).await.outcome,
        None
    );

    let (status, refused) = server
        .post(
            &format!("/v1/narratives/{uuid}/back"),
            &json!({"wallet_address": backer.pubkey().to_string(), "amount_sol": 1.0, "side": "true"}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["error"], "market_not_open");
    assert_eq!(refused["oracle_status"], "resolved_true");

    ledger.harness.lock().await.warp_to(deadline + 60).await;
    let mut job = settle_job(db).await.into_active_model();
    job.run_at = sea_orm::ActiveValue::Set(chrono::Utc::now().timestamp());
    job.update(db).await.unwrap();
    eventually("the oracle vote on chain", || async {
        let mut h = ledger.harness.lock().await;
        h.market(&market_id).await.outcome == Some(Side::Yes)
    })
    .await;
    server.stop().await;
}
