//! Outbound work cannot starve the money jobs (issue 26, section 4): push deliveries and agent
//! webhooks run in a lane of their own (bounded workers, a short timeout, a per-host circuit
//! breaker), so while a push service and a webhook receiver that accept connections and never
//! answer hold many queued deliveries, a settlement job still runs within its normal time, and
//! the stuck deliveries wait for their hosts' cool-down instead of being lost. AI drafts, which
//! anyone with a key may request, ask the provider in a lane of their own too, so a provider
//! that never answers delays only the drafts.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::chain;
use common::push_service::{Browser, PushService};
use integration_tests::harness::HarnessOptions;
use narrative_api::clock::SystemClock;
use narrative_api::jobs::deliver_push::DeliverPush;
use narrative_api::jobs::deliver_webhook::DeliverWebhook;
use narrative_api::providers::chat::ChatModel;
use narrative_api::providers::drafter::ChatGenerator;
use narrative_api::providers::prices::FixedPrice;
use narrative_sdk::binary_vault::state::Side;
use narrative_store::entities::{agent_webhooks, jobs, notifications, push_subscriptions};
use reqwest::StatusCode;
use sea_orm::{ActiveValue::NotSet, ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter};
use serde_json::json;
use solana_keypair::Keypair;
use solana_signer::Signer;
use tokio::sync::watch;

/// Deliveries of each kind queued ahead of the settlement.
const QUEUED: usize = 40;
/// How long the settlement may take: its normal time is well under this, and the deliveries
/// ahead of it, sent one after another, would take 80 × the timeout.
const SETTLEMENT_BOUND: Duration = Duration::from_secs(30);

/// A TCP listener that accepts every connection and never answers; how many it accepted.
async fn silent_listener() -> (SocketAddr, watch::Receiver<usize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (count, accepted) = watch::channel(0);
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
            count.send_replace(held.len());
        }
    });
    (addr, accepted)
}

