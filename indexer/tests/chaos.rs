//! Seeded chaos over a recorded scenario: the chain produces blocks while the indexer is
//! killed (its task aborted, a batch in flight included) and restarted, the Geyser server cuts
//! its streams or goes down for a while, and its replay window is short enough that some
//! outages need a gap fill. After each run the store equals the chain and every event is stored
//! once, in order. On SQLite, or Postgres with DATABASE_URL.
//!
//! CI runs a few seeds; for many: `CHAOS_RUNS=200 cargo test -p narrative-indexer --test chaos`
//! (`CHAOS_SEED` picks the first seed; a failing run prints its seed and its actions).
//! Nothing waits on the clock: where the blows land is chosen by the seed in terms of the chain
//! (blocks produced, a block the indexer must reach first), and every wait is for a condition,
//! bounded.

mod common;

use std::time::Duration;

use common::recording::{record_scenario, Recording};
use common::{
    assert_store_matches_with, mock_geyser, mock_rpc, wait_for_checkpoint, wait_until_complete,
    InProcess, LiveChain, Seen,
};
use narrative_store::testing::TestDb;

const WITHIN: Duration = Duration::from_secs(90);
const ACTIONS: usize = 30;

/// splitmix64: small, seedable, and the same sequence on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::test]
async fn kills_cuts_and_outages_leave_the_store_equal_to_the_chain() {
    let recording = record_scenario().await;
    let runs = env_u64("CHAOS_RUNS", 3);
    let first_seed = env_u64("CHAOS_SEED", 0x5eed);
    let mut totals = Totals::default();
    for seed in first_seed..first_seed + runs {
        run(&recording, seed, &mut totals).await;
    }
    eprintln!(
        "{runs} chaos runs: {} kills, {} bootstraps, {} gap fills, {} stream cuts, {} server outages",
        totals.kills, totals.bootstraps, totals.gap_fills, totals.cuts, totals.outages
    );
}

/// What the runs did, summed over the indexers they started.
#[derive(Default)]
struct Totals {
    kills: u64,
    bootstraps: u64,
    gap_fills: u64,
    cuts: u64,
    outages: u64,
}

impl Totals {
    fn count(&mut self, indexer: &InProcess) {
        self.bootstraps += indexer.metrics.bootstraps.get();
        self.gap_fills += indexer.metrics.gap_fills.get();
    }
}

async fn run(recording: &Recording, seed: u64, totals: &mut Totals) {
    let mut rng = Rng(seed);
    let db = TestDb::new().await;
    let blocks = recording.steps.len() as u64;
    // Sometimes the chain already has history, sometimes the server is an older one.
    let head = rng.below(blocks / 2 + 1) as usize;
    let replay_info = rng.below(2) == 0;
    let chain = LiveChain::new(recording, head, |m| {
        // Two blocks: an outage of three or more needs a gap fill.
        m.window = Some(6);
        m.replay_info = replay_info;
    });
    let node = mock_rpc::start(chain.rpc.clone()).await;
    let first = mock_geyser::start(chain.geyser.clone(), None).await;
    let (addr, url) = (first.addr, first.url.clone());
    let mut server = Some(first);
    let mut indexer = Some(InProcess::start(&db.store, &url, &node.url, "chaos"));
    let mut actions = vec![format!(
        "seed {seed}: head {head}, replay info {replay_info}"
    )];

    for _ in 0..ACTIONS {
        match rng.below(8) {
            0..=2 => {
                chain.advance_to(chain.head() + 1);
                actions.push(format!("chain to {}", chain.head()));
            }
            3 => match indexer.take() {
                Some(running) => {
                    totals.count(&running);
                    totals.kills += 1;
                    running.kill().await;
                    actions.push("kill".into());
                    if rng.below(2) == 0 {
                        indexer = Some(InProcess::start(&db.store, &url, &node.url, "chaos"));
                        actions.push("restart".into());
                    }
                }
                None => {
                    indexer = Some(InProcess::start(&db.store, &url, &node.url, "chaos"));
                    actions.push("start".into());
                }
            },
            4 if server.is_some() => {
                // The old server goes (its sessions end) before the new one binds.
                if let Some(old) = server.take() {
                    old.stop().await;
                }
                server = Some(mock_geyser::start(chain.geyser.clone(), Some(addr)).await);
                totals.cuts += 1;
                actions.push("cut the stream".into());
            }
            4 | 5 => {
                server = match server.take() {
                    Some(up) => {
                        up.stop().await;
                        totals.outages += 1;
                        None
                    }
                    None => Some(mock_geyser::start(chain.geyser.clone(), Some(addr)).await),
                };
                actions.push(format!("server up: {}", server.is_some()));
            }
            _ => {
                // Let the indexer get somewhere before the next blow: up to a block picked at
                // random among those produced and not yet committed. With an indexer running
                // and the server up it must get there (bootstrap, replay or gap fill).
                let committed = db.store.checkpoint("chaos").await.unwrap();
                let pending: Vec<u64> = chain.geyser.0.blocks[..chain.head()]
                    .iter()
                    .map(|b| b.slot)
                    .filter(|slot| committed.is_none_or(|c| *slot > c))
                    .collect();
                if indexer.is_none() || server.is_none() || pending.is_empty() {
                    actions.push("no progress to wait for".into());
                    continue;
                }
                let target = pending[rng.below(pending.len() as u64) as usize];
                wait_for_checkpoint(&db.store, "chaos", target, WITHIN).await;
                actions.push(format!("progress to {target}"));
            }
        }
    }

    // Settle: the chain finishes, the server is up, an indexer runs; then the store must match.
    chain.advance_to(chain.blocks());
    let server = match server {
        Some(up) => up,
        None => mock_geyser::start(chain.geyser.clone(), Some(addr)).await,
    };
    let running = indexer.unwrap_or_else(|| InProcess::start(&db.store, &url, &node.url, "chaos"));
    eprintln!("{}", actions.join("; "));
    wait_until_complete(&db.store, "chaos", recording, WITHIN).await;
    assert_store_matches_with(&db.store, recording, Seen::Merged).await;
    totals.count(&running);
    running.stop().await;
    server.stop().await;
}
