//! The indexer's real Yellowstone client against a local Geyser server streaming a recorded
//! program-test scenario as a live chain (and a local JSON-RPC node for its bootstrap), on
//! SQLite or (with DATABASE_URL) Postgres.

mod common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use anchor_lang::AccountSerialize;
use common::mock_geyser::{self, MockGeyser};
use common::mock_rpc;
use common::recording::record_scenario;
use common::{
    assert_key_fields, assert_store_matches, until, wait_for_checkpoint, wait_until_complete,
    LiveChain,
};
use narrative_indexer::metrics::Metrics;
use narrative_indexer::source::grpc::GrpcSource;
use narrative_indexer::{run_pipeline, PipelineConfig};
use narrative_sdk::binary_vault::state::{Backing, Side};
use narrative_sdk::{ids, pda, Pubkey};
use narrative_store::entities::{backings, program_events};
use narrative_store::testing::TestDb;
use narrative_store::AccountUpdate;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use tokio::sync::oneshot;
use yellowstone_grpc_proto::geyser::CommitmentLevel;

const WITHIN: Duration = Duration::from_secs(60);

fn programs() -> Vec<Pubkey> {
    vec![ids::BINARY_VAULT, ids::CRUCIBLE_POOL, ids::SHIELD_VAULT]
}

fn config(batch_size: usize) -> PipelineConfig {
    PipelineConfig {
        checkpoint_name: "grpc".into(),
        batch_size,
        batch_interval: Duration::from_millis(20),
        channel_capacity: 64,
    }
}

/// Runs the pipeline in the background against `url` (and `rpc_url` for its bootstrap) until
/// the returned sender fires.
fn spawn_indexer(
    db: &TestDb,
    url: &str,
    rpc_url: &str,
    metrics: Metrics,
    batch_size: usize,
) -> (
    oneshot::Sender<()>,
    tokio::task::JoinHandle<anyhow::Result<()>>,
) {
    let source = GrpcSource::new(
        url.to_owned(),
        Some("secret-token".into()),
        rpc_url.to_owned(),
        programs(),
        metrics.clone(),
    );
    let (stop, stopped) = oneshot::channel::<()>();
    let store = db.store.clone();
    let handle = tokio::spawn(async move {
        run_pipeline(store, source, config(batch_size), metrics, async {
            let _ = stopped.await;
        })
        .await
    });
    (stop, handle)
}

#[tokio::test]
async fn grpc_round_trip_stores_every_account_and_event_field_by_field() {
    let recording = record_scenario().await;
    let db = TestDb::new().await;
    // A chain that has produced nothing yet, so the stream sees every update as it happens.
    let chain = LiveChain::new(&recording, 0, |_| {});
    let (server, node) = chain.serve().await;
    let metrics = Metrics::new();
    let (stop, handle) = spawn_indexer(&db, &server.url, &node.url, metrics.clone(), 7);
    // The bootstrap finds an empty chain; from then on the stream carries everything.
    until("the bootstrap", WITHIN, || metrics.bootstraps.get() == 1).await;
    chain.advance_to(chain.blocks());

    wait_until_complete(&db.store, "grpc", &recording, WITHIN).await;
    assert_store_matches(&db.store, &recording).await;
    assert_key_fields(&db.store, &recording).await;

    // The subscription the real client sent.
    let mock = &chain.geyser;
    let request = &mock.subscriptions()[0];
    assert_eq!(request.commitment, Some(CommitmentLevel::Confirmed as i32));
    assert_eq!(
        request.from_slot, None,
        "a fresh store subscribes live and bootstraps the rest"
    );
    assert_eq!(metrics.bootstraps.get(), 1);
    let owners: Vec<Pubkey> = request.accounts["programs"]
        .owner
        .iter()
        .map(|o| o.parse().unwrap())
        .collect();
    assert_eq!(owners, programs());
    let tx_filter = &request.transactions["programs"];
    assert_eq!(
        (
            tx_filter.vote,
            tx_filter.failed,
            tx_filter.account_include.len()
        ),
        (Some(false), Some(false), 3)
    );
    assert!(
        mock.0.pings_answered.load(Ordering::SeqCst) >= 1,
        "the server's ping was answered"
    );
    assert!(metrics
        .render()
        .contains("indexer_updates_total{kind=\"event\"}"));
    common::wait_for_committed_gauge(&metrics, recording.last_slot()).await;
    assert_eq!(metrics.committed_slot.get() as u64, recording.last_slot());

    stop.send(()).unwrap();
    handle.await.unwrap().unwrap();
}