/// The operator's verdict on `uuid`, then the wait (within [`SETTLEMENT_BOUND`]) for the
/// settlement job to cast the vote and wait for the 48 h hold; how long that took. `beside`
/// says what the settlement ran beside, for the failure.
async fn settle_by_verdict(
    server: &common::TestServer,
    ledger: &common::bank::BankLedger,
    uuid: &str,
    market_id: &[u8; 32],
    beside: &str,
) -> Duration {
    let started = Instant::now();
    let (status, verdict) = server
        .admin_post(
            &format!("/v1/admin/narratives/{uuid}/verdict"),
            &json!({"outcome": "true", "evidence": "the release notes"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{verdict}");
    let db = server.db.store.db();
    let settle = || async {
        jobs::Entity::find()
            .filter(jobs::Column::Kind.eq("settle_narrative"))
            .one(db)
            .await
            .unwrap()
    };
    let voted = common::within(SETTLEMENT_BOUND, || async {
        let outcome = ledger.harness.lock().await.market(market_id).await.outcome;
        let job = settle().await?;
        // The job cast the vote and now waits for the 48 h hold: its run is over.
        (outcome == Some(Side::Yes)
            && job.status == "queued"
            && job.run_at > chrono::Utc::now().timestamp() + 86_400)
            .then_some(())
    })
    .await;
    assert!(
        voted.is_some(),
        "the settlement did not run within {SETTLEMENT_BOUND:?} beside {beside}: {:?}",
        settle().await
    );
    started.elapsed()
}

#[tokio::test]
async fn settlement_runs_on_time_while_push_and_webhook_endpoints_never_answer() {
    let (push_addr, push_accepted) = silent_listener().await;
    let (hook_addr, hook_accepted) = silent_listener().await;
    let options = HarnessOptions {
        threshold: 1,
        ..Default::default()
    };
    let (server, ledger) = chain::start_on_bank_with(options, |h, c| {
        c.oracle_keypair = Some(h.oracles[0].to_base58_string().into());
        c.treasury_wallet = Some(h.treasury.to_string());
        // The silent endpoints are on this machine.
        c.outbound_allow_local = true;
        c.push_service_hosts = vec!["127.0.0.1".into()];
    })
    .await;
    let creator = ledger.harness.lock().await.wallets[2].insecure_clone();
    let (uuid, market_id) = chain::publish_kestrel(&server, &ledger, &creator).await;
    ledger.harness.lock().await.warp_by(86_400 + 60).await;

    // An agent whose webhook never answers.
    let (status, registered) = server
        .post(
            "/v1/agent/register",
            &json!({"wallet_address": creator.pubkey().to_string(), "name": "silent"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{registered}");
    let key = registered["agent"]["api_key"].as_str().unwrap();
    let hook_url = format!("http://{hook_addr}/hook");
    let (status, answer) = server
        .key_post(
            "/v1/agent/webhook",
            key,
            &json!({"url": hook_url, "events": ["narrative.resolved"]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let db = server.db.store.db();
    let agent_id = agent_webhooks::Entity::find()
        .one(db)
        .await
        .unwrap()
        .unwrap()
        .agent_id;

    // A browser whose push service never answers, with a notification to push. (Subscribing
    // over HTTP is shown in web_push.rs; the row is what the deliveries read.)
    let keys = PushService::start().await.browser("keys");
    let browser = Browser::at(&format!("http://{push_addr}/push/silent"), &keys);
    let subscription = browser.subscription();
    let wallet = creator.pubkey().to_string();
    let now = chrono::Utc::now().timestamp();
    let subscription_id = push_subscriptions::Entity::insert(push_subscriptions::ActiveModel {
        id: NotSet,
        wallet: Set(wallet.clone()),
        endpoint: Set(browser.endpoint.clone()),
        p256dh: Set(subscription["keys"]["p256dh"].as_str().unwrap().to_owned()),
        auth: Set(subscription["keys"]["auth"].as_str().unwrap().to_owned()),
        created_at: Set(now),
        updated_at: Set(now),
    })
    .exec(db)
    .await
    .unwrap()
    .last_insert_id;
    let notification_id = notifications::Entity::insert(notifications::ActiveModel {
        id: NotSet,
        wallet: Set(wallet),
        kind: Set("system_announcement".into()),
        title: Set("Notice".into()),
        body: Set("Never delivered".into()),
        data: Set(json!({})),
        dedupe_key: Set("silent".into()),
        created_at: Set(now),
        read_at: Set(None),
    })
    .exec(db)
    .await
    .unwrap()
    .last_insert_id;

    // Many deliveries due before the settlement is queued.
    for i in 0..QUEUED {
        let push = DeliverPush {
            subscription_id,
            notification_id,
        };
        narrative_api::jobs::enqueue(db, &push, now, now - 10)
            .await
            .unwrap();
        let hook = DeliverWebhook {
            agent_id: agent_id.clone(),
            url: hook_url.clone(),
            event: "narrative.resolved".into(),
            body: json!({"type": "narrative.resolved", "data": {"n": i}}).to_string(),
            message_id: Some(format!("msg_silent_{i}")),
        };
        narrative_api::jobs::enqueue(db, &hook, now, now - 10)
            .await
            .unwrap();
    }
    // The outbound lane is busy with them: both endpoints hold connections.
    common::eventually("the silent endpoints called", || async {
        *push_accepted.borrow() > 0 && *hook_accepted.borrow() > 0
    })
    .await;

    // The operator's verdict queues the settlement (and one more webhook delivery).
    let took = settle_by_verdict(&server, &ledger, &uuid, &market_id, "silent endpoints").await;

    // Within one outbound request's timeout: a settlement that waited behind even one
    // delivery to a silent host would take at least that.
    assert!(
        took < std::time::Duration::from_secs(5),
        "settlement took {took:?} beside silent receivers"
    );

    // The deliveries were not lost: once each host failed five times in a row, its deliveries
    // wait for the cool-down, none dead and none sent; a skip spends no attempt, and a failed
    // send keeps the attempt it spent (a host that never recovers kills its jobs in the end).
    let outbound = common::within(SETTLEMENT_BOUND, || async {
        let jobs = jobs::Entity::find()
            .filter(jobs::Column::Kind.is_in(["deliver_push", "deliver_webhook"]))
            .all(db)
            .await
            .unwrap();
        let later = chrono::Utc::now().timestamp() + 60;
        jobs.iter()
            .all(|j| j.status == "queued" && j.run_at > later)
            .then_some(jobs)
    })
    .await
    .expect("every delivery waiting for its host's cool-down");
    // Those queued here, and the verdict's own: a webhook, and a push to the creator's browser.
    assert_eq!(outbound.len(), 2 * QUEUED + 2);
    assert!(outbound.iter().all(|j| j.attempts <= 1), "{outbound:?}");
    let spent = outbound.iter().filter(|j| j.attempts == 1).count();
    assert!(
        spent >= 2,
        "the failed sends kept their attempts: {outbound:?}"
    );
    // Five failures per host opened its breaker; the others were not sent at all.
    let (pushed, hooked) = (*push_accepted.borrow(), *hook_accepted.borrow());
    assert!(pushed <= 5 + 4 && hooked <= 5 + 4, "{pushed} {hooked}");
    eprintln!("settled in {took:?}; {pushed} push and {hooked} webhook connections held");
}

/// Draft workers when `DRAFT_WORKERS` is not set.
const DRAFT_WORKERS: usize = 2;

#[tokio::test]
async fn settlement_runs_on_time_while_the_ai_provider_never_answers() {
    // The real chat client, at a provider that accepts every connection and never answers:
    // each draft waits for the client's 30 s timeout.
    let (ai_addr, ai_accepted) = silent_listener().await;
    let options = HarnessOptions {
        threshold: 1,
        ..Default::default()
    };
    let (server, ledger) = chain::start_on_bank_providing(
        Arc::new(SystemClock),
        Arc::new(FixedPrice(150.0)),
        options,
        |providers| {
            let model = ChatModel::new(&format!("http://{ai_addr}/v1"), None, "m".into());
            providers.generator = Arc::new(ChatGenerator(model.unwrap()));
        },
        |h, c| {
            c.oracle_keypair = Some(h.oracles[0].to_base58_string().into());
            c.treasury_wallet = Some(h.treasury.to_string());
        },
    )
    .await;
    let creator = ledger.harness.lock().await.wallets[2].insecure_clone();
    let (uuid, market_id) = chain::publish_kestrel(&server, &ledger, &creator).await;
    ledger.harness.lock().await.warp_by(86_400 + 60).await;

    // As many drafts as one address may ask for in a day (5 for each of four wallets), all
    // queued before the settlement.
    let mut drafts = Vec::new();
    for _ in 0..4 {
        let wallet = Keypair::new().pubkey().to_string();
        for n in 0..5 {
            let (status, started) = server
                .post(
                    "/v1/narratives/generate",
                    &json!({"topic": format!("topic {n}"), "wallet_address": wallet}),
                )
                .await;
            assert_eq!(status, StatusCode::ACCEPTED, "{started}");
            drafts.push(started["jobId"].as_str().unwrap().to_owned());
        }
    }
    // The drafts' lane is busy with them: its workers each hold a connection to the provider.
    common::eventually("every draft worker waiting on the provider", || async {
        *ai_accepted.borrow() >= DRAFT_WORKERS
    })
    .await;

    let took = settle_by_verdict(&server, &ledger, &uuid, &market_id, "a silent AI provider").await;
    let db = server.db.store.db();
    // Well within one chat timeout: a settlement that waited behind even the draft running
    // when the verdict came would take most of 30 s.
    assert!(
        took < Duration::from_secs(10),
        "settlement took {took:?} beside a silent AI provider"
    );

    // The drafts were not dropped: the two in flight still wait on the provider and the rest
    // wait their turn, none failed yet and none answered.
    assert_eq!(*ai_accepted.borrow(), DRAFT_WORKERS, "the lane's bound");
    let draft_jobs = jobs::Entity::find()
        .filter(jobs::Column::Kind.eq("generate_narrative"))
        .all(db)
        .await
        .unwrap();
    assert_eq!(draft_jobs.len(), drafts.len());
    let running = draft_jobs.iter().filter(|j| j.status == "running").count();
    assert_eq!(running, DRAFT_WORKERS, "{draft_jobs:?}");
    assert!(draft_jobs
        .iter()
        .all(|j| j.status == "running" || (j.status == "queued" && j.attempts == 0)));
    for id in &drafts {
        let (status, draft) = server
            .get(&format!("/v1/narratives/generate/status/{id}"))
            .await;
        assert_eq!(status, StatusCode::OK);
        assert_ne!(draft["status"], "failed", "{draft}");
        assert_eq!(draft["draft"], serde_json::Value::Null, "{draft}");
    }
    eprintln!("settled in {took:?} with {DRAFT_WORKERS} drafts waiting on the provider");
}
