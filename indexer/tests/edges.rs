//! The indexer at its edges, on SQLite or (with DATABASE_URL) Postgres, against a live chain
//! whose Geyser server replays only a window of recent slots: a first start against a chain
//! that already holds accounts, and outages shorter and longer than the window. After each the
//! store equals the chain and every event is stored once, in order.

mod common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use common::recording::{record_scenario, Recording};
use common::{
    assert_events_once_in_order, assert_key_fields, assert_store_matches,
    assert_store_matches_with, mock_geyser, until, wait_for_checkpoint, wait_until_complete,
    InProcess, LiveChain, Seen,
};
use narrative_store::testing::TestDb;

const WITHIN: Duration = Duration::from_secs(60);
/// The server replays 9 slots: three blocks of the recording (a block every 3 slots).
const WINDOW_SLOTS: u64 = 9;

#[tokio::test]
async fn a_first_start_against_a_populated_chain_indexes_every_existing_account() {
    let recording = record_scenario().await;
    let db = TestDb::new().await;
    // Everything has happened already; a subscription would only see what comes next.
    let chain = LiveChain::new(&recording, recording.steps.len(), |m| {
        m.window = Some(WINDOW_SLOTS)
    });
    let (server, node) = chain.serve().await;
    let indexer = InProcess::start(&db.store, &server.url, &node.url, "edges");

    wait_until_complete(&db.store, "edges", &recording, WITHIN).await;
    // Every account as the snapshot saw it (at the chain's last slot), field by field, and
    // every event of the programs' history from the backfill, once and in order.
    assert_store_matches_with(&db.store, &recording, Seen::Snapshot(recording.last_slot())).await;
    assert_key_fields(&db.store, &recording).await;
    assert_events_once_in_order(&db.store, &recording).await;
    let m = &indexer.metrics;
    assert_eq!(
        (m.bootstraps.get(), m.gap_fills.get(), m.leader.get()),
        (1, 0, 1)
    );
    let subscriptions = chain.geyser.subscriptions();
    assert_eq!(subscriptions.len(), 1);
    assert_eq!(subscriptions[0].from_slot, None, "live, not a replay");
    assert_eq!(
        db.store.checkpoint("edges").await.unwrap(),
        Some(recording.last_slot())
    );
    indexer.stop().await;
}

#[tokio::test]
async fn the_checkpoint_waits_for_the_bootstrap_to_be_committed() {
    let recording = record_scenario().await;
    let db = TestDb::new().await;
    let chain = LiveChain::new(&recording, 0, |_| {});
    // The JSON-RPC node is down: the stream runs, the snapshot cannot be taken.
    chain.rpc.lock().unwrap().failing = true;
    let (server, node) = chain.serve().await;
    let indexer = InProcess::start(&db.store, &server.url, &node.url, "edges");
    until("the subscription", WITHIN, || {
        !chain.geyser.subscriptions().is_empty()
    })
    .await;
    chain.advance_to(6);
    until("streamed updates committed", WITHIN, || {
        indexer.metrics.updates.with_label_values(&["event"]).get() >= 4
    })
    .await;
    // A crash now must start the bootstrap over, so there is still no checkpoint; and the
    // stream was kept while the snapshot is retried.
    assert_eq!(db.store.checkpoint("edges").await.unwrap(), None);
    assert_eq!(indexer.metrics.bootstraps.get(), 0);
    assert_eq!(chain.geyser.subscriptions().len(), 1);

    chain.rpc.lock().unwrap().failing = false;
    until("the bootstrap", WITHIN, || {
        indexer.metrics.bootstraps.get() == 1
    })
    .await;
    assert_eq!(chain.geyser.subscriptions().len(), 1, "on the same stream");
    chain.advance_to(chain.blocks());
    wait_until_complete(&db.store, "edges", &recording, WITHIN).await;
    assert_store_matches_with(&db.store, &recording, Seen::Merged).await;
    indexer.stop().await;
}

/// What an outage scenario saw.
struct Outage {
    checkpoint_before: u64,
    first_available: u64,
    indexer: InProcess,
    chain: LiveChain,
    resumed: mock_geyser::MockGeyser,
}

