//! The `narrative-indexer` binary killed mid-stream (SIGKILL, so possibly inside a batch) and
//! restarted: it resumes from its checkpoint, loses nothing and stores nothing twice.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::mock_geyser::{self, MockGeyser};
use common::recording::record_scenario;
use common::{assert_store_matches, wait_for_checkpoint, wait_until_complete};
use narrative_store::testing::TestDb;

fn spawn_indexer(database_url: &str, endpoint: &str, metrics_addr: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_narrative-indexer"))
        .args([
            "--endpoint",
            endpoint,
            "--batch-size",
            "3",
            "--batch-interval-ms",
            "5",
            "--checkpoint-name",
            "process",
            "--metrics-addr",
            metrics_addr,
        ])
        .env("DATABASE_URL", database_url)
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("indexer starts")
}

#[tokio::test]
async fn a_killed_indexer_restarts_without_losing_or_repeating_anything() {
    let recording = record_scenario().await;
    let db = TestDb::new().await;
    let updates = mock_geyser::updates(&recording);
    let mid_slot = updates[updates.len() / 2].0;
    let mock = MockGeyser::new(updates, Duration::from_millis(10));
    let server = mock_geyser::start(mock.clone(), None).await;

    let mut first = spawn_indexer(&db.url, &server.url, "127.0.0.1:0");
    wait_for_checkpoint(&db.store, "process", mid_slot, Duration::from_secs(60)).await;
    first.kill().expect("SIGKILL");
    first.wait().unwrap();
    let killed_at = db.store.checkpoint("process").await.unwrap().unwrap();
    assert!(
        killed_at < recording.last_slot(),
        "killed before the end ({killed_at})"
    );

    let metrics_addr = free_local_address().await;
    let mut second = spawn_indexer(&db.url, &server.url, &metrics_addr);
    wait_until_complete(&db.store, "process", &recording, Duration::from_secs(60)).await;
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
    Command::new("kill")
        .args(["-TERM", &second.id().to_string()])
        .status()
        .unwrap();
    let status = second.wait().unwrap();
    assert!(status.success(), "graceful shutdown: {status}");

    assert_store_matches(&db.store, &recording).await;
    let resumed = mock.subscriptions();
    assert_eq!(resumed.len(), 2);
    assert_eq!(resumed[0].from_slot, None);
    let from = resumed[1]
        .from_slot
        .expect("the restart resumes from its checkpoint");
    assert!(
        from >= killed_at,
        "resumed from {from}, checkpoint at the kill was {killed_at}"
    );
}

/// A local address nothing listens on (bound and released).
async fn free_local_address() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().to_string()
}

/// A plain HTTP/1.0 GET, enough for the metrics endpoint.
async fn http_get(addr: &str, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    for _ in 0..100 {
        if let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await {
            stream
                .write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut body = String::new();
            stream.read_to_string(&mut body).await.unwrap();
            return body;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("nothing listens on {addr}");
}
