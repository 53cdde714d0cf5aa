//! The durable job queue on the test database (SQLite, or Postgres with DATABASE_URL): leases
//! are exclusive, failures back off and end dead, and a job leased by a worker that died is run
//! by the next one once the lease expires.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use narrative_api::jobs::{self, JobHandler, JobOutcome, Worker, MAX_ATTEMPTS};
use narrative_store::entities::jobs as job_rows;
use narrative_store::testing::TestDb;
use sea_orm::EntityTrait;
use serde_json::json;
use tokio::sync::Notify;

struct Counting {
    runs: AtomicUsize,
    fail: bool,
}

#[async_trait::async_trait]
impl JobHandler for Counting {
    async fn run(&self, job: &job_rows::Model) -> anyhow::Result<JobOutcome> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        anyhow::ensure!(!self.fail, "job {} refused", job.id);
        Ok(JobOutcome::Done)
    }
}

fn handler(fail: bool) -> Arc<Counting> {
    Arc::new(Counting {
        runs: AtomicUsize::new(0),
        fail,
    })
}

async fn row(db: &TestDb, id: i64) -> job_rows::Model {
    job_rows::Entity::find_by_id(id)
        .one(db.store.db())
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn concurrent_workers_lease_each_job_once() {
    let db = TestDb::new().await;
    let now = chrono::Utc::now().timestamp();
    for i in 0..40 {
        jobs::enqueue(db.store.db(), "k", json!({"i": i}), now)
            .await
            .unwrap();
    }
    let lease = |store: narrative_store::Store| async move {
        let mut taken = Vec::new();
        while let Some(job) = jobs::lease_next(store.db(), 60).await.unwrap() {
            taken.push(job.id);
        }
        taken
    };
    let (a, b) = tokio::join!(
        tokio::spawn(lease(db.store.clone())),
        tokio::spawn(lease(db.store.clone()))
    );
    let all: Vec<i64> = a.unwrap().into_iter().chain(b.unwrap()).collect();
    let distinct: HashSet<i64> = all.iter().copied().collect();
    assert_eq!(all.len(), 40, "every job leased");
    assert_eq!(distinct.len(), 40, "none twice");
    assert!(jobs::lease_next(db.store.db(), 60).await.unwrap().is_none());
}

#[tokio::test]
async fn a_done_job_is_not_run_again_and_a_failing_one_backs_off_then_dies() {
    let db = TestDb::new().await;
    let now = chrono::Utc::now().timestamp();
    let ok = jobs::enqueue(db.store.db(), "ok", json!({}), now)
        .await
        .unwrap();
    let good = handler(false);
    let worker = Worker::new(db.store.clone(), good.clone(), Arc::new(Notify::new()));
    assert_eq!(worker.run_due().await.unwrap(), 1);
    assert_eq!(worker.run_due().await.unwrap(), 0);
    assert_eq!(good.runs.load(Ordering::SeqCst), 1);
    let done = row(&db, ok).await;
    assert_eq!((done.status.as_str(), done.attempts), ("done", 1));

    let failing = jobs::enqueue(db.store.db(), "bad", json!({}), now)
        .await
        .unwrap();
    let bad = handler(true);
    let worker = Worker::new(db.store.clone(), bad.clone(), Arc::new(Notify::new()));
    assert_eq!(worker.run_due().await.unwrap(), 1);
    let retried = row(&db, failing).await;
    assert_eq!(retried.status, "queued");
    assert_eq!(retried.attempts, 1);
    assert!(
        retried.run_at >= now + 2,
        "backs off: run_at {} now {now}",
        retried.run_at
    );
    assert_eq!(
        retried.last_error.as_deref(),
        Some(format!("job {failing} refused").as_str())
    );
    assert_eq!(
        worker.run_due().await.unwrap(),
        0,
        "not due during its backoff"
    );

    // The last allowed attempt fails: the job is dead and stays so.
    let mut last = retried.clone();
    last.attempts = MAX_ATTEMPTS;
    jobs::fail(db.store.db(), &last, "still refused")
        .await
        .unwrap();
    let dead = row(&db, failing).await;
    assert_eq!(dead.status, "dead");
    assert!(jobs::lease_next(db.store.db(), 60).await.unwrap().is_none());
}

#[tokio::test]
async fn a_job_whose_worker_died_runs_once_its_lease_expires() {
    let db = TestDb::new().await;
    let now = chrono::Utc::now().timestamp();
    let id = jobs::enqueue(db.store.db(), "k", json!({}), now)
        .await
        .unwrap();
    // A worker leases it for 1 s and dies without finishing.
    let leased = jobs::lease_next(db.store.db(), 1).await.unwrap().unwrap();
    assert_eq!((leased.id, leased.status.as_str()), (id, "running"));
    assert!(
        jobs::lease_next(db.store.db(), 1).await.unwrap().is_none(),
        "leased"
    );

    // After a restart, the next worker takes it over once the lease has run out.
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    let survivor = handler(false);
    let worker = Worker::new(db.store.clone(), survivor.clone(), Arc::new(Notify::new()));
    assert_eq!(worker.run_due().await.unwrap(), 1);
    let finished = row(&db, id).await;
    assert_eq!((finished.status.as_str(), finished.attempts), ("done", 2));
    assert_eq!(survivor.runs.load(Ordering::SeqCst), 1);
}