#[tokio::test]
async fn events_of_a_market_are_stored_in_order() {
    let recording = record_scenario().await;
    let db = TestDb::new().await;
    let chain = LiveChain::new(&recording, 0, |_| {});
    let (server, node) = chain.serve().await;
    let metrics = Metrics::new();
    let (stop, handle) = spawn_indexer(&db, &server.url, &node.url, metrics.clone(), 5);
    until("the bootstrap", WITHIN, || metrics.bootstraps.get() == 1).await;
    chain.advance_to(chain.blocks());
    wait_until_complete(&db.store, "grpc", &recording, WITHIN).await;
    stop.send(()).unwrap();
    handle.await.unwrap().unwrap();

    let subject = narrative_sdk::decode::hex32(&recording.market_id);
    let names: Vec<String> = program_events::Entity::find()
        .filter(program_events::Column::Subject.eq(subject))
        .order_by_asc(program_events::Column::Slot)
        .order_by_asc(program_events::Column::TxIndex)
        .order_by_asc(program_events::Column::InstructionIndex)
        .order_by_asc(program_events::Column::InnerIndex)
        .all(db.store.db())
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(names, recording.market_event_names);
    assert_eq!(
        names,
        [
            "MarketCreated",
            "MarketBacked",
            "MarketBacked",
            "MarketBacked",
            "OracleVoteSubmitted",
            "OracleVoteSubmitted",
            "ResolutionProposed",
            "MarketFinalized",
            "CrucibleShareForwarded",
            "Claimed",
            "OracleVoteClosed",
        ]
    );
}

fn backing_update(address: Pubkey, amount: u64, slot: u64, write_version: u64) -> AccountUpdate {
    let backing = Backing {
        version: narrative_sdk::binary_vault::state::BackingVersion::CURRENT,
        market_id: [4; 32],
        backer: Pubkey::new_from_array([5; 32]),
        side: Side::No,
        amount,
        claimed: false,
        payout: 0,
        first_backed_at: 1,
        last_backed_at: 2,
        bump: 255,
    };
    let mut data = Vec::new();
    backing.try_serialize(&mut data).unwrap();
    AccountUpdate {
        address,
        owner: ids::BINARY_VAULT,
        lamports: 1_000_000,
        data,
        slot,
        write_version,
    }
}

