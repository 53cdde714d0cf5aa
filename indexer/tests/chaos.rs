//! Seeded chaos over a recorded scenario: the chain produces blocks while the indexer is
//! killed (its task aborted, a batch in flight included) and restarted, the Geyser server cuts
//! its streams or goes down for a while, and its replay window is short enough that some
//! outages need a gap fill. After each run the store equals the chain and every event is stored
//! once, in order. On SQLite, or Postgres with DATABASE_URL.
//!
//! CI runs a few seeds; for many: `CHAOS_RUNS=200 cargo test -p narrative-indexer --test chaos`
//! (`CHAOS_SEED` picks the first seed; a failing run prints its seed and its actions).
//! The random pauses only choose where the kills and cuts land; every check waits for its
//! condition, bounded.

mod common;

use std::time::Duration;

use common::recording::{record_scenario, Recording};
use common::{
    assert_store_matches_with, mock_geyser, mock_rpc, wait_until_complete, InProcess, LiveChain,
    Seen,
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
        m.pace = Duration::from_millis(1);
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
                drop(server.take());
                server = Some(mock_geyser::start(chain.geyser.clone(), Some(addr)).await);
                totals.cuts += 1;
                actions.push("cut the stream".into());
            }
            4 | 5 => {
                server = match server.take() {
                    Some(_) => {
                        totals.outages += 1;
                        None
                    }
                    None => Some(mock_geyser::start(chain.geyser.clone(), Some(addr)).await),
                };
                actions.push(format!("server up: {}", server.is_some()));
            }
            6 => {
                // Let the indexer get somewhere (or not) before the next blow.
                let before = db.store.checkpoint("chaos").await.unwrap();
                let started = std::time::Instant::now();
                while db.store.checkpoint("chaos").await.unwrap() == before
                    && started.elapsed() < Duration::from_millis(300)
                {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                actions.push(format!(
                    "progress {before:?} → {:?}",
                    db.store.checkpoint("chaos").await.unwrap()
                ));
            }
            _ => {
                let pause = rng.below(100);
                tokio::time::sleep(Duration::from_millis(pause)).await;
                actions.push(format!("pause {pause} ms"));
            }
        }
    }

    // Settle: the chain finishes, the server is up, an indexer runs; then the store must match.
    chain.advance_to(chain.blocks());
    if server.is_none() {
        server = Some(mock_geyser::start(chain.geyser.clone(), Some(addr)).await);
    }
    let running = indexer.unwrap_or_else(|| InProcess::start(&db.store, &url, &node.url, "chaos"));
    eprintln!("{}", actions.join("; "));
    wait_until_complete(&db.store, "chaos", recording, WITHIN).await;
    assert_store_matches_with(&db.store, recording, Seen::Merged).await;
    totals.count(&running);
    running.stop().await;
    drop(server);
}
