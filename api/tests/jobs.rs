//! The durable job queue on the test database (SQLite, or Postgres with DATABASE_URL): leases
//! are exclusive, failures back off and end dead, a job leased by a worker that died is run by
//! the next one once the lease expires, and a payload runs typed through its kind's handler.
//! Time is a manual clock: backoffs and leases run out because the test moves the clock.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use narrative_api::clock::{Clock, ManualClock, SharedClock};
use narrative_api::jobs::queue::{
    backoff_secs, complete, fail, lease_next, postpone, renew, MAX_ATTEMPTS,
};
use narrative_api::jobs::{
    self, Handler, JobKind, JobOutcome, Leased, PerpetualJob, Registry, Worker,
};
use narrative_store::entities::jobs as job_rows;
use narrative_store::testing::TestDb;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde::{Deserialize, Serialize};
use tokio::sync::Notify;

/// A job kind of the tests.
#[derive(Debug, Serialize, Deserialize)]
struct Probe {
    i: u32,
}

impl JobKind for Probe {
    const NAME: &'static str = "probe";
}

#[derive(Default)]
struct Counting {
    runs: AtomicUsize,
    /// The payloads seen, in order.
    seen: std::sync::Mutex<Vec<u32>>,
    fail: bool,
}

#[async_trait::async_trait]
impl Handler<Probe> for Arc<Counting> {
    async fn run(&self, job: Leased<Probe>) -> anyhow::Result<JobOutcome> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        self.seen.lock().unwrap().push(job.job.i);
        anyhow::ensure!(!self.fail, "job {} refused", job.id);
        Ok(JobOutcome::Done)
    }
}

fn handler(fail: bool) -> Arc<Counting> {
    Arc::new(Counting {
        fail,
        ..Counting::default()
    })
}

fn worker(db: &TestDb, handler: &Arc<Counting>, clock: &Arc<ManualClock>) -> Worker {
    let clock: SharedClock = clock.clone();
    Worker::new(
        db.store.clone(),
        Arc::new(Registry::new().with(handler.clone())),
        clock,
        Arc::new(Notify::new()),
    )
}

async fn row(db: &TestDb, id: i64) -> job_rows::Model {
    job_rows::Entity::find_by_id(id)
        .one(db.store.db())
        .await
        .unwrap()
        .unwrap()
}

const NOW: i64 = 1_790_000_000;

