//! Shared by the indexer's tests: a recorded program-test scenario, mock gRPC and JSON-RPC
//! servers serving it, and assertions that the store equals the chain.
#![allow(dead_code)]

pub mod mock_geyser;
pub mod mock_rpc;
pub mod recording;

use std::time::Duration;

use narrative_sdk::binary_vault::state::{Backing, Market};
use narrative_sdk::decode::{decode_account, BinaryAccount, ProgramAccount, ShieldAccount};
use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::*;
use narrative_store::{AccountRow, AccountUpdate, Store};
use sea_orm::{EntityTrait, PaginatorTrait};

use mock_geyser::MockGeyser;
use mock_rpc::{Chain, SharedChain};
use recording::Recording;

/// A recorded chain as both servers see it: blocks the Geyser server streams once produced, and
/// the JSON-RPC node's accounts and transactions as of the same head.
#[derive(Clone)]
pub struct LiveChain {
    pub geyser: MockGeyser,
    pub rpc: SharedChain,
    /// The JSON-RPC view after each number of blocks.
    views: std::sync::Arc<Vec<Chain>>,
}

impl LiveChain {
    /// `recording`'s chain, having produced `head` blocks; `configure` sets the Geyser server.
    pub fn new(
        recording: &Recording,
        head: usize,
        configure: impl FnOnce(&mut mock_geyser::MockState),
    ) -> LiveChain {
        let views: Vec<Chain> = (0..=recording.steps.len())
            .map(|n| Chain::at(recording, n))
            .collect();
        let rpc = std::sync::Arc::new(std::sync::Mutex::new(views[head].clone()));
        let geyser = MockGeyser::new(mock_geyser::blocks(recording), head).with(configure);
        LiveChain {
            geyser,
            rpc,
            views: std::sync::Arc::new(views),
        }
    }

    pub fn blocks(&self) -> usize {
        self.views.len() - 1
    }

    pub fn head(&self) -> usize {
        self.geyser.head()
    }

    /// Produces blocks up to `head`.
    pub fn advance_to(&self, head: usize) {
        let head = head.min(self.blocks()).max(self.head());
        let mut rpc = self.rpc.lock().unwrap();
        let failing = rpc.failing;
        *rpc = self.views[head].clone();
        rpc.failing = failing;
        drop(rpc);
        self.geyser.advance_to(head);
    }

    /// Serves the chain: (Geyser server, JSON-RPC node).
    pub async fn serve(&self) -> (mock_geyser::Server, mock_rpc::RpcServer) {
        (
            mock_geyser::start(self.geyser.clone(), None).await,
            mock_rpc::start(self.rpc.clone()).await,
        )
    }
}

/// Waits until `check` holds, looking every 20 ms; fails the test when `within` passes first.
pub async fn until<F>(what: &str, within: Duration, mut check: F)
where
    F: FnMut() -> bool,
{
    until_async(what, within, || std::future::ready(check())).await
}

/// [`until`] for a check that has to ask something (the store, an HTTP endpoint).
pub async fn until_async<F, Fut>(what: &str, within: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let mut ticks = tokio::time::interval(Duration::from_millis(20));
    let poll = async {
        loop {
            ticks.tick().await;
            if check().await {
                return;
            }
        }
    };
    tokio::time::timeout(within, poll)
        .await
        .unwrap_or_else(|_| panic!("{what} did not happen within {within:?}"));
}

/// Waits until checkpoint `name` reaches `slot`.
pub async fn wait_for_checkpoint(store: &Store, name: &str, slot: u64, within: Duration) {
    let what = format!("checkpoint {name} at {slot}");
    until_async(&what, within, || async {
        store.checkpoint(name).await.unwrap() >= Some(slot)
    })
    .await
}

/// Waits until the committed-slot gauge shows `slot`. The gauge is set after the commit
/// returns, so a reader of the store can see the checkpoint a moment before the gauge.
pub async fn wait_for_committed_gauge(metrics: &narrative_indexer::metrics::Metrics, slot: u64) {
    until("the committed-slot gauge", Duration::from_secs(10), || {
        metrics.committed_slot.get() as u64 == slot
    })
    .await
}