/// Indexes the first blocks, takes the server down while the chain produces `outage_blocks`
/// more, brings it back (answering `SubscribeReplayInfo` or not), and lets the chain finish.
async fn outage(
    db: &TestDb,
    recording: &Recording,
    outage_blocks: usize,
    replay_info: bool,
) -> Outage {
    let chain = LiveChain::new(recording, 0, |m| {
        m.window = Some(WINDOW_SLOTS);
        m.replay_info = replay_info;
    });
    let (server, node) = chain.serve().await;
    let addr = server.addr;
    let indexer = InProcess::start(&db.store, &server.url, &node.url, "edges");
    until("the bootstrap", WITHIN, || {
        indexer.metrics.bootstraps.get() == 1
    })
    .await;
    let before = 4;
    chain.advance_to(before);
    let checkpoint_before = recording.steps[before - 1].slot;
    wait_for_checkpoint(&db.store, "edges", checkpoint_before, WITHIN).await;

    let reconnects = indexer.metrics.reconnects.get();
    server.stop().await;
    until("the indexer noticed the outage", WITHIN, || {
        indexer.metrics.reconnects.get() > reconnects
    })
    .await;
    chain.advance_to(before + outage_blocks);
    let first_available = chain.geyser.first_available().expect("a window");
    assert_eq!(
        db.store.checkpoint("edges").await.unwrap(),
        Some(checkpoint_before),
        "nothing committed during the outage"
    );

    let resumed = chain.geyser.sharing();
    let _server = mock_geyser::start(resumed.clone(), Some(addr)).await;
    // The chain moves on only once the first session after the outage has planned (its
    // subscription comes after the plan) and any gap fill is done, so the window it saw is the
    // one this test computed.
    until("a session after the outage", WITHIN, || {
        !resumed.subscriptions().is_empty()
    })
    .await;
    if first_available > checkpoint_before {
        until("the gap filled", WITHIN, || {
            indexer.metrics.gap_fills.get() == 1
        })
        .await;
    }
    chain.advance_to(chain.blocks());
    wait_until_complete(&db.store, "edges", recording, WITHIN).await;
    Outage {
        checkpoint_before,
        first_available,
        indexer,
        chain,
        resumed,
    }
}

#[tokio::test]
async fn an_outage_inside_the_replay_window_resumes_from_the_checkpoint() {
    let recording = record_scenario().await;
    let db = TestDb::new().await;
    let o = outage(&db, &recording, 2, true).await;
    assert!(
        o.first_available <= o.checkpoint_before,
        "inside the window"
    );

    // The server replayed the missed slots: every row is the streamed one, version included.
    assert_store_matches(&db.store, &recording).await;
    assert_events_once_in_order(&db.store, &recording).await;
    let resumed = o.resumed.subscriptions();
    assert!(resumed
        .iter()
        .all(|s| s.from_slot == Some(o.checkpoint_before)));
    assert_eq!(o.indexer.metrics.gap_fills.get(), 0);
    assert_eq!(o.resumed.0.refused.load(Ordering::SeqCst), 0);
    drop(o.chain);
    o.indexer.stop().await;
}

#[tokio::test]
async fn an_outage_beyond_the_replay_window_is_filled_from_json_rpc() {
    let recording = record_scenario().await;
    let db = TestDb::new().await;
    let o = outage(&db, &recording, 6, true).await;
    assert!(o.first_available > o.checkpoint_before, "beyond the window");

    assert_store_matches_with(&db.store, &recording, Seen::Merged).await;
    assert_key_fields(&db.store, &recording).await;
    let m = &o.indexer.metrics;
    assert_eq!(m.gap_fills.get(), 1);
    assert_eq!(
        m.gap_slots.get() as u64,
        o.first_available - o.checkpoint_before,
        "the gap the server reported"
    );
    // It knew from SubscribeReplayInfo: no replay was asked for, none refused.
    let resumed = o.resumed.subscriptions();
    assert_eq!(
        resumed[0].from_slot, None,
        "live, with the gap filled beside it"
    );
    assert_eq!(o.resumed.0.refused.load(Ordering::SeqCst), 0);
    o.indexer.stop().await;
}

#[tokio::test]
async fn a_server_that_refuses_the_replay_gets_the_gap_filled_too() {
    let recording = record_scenario().await;
    let db = TestDb::new().await;
    // An older server: no SubscribeReplayInfo, so the indexer learns from the refusal.
    let o = outage(&db, &recording, 6, false).await;
    assert!(o.first_available > o.checkpoint_before);

    assert_store_matches_with(&db.store, &recording, Seen::Merged).await;
    let m = &o.indexer.metrics;
    assert_eq!(m.gap_fills.get(), 1);
    assert_eq!(
        m.gap_slots.get() as u64,
        o.first_available - o.checkpoint_before,
        "parsed from the refusal"
    );
    let resumed = o.resumed.subscriptions();
    assert_eq!(resumed[0].from_slot, Some(o.checkpoint_before));
    assert_eq!(resumed[1].from_slot, None);
    assert_eq!(o.resumed.0.refused.load(Ordering::SeqCst), 1);
    o.indexer.stop().await;
}