#[tokio::test]
async fn concurrent_workers_lease_each_job_once() {
    let db = TestDb::new().await;
    for i in 0..40 {
        jobs::enqueue(db.store.db(), &Probe { i }, NOW, NOW)
            .await
            .unwrap();
    }
    let lease = |store: narrative_store::Store| async move {
        let mut taken = Vec::new();
        while let Some(job) = lease_next(store.db(), 60, NOW).await.unwrap() {
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
    assert!(lease_next(db.store.db(), 60, NOW).await.unwrap().is_none());
}

#[tokio::test]
async fn a_done_job_is_not_run_again_and_a_failing_one_backs_off_then_dies() {
    let db = TestDb::new().await;
    let clock = ManualClock::at(NOW);
    let ok = jobs::enqueue(db.store.db(), &Probe { i: 7 }, NOW, NOW)
        .await
        .unwrap();
    let good = handler(false);
    let runner = worker(&db, &good, &clock);
    assert_eq!(runner.run_due().await.unwrap(), 1);
    assert_eq!(runner.run_due().await.unwrap(), 0);
    assert_eq!(good.runs.load(Ordering::SeqCst), 1);
    assert_eq!(*good.seen.lock().unwrap(), vec![7], "the typed payload");
    let done = row(&db, ok).await;
    assert_eq!((done.status.as_str(), done.attempts), ("done", 1));

    let failing = jobs::enqueue(db.store.db(), &Probe { i: 8 }, NOW, NOW)
        .await
        .unwrap();
    let bad = handler(true);
    let runner = worker(&db, &bad, &clock);
    assert_eq!(runner.run_due().await.unwrap(), 1);
    let retried = row(&db, failing).await;
    assert_eq!(retried.status, "queued");
    assert_eq!(retried.attempts, 1);
    assert_eq!(retried.run_at, NOW + 2, "the first backoff is 2 s");
    assert_eq!(
        retried.last_error.as_deref(),
        Some(format!("job {failing} refused").as_str())
    );
    assert_eq!(
        runner.run_due().await.unwrap(),
        0,
        "not due during its backoff"
    );
    clock.advance(2);
    assert_eq!(runner.run_due().await.unwrap(), 1, "due once it has passed");
    assert_eq!(row(&db, failing).await.run_at, NOW + 2 + 4, "then 4 s");

    // The last allowed attempt fails: the job is dead and stays so.
    clock.advance(4);
    let mut last = lease_next(db.store.db(), 60, clock.now())
        .await
        .unwrap()
        .expect("due again");
    last.attempts = MAX_ATTEMPTS;
    assert!(fail(db.store.db(), &last, "still refused", clock.now())
        .await
        .unwrap());
    let dead = row(&db, failing).await;
    assert_eq!(dead.status, "dead");
    clock.advance(3_600);
    assert!(lease_next(db.store.db(), 60, clock.now())
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn a_job_whose_worker_died_runs_once_its_lease_expires() {
    let db = TestDb::new().await;
    let clock = ManualClock::at(NOW);
    let id = jobs::enqueue(db.store.db(), &Probe { i: 1 }, NOW, NOW)
        .await
        .unwrap();
    // A worker leases it for 1 s and dies without finishing.
    let leased = lease_next(db.store.db(), 1, NOW).await.unwrap().unwrap();
    assert_eq!((leased.id, leased.status.as_str()), (id, "running"));
    assert!(
        lease_next(db.store.db(), 1, NOW).await.unwrap().is_none(),
        "leased"
    );

    // After a restart, the next worker takes it over once the lease has run out.
    let survivor = handler(false);
    let runner = worker(&db, &survivor, &clock);
    clock.advance(1);
    assert_eq!(runner.run_due().await.unwrap(), 0, "the lease still holds");
    clock.advance(1);
    assert_eq!(runner.run_due().await.unwrap(), 1);
    let finished = row(&db, id).await;
    assert_eq!((finished.status.as_str(), finished.attempts), ("done", 2));
    assert_eq!(survivor.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_kind_without_a_handler_or_a_payload_that_does_not_parse_fails_the_job() {
    let db = TestDb::new().await;
    let clock = ManualClock::at(NOW);
    let orphan = jobs::queue::insert(
        db.store.db(),
        "nobody",
        None,
        serde_json::json!({}),
        NOW,
        NOW,
    )
    .await
    .unwrap();
    let garbled = jobs::queue::insert(
        db.store.db(),
        "probe",
        None,
        serde_json::json!({"i": "x"}),
        NOW,
        NOW,
    )
    .await
    .unwrap();
    let counting = handler(false);
    assert_eq!(worker(&db, &counting, &clock).run_due().await.unwrap(), 2);
    assert_eq!(counting.runs.load(Ordering::SeqCst), 0);
    assert_eq!(
        row(&db, orphan).await.last_error.as_deref(),
        Some("no handler for job kind nobody")
    );
    let garbled = row(&db, garbled).await;
    assert_eq!(garbled.status, "queued");
    assert!(
        garbled
            .last_error
            .as_deref()
            .is_some_and(|e| e.starts_with("probe payload does not parse")),
        "{:?}",
        garbled.last_error
    );
}

/// A perpetual job kind of the tests, whose handler always fails (a node that is down).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Beacon {}

impl JobKind for Beacon {
    const NAME: &'static str = "beacon";
}

impl PerpetualJob for Beacon {
    const SINGLETON: &'static str = "beacon";
}

#[derive(Default)]
struct Refusing {
    runs: AtomicUsize,
}

#[async_trait::async_trait]
impl Handler<Beacon> for Arc<Refusing> {
    async fn run(&self, _: Leased<Beacon>) -> anyhow::Result<JobOutcome> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        anyhow::bail!("the node is down")
    }
}

#[tokio::test]
async fn a_perpetual_job_outlives_any_number_of_failures() {
    let db = TestDb::new().await;
    let clock = ManualClock::at(NOW);
    jobs::ensure_perpetual::<Beacon>(db.store.db(), NOW, NOW)
        .await
        .unwrap();
    let refusing = Arc::new(Refusing::default());
    let shared: SharedClock = clock.clone();
    let runner = Worker::new(
        db.store.clone(),
        Arc::new(Registry::new().with(refusing.clone())),
        shared,
        Arc::new(Notify::new()),
    );
    // Twice the failures that end an ordinary job: each is retried once its backoff (at most
    // ten minutes) has passed, its error on the row.
    for attempt in 1..=2 * MAX_ATTEMPTS {
        assert_eq!(runner.run_due().await.unwrap(), 1, "attempt {attempt}");
        let beacon = job_rows::Entity::find()
            .one(db.store.db())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (beacon.status.as_str(), beacon.attempts),
            ("queued", attempt)
        );
        assert_eq!(beacon.run_at, clock.now() + backoff_secs(attempt));
        assert_eq!(beacon.last_error.as_deref(), Some("the node is down"));
        assert_eq!(runner.run_due().await.unwrap(), 0, "not during its backoff");
        clock.advance(backoff_secs(attempt));
    }
    assert_eq!(
        refusing.runs.load(Ordering::SeqCst),
        2 * MAX_ATTEMPTS as usize
    );
}

/// A job kind of the tests whose handler panics.
#[derive(Debug, Serialize, Deserialize)]
struct Fragile {}

impl JobKind for Fragile {
    const NAME: &'static str = "fragile";
}

struct Panicking;

#[async_trait::async_trait]
impl Handler<Fragile> for Panicking {
    async fn run(&self, _: Leased<Fragile>) -> anyhow::Result<JobOutcome> {
        panic!("an index out of bounds")
    }
}

#[tokio::test]
async fn a_handler_that_panics_fails_its_attempt_and_the_worker_goes_on() {
    let db = TestDb::new().await;
    let clock = ManualClock::at(NOW);
    let fragile = jobs::enqueue(db.store.db(), &Fragile {}, NOW, NOW)
        .await
        .unwrap();
    let after = jobs::enqueue(db.store.db(), &Probe { i: 3 }, NOW, NOW + 1)
        .await
        .unwrap();
    let good = handler(false);
    let shared: SharedClock = clock.clone();
    let runner = Worker::new(
        db.store.clone(),
        Arc::new(Registry::new().with(Panicking).with(good.clone())),
        shared,
        Arc::new(Notify::new()),
    );
    assert_eq!(runner.run_due().await.unwrap(), 1);
    let failed = row(&db, fragile).await;
    assert_eq!((failed.status.as_str(), failed.attempts), ("queued", 1));
    assert_eq!(
        failed.last_error.as_deref(),
        Some("the handler panicked: an index out of bounds")
    );
    assert_eq!(failed.run_at, NOW + 2, "retried after the first backoff");
    // The same worker runs the next job.
    clock.advance(1);
    assert_eq!(runner.run_due().await.unwrap(), 1);
    assert_eq!(row(&db, after).await.status, "done");
    assert_eq!(*good.seen.lock().unwrap(), vec![3]);
}

/// A worker whose lease ran out (its run outlasted the lease, or its process stalled) while
/// another took the job over writes nothing about the job: not its outcome, not a renewal.
/// Fenced by the lease's count, not by attempts, which restart when a job is postponed: here
/// the third lease carries the attempt number the first had.
#[tokio::test]
async fn a_worker_whose_lease_ran_out_cannot_overwrite_the_next_workers_run() {
    let db = TestDb::new().await;
    let conn = db.store.db();
    let id = jobs::enqueue(conn, &Probe { i: 1 }, NOW, NOW)
        .await
        .unwrap();
    let first = lease_next(conn, 60, NOW).await.unwrap().unwrap();
    assert_eq!((first.attempts, first.leases), (1, 1));

    // The first lease runs out; a second worker takes the job and postpones it; a third takes
    // it again, at attempt 1 as the first had.
    let second = lease_next(conn, 60, NOW + 61).await.unwrap().unwrap();
    assert_eq!((second.id, second.leases), (id, 2));
    assert!(postpone(conn, &second, NOW + 62, NOW + 61).await.unwrap());
    let third = lease_next(conn, 60, NOW + 62).await.unwrap().unwrap();
    assert_eq!((third.attempts, third.leases), (1, 3));

    // The first worker comes back: every write of its lease is refused.
    assert!(!renew(conn, &first, 60, NOW + 63).await.unwrap());
    assert!(!complete(conn, &first, NOW + 63).await.unwrap());
    assert!(!fail(conn, &first, "stale", NOW + 63).await.unwrap());
    assert!(!postpone(conn, &first, NOW + 500, NOW + 63).await.unwrap());
    let running = row(&db, id).await;
    assert_eq!(
        (
            running.status.as_str(),
            running.leases,
            running.locked_until
        ),
        ("running", 3, Some(NOW + 62 + 60)),
        "the third worker's lease, untouched"
    );
    assert_eq!(running.last_error, None);

    // The third worker's own writes apply.
    assert!(renew(conn, &third, 60, NOW + 70).await.unwrap());
    assert_eq!(row(&db, id).await.locked_until, Some(NOW + 130));
    assert!(complete(conn, &third, NOW + 71).await.unwrap());
    assert_eq!(row(&db, id).await.status, "done");
}

/// A job kind whose handler runs until the test lets it finish.
#[derive(Debug, Serialize, Deserialize)]
struct Long;

impl JobKind for Long {
    const NAME: &'static str = "long";
}

/// Tells the test when a run started, finishes when the test says so, and tells when its run
/// ended (finished, or dropped when the worker stopped it).
#[derive(Default)]
struct Holding {
    started: Notify,
    release: Notify,
    runs: AtomicUsize,
    ended: AtomicUsize,
}

struct EndOfRun(Arc<Holding>);

impl Drop for EndOfRun {
    fn drop(&mut self) {
        self.0.ended.fetch_add(1, Ordering::SeqCst);
    }
}

#[async_trait::async_trait]
impl Handler<Long> for Arc<Holding> {
    async fn run(&self, _: Leased<Long>) -> anyhow::Result<JobOutcome> {
        let _end = EndOfRun(self.clone());
        self.runs.fetch_add(1, Ordering::SeqCst);
        self.started.notify_one();
        self.release.notified().await;
        Ok(JobOutcome::Done)
    }
}

/// Polls `check` until it holds, for at most 10 s.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within 10 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// A `Long` job queued at `NOW` and a worker running it (renewing every 10 ms), once its
/// handler has started: the job's id, the handler's state and the worker's task (which answers
/// how many jobs it ran).
async fn long_run_started(
    db: &TestDb,
    clock: &Arc<ManualClock>,
) -> (i64, Arc<Holding>, tokio::task::JoinHandle<usize>) {
    let id = jobs::enqueue(db.store.db(), &Long, NOW, NOW).await.unwrap();
    let holding = Arc::new(Holding::default());
    let shared: SharedClock = clock.clone();
    let runner = Worker::new(
        db.store.clone(),
        Arc::new(Registry::new().with(holding.clone())),
        shared,
        Arc::new(Notify::new()),
    )
    .renewing_every(std::time::Duration::from_millis(10));
    let running = tokio::spawn(async move { runner.run_due().await.unwrap() });
    holding.started.notified().await;
    (id, holding, running)
}

/// A run longer than a lease keeps its job: the worker renews the lease while the handler
/// runs, so no other worker takes the job over, and the one run finishes it.
#[tokio::test]
async fn a_run_longer_than_its_lease_keeps_the_job() {
    let db = TestDb::new().await;
    let clock = ManualClock::at(NOW);
    let (id, holding, running) = long_run_started(&db, &clock).await;

    // Two and a half leases go by while the handler runs; each is renewed before it ends.
    for step in 1..=5 {
        clock.advance(30);
        let now = clock.now();
        eventually("the lease renewed as of the moved clock", || async {
            row(&db, id).await.locked_until == Some(now + 60)
        })
        .await;
        assert!(
            lease_next(db.store.db(), 60, now).await.unwrap().is_none(),
            "step {step}: the job is still held"
        );
    }
    holding.release.notify_one();
    assert_eq!(running.await.unwrap(), 1);
    let done = row(&db, id).await;
    assert_eq!(
        (done.status.as_str(), done.attempts, done.leases),
        ("done", 1, 1)
    );
    assert_eq!(holding.runs.load(Ordering::SeqCst), 1);
}

/// A worker that finds its lease taken over (it could not renew in time, and another worker
/// leased the job) stops its handler and writes nothing: the job is the other worker's.
#[tokio::test]
async fn a_worker_that_finds_its_lease_taken_stops_its_run() {
    let db = TestDb::new().await;
    let clock = ManualClock::at(NOW);
    let (id, holding, running) = long_run_started(&db, &clock).await;

    // Another process takes the job over as if the lease had run out (the renewals stalled).
    job_rows::Entity::update_many()
        .col_expr(
            job_rows::Column::Leases,
            sea_orm::sea_query::Expr::value(2i64),
        )
        .col_expr(
            job_rows::Column::LockedUntil,
            sea_orm::sea_query::Expr::value(Some(NOW + 1_000)),
        )
        .filter(job_rows::Column::Id.eq(id))
        .exec(db.store.db())
        .await
        .unwrap();

    assert_eq!(
        tokio::time::timeout(std::time::Duration::from_secs(10), running)
            .await
            .expect("the worker gives the job up")
            .unwrap(),
        1
    );
    eventually("the stopped handler's run ended", || async {
        holding.ended.load(Ordering::SeqCst) == 1
    })
    .await;
    let taken = row(&db, id).await;
    assert_eq!(
        (taken.status.as_str(), taken.leases, taken.locked_until),
        ("running", 2, Some(NOW + 1_000)),
        "the other worker's lease, as it took it"
    );
}