#[tokio::test]
async fn out_of_order_and_duplicate_updates_leave_the_newest_row() {
    let db = TestDb::new().await;
    let address = Pubkey::new_unique();
    // Newest first, then older ones and a duplicate, in separate batches (batch size 1).
    let stream = [(300, 50, 7), (100, 50, 6), (200, 49, 9), (300, 50, 7)]
        .into_iter()
        .map(|(amount, slot, wv)| {
            (
                slot,
                mock_geyser_update(&backing_update(address, amount, slot, wv)),
            )
        })
        .collect();
    let mock = MockGeyser::new(mock_geyser::blocks_of(stream), 0);
    let server = mock_geyser::start(mock.clone(), None).await;
    // A node with nothing on it: the bootstrap finds no account.
    let node = mock_rpc::start(Default::default()).await;
    let metrics = Metrics::new();
    let (stop, handle) = spawn_indexer(&db, &server.url, &node.url, metrics.clone(), 1);
    until("the bootstrap", WITHIN, || metrics.bootstraps.get() == 1).await;
    mock.advance_to(4);
    // Every update committed, one batch each, after the bootstrap's checkpoint.
    until("five committed batches", WITHIN, || {
        metrics.batches.get() >= 5
    })
    .await;
    stop.send(()).unwrap();
    handle.await.unwrap().unwrap();
    let row = backings::Entity::find_by_id(address.to_string())
        .one(db.store.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((row.amount, row.slot, row.write_version), (300, 50, 7));
}

fn mock_geyser_update(a: &AccountUpdate) -> yellowstone_grpc_proto::geyser::SubscribeUpdate {
    yellowstone_grpc_proto::geyser::SubscribeUpdate {
        filters: vec!["programs".into()],
        update_oneof: Some(mock_geyser::account(a)),
        created_at: None,
    }
}

#[tokio::test]
async fn a_cut_stream_and_a_restarted_server_resume_from_the_checkpoint() {
    let recording = record_scenario().await;
    let db = TestDb::new().await;
    let chain = LiveChain::new(&recording, 0, |_| {});
    let total: usize = mock_geyser::messages(&chain.geyser.0.blocks).len();
    *chain.geyser.0.cut_after.lock().unwrap() = Some(total / 2);
    chain
        .geyser
        .0
        .refuse_after_cut
        .store(true, Ordering::SeqCst);
    let (server, node) = chain.serve().await;
    let addr = server.addr;
    let metrics = Metrics::new();
    let (stop, handle) = spawn_indexer(&db, &server.url, &node.url, metrics.clone(), 3);
    until("the bootstrap", WITHIN, || metrics.bootstraps.get() == 1).await;
    chain.advance_to(chain.blocks());

    // The first server cuts its stream half-way; then it goes down altogether.
    let mid_slot = mock_geyser::messages(&chain.geyser.0.blocks)[total / 2 - 1].0;
    wait_for_checkpoint(&db.store, "grpc", mid_slot.saturating_sub(3), WITHIN).await;
    let reconnects_before = metrics.reconnects.get();
    server.stop().await;
    // The indexer has seen the server go and is trying to reconnect: nothing more commits.
    until("a reconnection attempt after the outage", WITHIN, || {
        metrics.reconnects.get() > reconnects_before
    })
    .await;
    let checkpoint = db
        .store
        .checkpoint("grpc")
        .await
        .unwrap()
        .expect("a checkpoint before the outage");
    assert!(checkpoint < recording.last_slot());

    // The server comes back on the same address, on the same chain, with its whole history.
    let second = chain.geyser.sharing();
    let _server = mock_geyser::start(second.clone(), Some(addr)).await;
    wait_until_complete(&db.store, "grpc", &recording, WITHIN).await;
    assert_store_matches(&db.store, &recording).await;

    let resumed = second.subscriptions();
    let from = resumed
        .last()
        .expect("the indexer reconnected")
        .from_slot
        .expect("with from_slot");
    assert!(
        from >= checkpoint && from <= recording.last_slot(),
        "resumed from {from}, checkpoint was {checkpoint}"
    );
    assert!(metrics.reconnects.get() >= 1);
    assert_eq!(metrics.gap_fills.get(), 0, "no gap: the server replayed");
    stop.send(()).unwrap();
    handle.await.unwrap().unwrap();
}

#[tokio::test]
async fn backing_rows_follow_the_programs_addresses() {
    // A guard on the recording itself: the backing the scenario asserts on exists and is
    // owned by binary_vault, so the field checks above are about real program state.
    let recording = record_scenario().await;
    let address = pda::binary::backing(&recording.market_id, &recording.wallets[0], Side::Yes);
    assert_eq!(recording.final_accounts[&address].0, ids::BINARY_VAULT);
    assert_eq!(
        recording.closed,
        vec![pda::binary::oracle_vote(
            &recording.market_id,
            &recording.oracle
        )]
    );
}
