//! The JSON-RPC fallback: the indexer's real RPC client polls a local JSON-RPC node serving a
//! recorded scenario's accounts and transactions; later polls turn changes into updates and
//! vanished accounts into closures.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use anchor_lang::AccountSerialize;
use common::mock_rpc::{self, Chain};
use common::recording::record_scenario;
use common::{
    assert_key_fields, assert_store_matches_with, wait_for_checkpoint, wait_until_complete, Seen,
};
use narrative_indexer::metrics::Metrics;
use narrative_indexer::source::rpc::RpcSource;
use narrative_indexer::{run_pipeline, PipelineConfig};
use narrative_sdk::binary_vault::state::Side;
use narrative_sdk::decode::{decode_account, BinaryAccount, ProgramAccount};
use narrative_sdk::{ids, pda};
use narrative_store::entities::backings;
use narrative_store::testing::TestDb;
use sea_orm::EntityTrait;

#[tokio::test]
async fn rpc_polling_stores_the_snapshot_the_events_and_later_changes() {
    let recording = record_scenario().await;
    let db = TestDb::new().await;
    let chain = Arc::new(Mutex::new(Chain::from_recording(&recording)));
    let server = mock_rpc::start(chain.clone()).await;
    let metrics = Metrics::new();
    let source = RpcSource::new(
        server.url.clone(),
        vec![ids::BINARY_VAULT, ids::CRUCIBLE_POOL, ids::SHIELD_VAULT],
        Duration::from_millis(50),
        metrics.clone(),
    );
    let config = PipelineConfig {
        checkpoint_name: "rpc".into(),
        ..PipelineConfig::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let store = db.store.clone();
    let handle = tokio::spawn(run_pipeline(
        store,
        source,
        config,
        metrics.clone(),
        async {
            let _ = stopped.await;
        },
    ));

    wait_until_complete(&db.store, "rpc", &recording, Duration::from_secs(60)).await;
    assert_store_matches_with(&db.store, &recording, Seen::Snapshot(recording.last_slot())).await;
    assert_key_fields(&db.store, &recording).await;

    // Later: one backing grows, another disappears.
    let grown = pda::binary::backing(&recording.market_id, &recording.wallets[2], Side::Yes);
    let gone = pda::binary::backing(&recording.market_id, &recording.wallets[1], Side::No);
    let later = recording.last_slot() + 10;
    {
        let mut chain = chain.lock().unwrap();
        chain.slot = later;
        let entry = chain.accounts.get_mut(&grown).unwrap();
        let Some(ProgramAccount::Binary(BinaryAccount::Backing(mut backing))) =
            decode_account(&entry.0, &entry.2)
        else {
            panic!("backing decodes")
        };
        backing.amount += 1;
        entry.2.clear();
        backing.try_serialize(&mut entry.2).unwrap();
        chain.accounts.remove(&gone);
    }
    wait_for_checkpoint(&db.store, "rpc", later, Duration::from_secs(60)).await;
    let row = backings::Entity::find_by_id(grown.to_string())
        .one(db.store.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((row.amount, row.slot), (500_000_001, later as i64));
    // The closure is a message of the same slot, but it may commit in the batch after the one
    // that moved the checkpoint: wait for it (bounded) rather than race it.
    let closed_row = || async {
        backings::Entity::find_by_id(gone.to_string())
            .one(db.store.db())
            .await
            .unwrap()
            .unwrap()
    };
    common::until_async(
        "the vanished account closed",
        Duration::from_secs(10),
        || async { closed_row().await.closed },
    )
    .await;
    let row = closed_row().await;
    assert!(
        row.closed && row.slot == later as i64,
        "a vanished account is closed"
    );
    common::wait_for_committed_gauge(&metrics, later).await;
    assert_eq!(metrics.committed_slot.get() as u64, later);

    stop.send(()).unwrap();
    handle.await.unwrap().unwrap();
}
