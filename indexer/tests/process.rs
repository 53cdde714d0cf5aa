//! The `narrative-indexer` binary as operators run it: killed mid-stream (SIGKILL, so possibly
//! inside a batch) and restarted, it resumes from its checkpoint; run twice on one database, one
//! leads and the other stands by, and takes over when the leader is killed. Nothing is lost and
//! nothing stored twice. On SQLite, or Postgres with DATABASE_URL.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::recording::record_scenario;
use common::{
    assert_events_once_in_order, assert_store_matches, mock_geyser, until_async,
    wait_for_checkpoint, wait_until_complete, LiveChain,
};
use narrative_store::testing::TestDb;

const WITHIN: Duration = Duration::from_secs(60);

fn spawn_indexer(database_url: &str, chain: &Servers, metrics_addr: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_narrative-indexer"))
        .args([
            "--endpoint",
            &chain.geyser.url,
            "--rpc-url",
            &chain.node.url,
            "--batch-size",
            "3",
            "--batch-interval-ms",
            "5",
            "--checkpoint-name",
            "process",
            "--metrics-addr",
            metrics_addr,
            "--lease-retry-ms",
            "100",
            // SQLite: a killed leader's lease lapses after this; Postgres frees it at once.
            "--lease-ttl-ms",
            "1000",
        ])
        .env("DATABASE_URL", database_url)
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("indexer starts")
}

struct Servers {
    geyser: mock_geyser::Server,
    node: common::mock_rpc::RpcServer,
}

/// A chain that has produced nothing yet: the tests produce its first half, kill an indexer
/// there, and produce the rest afterwards, so the kill lands mid-stream by construction.
async fn empty_chain(recording: &common::recording::Recording) -> (LiveChain, Servers) {
    let chain = LiveChain::new(recording, 0, |_| {});
    let (geyser, node) = chain.serve().await;
    (chain, Servers { geyser, node })
}

#[tokio::test]
async fn a_killed_indexer_restarts_without_losing_or_repeating_anything() {
    let recording = record_scenario().await;
    let db = TestDb::new().await;
    let (chain, servers) = empty_chain(&recording).await;
    let half = chain.blocks() / 2;
    let mid_slot = chain.geyser.0.blocks[half - 1].slot;

    let mut first = spawn_indexer(&db.url, &servers, "127.0.0.1:0");
    // The bootstrap of the empty chain commits the first checkpoint; then the chain runs.
    wait_for_checkpoint(&db.store, "process", 0, WITHIN).await;
    chain.advance_to(half);
    wait_for_checkpoint(&db.store, "process", mid_slot, WITHIN).await;
    first.kill().expect("SIGKILL");
    first.wait().unwrap();
    // The chain goes on without it.
    chain.advance_to(chain.blocks());
    let killed_at = db.store.checkpoint("process").await.unwrap().unwrap();
    assert!(
        killed_at < recording.last_slot(),
        "killed before the end ({killed_at})"
    );

    let metrics_addr = free_local_address().await;
    let mut second = spawn_indexer(&db.url, &servers, &metrics_addr);
    wait_until_complete(&db.store, "process", &recording, WITHIN).await;
    let metrics = http_get(&metrics_addr, "/metrics").await;
    assert!(
        metrics.contains("indexer_updates_total{kind=\"account\"}"),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!("indexer_committed_slot {}", recording.last_slot())),
        "{metrics}"
    );
    // Graceful stop this time (SIGTERM): it exits on its own between batches.
    terminate(&mut second);

    assert_store_matches(&db.store, &recording).await;
    let resumed = chain.geyser.subscriptions();
    assert_eq!(resumed.len(), 2);
    assert_eq!(resumed[0].from_slot, None, "the first start bootstraps");
    let from = resumed[1]
        .from_slot
        .expect("the restart resumes from its checkpoint");
    assert!(
        from >= killed_at,
        "resumed from {from}, checkpoint at the kill was {killed_at}"
    );
}

#[tokio::test]
async fn a_standby_takes_over_when_the_leader_is_killed() {
    let recording = record_scenario().await;
    let db = TestDb::new().await;
    let (chain, servers) = empty_chain(&recording).await;
    let half = chain.blocks() / 2;
    let mid_slot = chain.geyser.0.blocks[half - 1].slot;

    let (leader_addr, standby_addr) = (free_local_address().await, free_local_address().await);
    let mut leader = spawn_indexer(&db.url, &servers, &leader_addr);
    wait_for_metric(&leader_addr, "indexer_leader 1").await;
    let mut standby = spawn_indexer(&db.url, &servers, &standby_addr);
    wait_for_metric(&standby_addr, "indexer_leader 0").await;

    wait_for_checkpoint(&db.store, "process", 0, WITHIN).await;
    chain.advance_to(half);
    wait_for_checkpoint(&db.store, "process", mid_slot, WITHIN).await;
    // Both are running and only the leader has subscribed.
    assert_eq!(chain.geyser.subscriptions().len(), 1);
    assert!(http_get(&standby_addr, "/metrics")
        .await
        .lines()
        .any(|line| line == "indexer_leader 0"));

    leader.kill().expect("SIGKILL");
    leader.wait().unwrap();
    let killed = Instant::now();
    chain.advance_to(chain.blocks());
    let killed_at = db.store.checkpoint("process").await.unwrap().unwrap();
    assert!(killed_at < recording.last_slot(), "killed mid-stream");
    wait_for_metric(&standby_addr, "indexer_leader 1").await;
    let takeover = killed.elapsed();
    // Postgres frees the lock with the session; SQLite waits out the 1 s lease.
    assert!(
        takeover < Duration::from_secs(5),
        "took over in {takeover:?}"
    );
    eprintln!("standby took over {takeover:?} after the leader's SIGKILL");

    wait_until_complete(&db.store, "process", &recording, WITHIN).await;
    terminate(&mut standby);
    assert_store_matches(&db.store, &recording).await;
    assert_events_once_in_order(&db.store, &recording).await;
    let subscriptions = chain.geyser.subscriptions();
    assert_eq!(subscriptions.len(), 2, "one writer at a time");
    assert!(subscriptions[1]
        .from_slot
        .is_some_and(|from| from >= killed_at));
}

/// SIGTERM, and the process exits cleanly between batches.
fn terminate(child: &mut Child) {
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "graceful shutdown: {status}");
}

/// A local address nothing listens on (bound and released).
async fn free_local_address() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().to_string()
}

/// Waits (bounded) until the metrics at `addr` contain `line`.
async fn wait_for_metric(addr: &str, line: &str) {
    let what = format!("{addr} showing {line:?}");
    until_async(&what, WITHIN, || async {
        try_http_get(addr, "/metrics")
            .await
            .is_some_and(|body| body.lines().any(|l| l == line))
    })
    .await
}

async fn try_http_get(addr: &str, path: &str) -> Option<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    stream
        .write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await
        .ok()?;
    let mut body = String::new();
    stream.read_to_string(&mut body).await.ok()?;
    Some(body)
}

/// A plain HTTP/1.0 GET, enough for the metrics endpoint; waits (bounded) for the listener.
async fn http_get(addr: &str, path: &str) -> String {
    until_async(&format!("a listener on {addr}"), WITHIN, || async {
        try_http_get(addr, path).await.is_some()
    })
    .await;
    try_http_get(addr, path)
        .await
        .expect("it answered a moment ago")
}