/// Waits until checkpoint `name` has reached the recording's last slot and every event is
/// stored. The checkpoint alone is not enough: a slot's account updates can commit in one batch
/// and its transaction in the next.
pub async fn wait_until_complete(
    store: &Store,
    name: &str,
    recording: &Recording,
    within: Duration,
) {
    wait_for_checkpoint(store, name, recording.last_slot(), within).await;
    until_async("every event stored", within, || async {
        let events = program_events::Entity::find()
            .count(store.db())
            .await
            .unwrap() as usize;
        events >= recording.event_count
    })
    .await
}

/// The row stored for `expected`'s address, in `expected`'s table.
async fn stored_row(store: &Store, expected: &AccountRow) -> Option<AccountRow> {
    let db = store.db();
    let address = expected.address().to_owned();
    macro_rules! fetch {
        ($($variant:ident => $table:ident),*) => {
            match expected {
                $(AccountRow::$variant(_) => $table::Entity::find_by_id(address).one(db).await.unwrap().map(AccountRow::$variant),)*
            }
        };
    }
    fetch!(
        BinaryProgramState => binary_program_states, BinaryConfig => binary_configs, Market => markets,
        Backing => backings, OracleVote => oracle_votes, Dispute => disputes, CrucibleState => crucible_states,
        CrucibleAssetPool => crucible_asset_pools, CrucibleEpoch => crucible_epochs, CrucibleClaim => crucible_claims,
        ShieldProgram => shield_programs, ShieldCoverage => shield_coverages, ShieldBacking => shield_backings,
        ShieldVote => shield_votes, Raw => raw_accounts
    )
}

/// Every account of the recording's final state is stored with all its fields as of its last
/// update, closed accounts are marked closed, and every event is stored exactly once.
pub async fn assert_store_matches(store: &Store, recording: &Recording) {
    assert_store_matches_with(store, recording, Seen::Stream).await
}

/// How the source saw the chain.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Every update, with its slot and write version; closed accounts before they closed.
    Stream,
    /// One snapshot at the given slot (write version 0); accounts closed before it never.
    Snapshot(u64),
    /// Streamed updates merged with snapshots taken at unknown slots: each row holds exactly the
    /// final data, at the last streamed version or a snapshot's (write version 0, a slot no
    /// older than the last update's).
    Merged,
}

pub async fn assert_store_matches_with(store: &Store, recording: &Recording, seen: Seen) {
    let closed_seen = seen == Seen::Stream;
    if seen == Seen::Merged {
        return assert_store_merged(store, recording).await;
    }
    let last_update = recording.last_updates();
    for (address, (owner, data)) in &recording.final_accounts {
        let update = last_update[address];
        assert_eq!(
            (&update.owner, &update.data),
            (owner, data),
            "the last update is the final state of {address}"
        );
        let as_seen = match seen {
            Seen::Stream | Seen::Merged => update.clone(),
            Seen::Snapshot(slot) => AccountUpdate {
                slot,
                write_version: 0,
                ..update.clone()
            },
        };
        let expected = AccountRow::from_update(&as_seen).unwrap();
        assert!(!matches!(expected, AccountRow::Raw(_)), "{address} decodes");
        let stored = stored_row(store, &expected)
            .await
            .unwrap_or_else(|| panic!("no row for {address}"));
        assert_eq!(stored, expected, "row of {address}");
    }
    for address in &recording.closed {
        let row = oracle_votes::Entity::find_by_id(address.to_string())
            .one(store.db())
            .await
            .unwrap();
        if closed_seen {
            assert!(
                row.is_some_and(|r| r.closed),
                "closed account {address} is marked closed"
            );
        } else {
            assert!(
                row.is_none_or(|r| r.closed),
                "no open row for closed account {address}"
            );
        }
    }
    let events = program_events::Entity::find()
        .count(store.db())
        .await
        .unwrap();
    assert_eq!(events as usize, recording.event_count, "every event once");
}

async fn assert_store_merged(store: &Store, recording: &Recording) {
    let last_update = recording.last_updates();
    for address in recording.final_accounts.keys() {
        let update = last_update[address];
        let probe = AccountRow::from_update(update).unwrap();
        let stored = stored_row(store, &probe)
            .await
            .unwrap_or_else(|| panic!("no row for {address}"));
        let (slot, write_version) = stored.version();
        let streamed = (update.slot as i64, update.write_version as i64);
        assert!(
            // The streamed row, or a snapshot's: the state at the end of its slot.
            (slot, write_version) == streamed || (write_version == 0 && slot >= streamed.0),
            "{address}: stored version {:?}, last streamed {streamed:?}",
            (slot, write_version)
        );
        // Every other field: the final state's, as of the stored version.
        let expected = AccountRow::from_update(&AccountUpdate {
            slot: slot as u64,
            write_version: write_version as u64,
            ..update.clone()
        })
        .unwrap();
        assert_eq!(stored, expected, "row of {address}");
    }
    for address in &recording.closed {
        let row = oracle_votes::Entity::find_by_id(address.to_string())
            .one(store.db())
            .await
            .unwrap();
        assert!(
            row.is_none_or(|r| r.closed),
            "no open row for closed account {address}"
        );
    }
    assert_events_once_in_order(store, recording).await;
}

/// Every recorded event is stored once, and in chain order: ordered by position, the stored
/// events are the recording's, name by name and signature by signature.
pub async fn assert_events_once_in_order(store: &Store, recording: &Recording) {
    use sea_orm::QueryOrder;
    let stored: Vec<(String, String)> = program_events::Entity::find()
        .order_by_asc(program_events::Column::Slot)
        .order_by_asc(program_events::Column::TxIndex)
        .order_by_asc(program_events::Column::InstructionIndex)
        .order_by_asc(program_events::Column::InnerIndex)
        .all(store.db())
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.signature, e.name))
        .collect();
    let expected: Vec<(String, String)> = recording
        .steps
        .iter()
        .filter_map(|s| s.tx.as_ref())
        .flat_map(|tx| {
            let signature = tx.transaction.signatures[0].to_string();
            tx.events()
                .into_iter()
                .map(move |e| (signature.clone(), e.name().to_owned()))
        })
        .collect();
    assert_eq!(stored.len(), recording.event_count, "every event once");
    assert_eq!(stored, expected, "events in chain order");
}

/// Explicit checks of the values that matter, against the chain's own decoded state.
pub async fn assert_key_fields(store: &Store, recording: &Recording) {
    let decode = |address: &Pubkey| {
        let (owner, data) = &recording.final_accounts[address];
        decode_account(owner, data).expect("decodes")
    };
    let market_address = pda::binary::market(&recording.market_id);
    let Some(ProgramAccount::Binary(BinaryAccount::Market(market))) = Some(decode(&market_address))
    else {
        panic!("market")
    };
    let market: Market = market;
    let row = markets::Entity::find_by_id(market_address.to_string())
        .one(store.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (row.yes_total, row.no_total),
        (market.yes_total as i64, market.no_total as i64)
    );
    assert_eq!(
        (row.oracle_status, row.finalized, row.outcome.as_deref()),
        (1, true, Some("yes"))
    );
    assert_eq!(
        (row.crucible_amount, row.total_paid_out, row.claims_count),
        (
            market.crucible_amount as i64,
            market.total_paid_out as i64,
            1
        )
    );
    // Indexed since the hardening: the forwarded crucible share and the market's own oracles.
    assert!(row.crucible_forwarded, "the scenario forwards the share");
    assert_eq!(row.oracle_threshold, i32::from(market.oracle_set.threshold));
    let oracles: Vec<String> = market
        .oracle_set
        .listed()
        .iter()
        .map(|k| k.to_string())
        .collect();
    assert!(oracles.contains(&recording.oracle.to_string()));
    assert_eq!(row.oracles, Some(serde_json::json!(oracles)));
    assert_eq!(
        row.market_uuid,
        narrative_sdk::market_id::uuid_from_market_id(&recording.market_id)
            .ok()
            .map(|u| u.to_string())
    );

    let backing_address = pda::binary::backing(
        &recording.market_id,
        &recording.wallets[0],
        narrative_sdk::binary_vault::state::Side::Yes,
    );
    let Some(ProgramAccount::Binary(BinaryAccount::Backing(backing))) =
        Some(decode(&backing_address))
    else {
        panic!("backing")
    };
    let backing: Backing = backing;
    let row = backings::Entity::find_by_id(backing_address.to_string())
        .one(store.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (row.amount, row.claimed, row.payout),
        (backing.amount as i64, true, backing.payout as i64)
    );
    assert!(
        row.payout > row.amount,
        "the winner's payout includes a share of the forfeit"
    );

    let coverage_address = pda::shield::coverage(&recording.protocol_id);
    let Some(ProgramAccount::Shield(ShieldAccount::Coverage(coverage))) =
        Some(decode(&coverage_address))
    else {
        panic!("coverage")
    };
    let row = shield_coverages::Entity::find_by_id(coverage_address.to_string())
        .one(store.db())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (row.safe_principal, row.exploit_principal),
        (
            coverage.safe.principal as i64,
            coverage.exploit.principal as i64
        )
    );
    assert!(
        !row.seam_forwarded,
        "an active coverage has forwarded nothing"
    );
    assert_eq!(
        (
            row.safe_shares_total,
            row.kind.as_str(),
            row.status.as_str()
        ),
        (
            coverage.safe.shares_total.to_string(),
            "community",
            "active"
        )
    );

    let epoch = crucible_epochs::Entity::find_by_id(
        pda::crucible::epoch(&narrative_sdk::crucible_pool::SOL_MINT, 0).to_string(),
    )
    .one(store.db())
    .await
    .unwrap()
    .unwrap();
    assert_eq!(epoch.deposited, market.crucible_amount as i64);
}

/// An indexer running in this process (leader election included) against a gRPC endpoint and
/// a JSON-RPC node; aborting its task is a kill (its stages go with it).
pub struct InProcess {
    pub metrics: narrative_indexer::metrics::Metrics,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    pub task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

pub const FAST_LEASE: narrative_indexer::LeaseConfig = narrative_indexer::LeaseConfig {
    retry: Duration::from_millis(20),
    ttl: Duration::from_millis(300),
};

impl InProcess {
    pub fn start(store: &Store, grpc_url: &str, rpc_url: &str, checkpoint: &str) -> InProcess {
        use narrative_indexer::source::grpc::GrpcSource;
        let metrics = narrative_indexer::metrics::Metrics::new();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (grpc_url, rpc_url) = (grpc_url.to_owned(), rpc_url.to_owned());
        let source_metrics = metrics.clone();
        let new_source = move || {
            let mut source = GrpcSource::new(
                grpc_url.clone(),
                None,
                rpc_url.clone(),
                vec![
                    narrative_sdk::ids::BINARY_VAULT,
                    narrative_sdk::ids::CRUCIBLE_POOL,
                    narrative_sdk::ids::SHIELD_VAULT,
                ],
                source_metrics.clone(),
            );
            // Reconnect on the scale of the tests' outages, not of a real one.
            source.backoff = narrative_indexer::source::Backoff::new(
                Duration::from_millis(10),
                Duration::from_millis(100),
            );
            source
        };
        let pipeline = narrative_indexer::PipelineConfig {
            checkpoint_name: checkpoint.to_owned(),
            batch_size: 4,
            batch_interval: Duration::from_millis(10),
            channel_capacity: 64,
        };
        let task = tokio::spawn(narrative_indexer::run_as_leader(
            store.clone(),
            new_source,
            pipeline,
            FAST_LEASE,
            metrics.clone(),
            async {
                let _ = stopped.await;
            },
        ));
        InProcess {
            metrics,
            stop: Some(stop),
            task,
        }
    }

    /// Stops between batches and waits for it.
    pub async fn stop(mut self) {
        let _ = self.stop.take().expect("running").send(());
        self.task.await.unwrap().unwrap();
    }

    /// Aborts it wherever it is, a batch in flight included.
    pub async fn kill(self) {
        self.task.abort();
        let _ = self.task.await;
    }
}
