//! Group commit of prepared transactions. A prepare's only write is one row; at a few thousand
//! prepares a second, a statement and a commit per row cost the database more CPU than all the
//! rest of the request (the benchmark measured 284 µs of Postgres CPU per prepare). Every
//! prepare made outside a caller's own database transaction hands its row to one writer task,
//! which stores what has queued meanwhile in one statement per component: one round trip and
//! one commit for the lot. Idle, a row is written at once (a batch of one); under load, the
//! rows that arrive while a statement runs go together in the next.
//!
//! Each statement still checks its component's halt flag itself
//! ([`insert_unless_halted`]): rows of a halted component are all refused, and a halt committed
//! before the statement cannot slip between check and write. It also reads every topic's
//! generation at its own moment (Postgres: in the same statement; SQLite: in the same
//! transaction), which is after each of its prepares arrived: a prepare whose reads were made
//! under those generations knows they held when its row was written, without a probe of its own
//! ([`crate::chain::Chain::prepare_checked`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use narrative_store::freshness::{generations, Generations};
use narrative_store::Store;
use sea_orm::{ConnectionTrait, DbBackend, DbErr, Statement, Value};
use tokio::sync::{mpsc, oneshot};

use crate::error::ApiError;
use crate::values::Component;

/// The most rows written by one statement (seven parameters each: far below every database's
/// limit on parameters).
pub const MAX_BATCH: usize = 128;

/// Whether a row was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    Written,
    /// Its component is halted: nothing was written.
    Halted,
}

/// What a write answers: whether the row was stored, and the generations at its moment.
type Written = Result<(Stored, Generations), String>;

/// A prepared transaction's row as a prepare stores it: status `prepared`, not yet signed
/// (`signature`, `error` and `confirmed_at` stay NULL).
#[derive(Debug, Clone, PartialEq)]
pub struct NewPrepared {
    pub id: String,
    pub kind: &'static str,
    pub wallet: String,
    /// The serialized message the wallet is asked to sign.
    pub message: Vec<u8>,
    /// The blockhash the message carries (base58): how a confirm that does not name its
    /// prepared transaction finds it among the wallet's.
    pub blockhash: String,
    pub params: serde_json::Value,
    pub created_at: i64,
}

struct Pending {
    row: NewPrepared,
    component: Component,
    reply: oneshot::Sender<Written>,
}

/// The handle prepares write through; the writer task ends once every handle is gone.
#[derive(Clone)]
pub struct PreparedWriter {
    queue: mpsc::Sender<Pending>,
    counts: Arc<Counts>,
}

/// What `/metrics` shows of the writer. Under load a prepare spends most of its time waiting
/// for its statement (decisions.md, "The deposit prepare's speed"), so the statements' time and
/// the prepares' wait are shown beside the counts: their means are what an operator compares
/// when prepares slow down.
#[derive(Default)]
struct Counts {
    statements: AtomicU64,
    rows: AtomicU64,
    /// Nanoseconds from a statement's start to its answer, summed over `statements`.
    statement_nanos: AtomicU64,
    /// Prepares answered, and the nanoseconds each waited from handing its row over to the
    /// answer (the statement in flight before its own, then its own).
    waits: AtomicU64,
    wait_nanos: AtomicU64,
}

impl Counts {
    fn add(nanos: &AtomicU64, elapsed: Duration) {
        let elapsed = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        nanos.fetch_add(elapsed, Ordering::Relaxed);
    }
}

impl PreparedWriter {
    /// Starts the writer task on the current runtime.
    pub fn start(store: Store) -> PreparedWriter {
        // Bounded: under overload a prepare waits for room instead of growing memory.
        let (queue, rows) = mpsc::channel(MAX_BATCH * 8);
        let counts = Arc::new(Counts::default());
        tokio::spawn(write_batches(store, rows, counts.clone()));
        PreparedWriter { queue, counts }
    }

    /// Statements run so far.
    pub fn statements(&self) -> u64 {
        self.counts.statements.load(Ordering::Relaxed)
    }

    /// Its lines of the Prometheus text format.
    pub fn render(&self) -> String {
        let seconds = |nanos: &AtomicU64| nanos.load(Ordering::Relaxed) as f64 / 1e9;
        format!(
            "# HELP prepared_writer_statements_total Statements that stored prepared transactions.\n\
             # TYPE prepared_writer_statements_total counter\n\
             prepared_writer_statements_total {}\n\
             # HELP prepared_writer_rows_total Prepared transactions handed to those statements.\n\
             # TYPE prepared_writer_rows_total counter\n\
             prepared_writer_rows_total {}\n\
             # HELP prepared_writer_statement_seconds Time from a statement's start to its answer.\n\
             # TYPE prepared_writer_statement_seconds summary\n\
             prepared_writer_statement_seconds_sum {}\n\
             prepared_writer_statement_seconds_count {}\n\
             # HELP prepared_writer_wait_seconds Time a prepare waited for its row's statement.\n\
             # TYPE prepared_writer_wait_seconds summary\n\
             prepared_writer_wait_seconds_sum {}\n\
             prepared_writer_wait_seconds_count {}\n",
            self.statements(),
            self.counts.rows.load(Ordering::Relaxed),
            seconds(&self.counts.statement_nanos),
            self.statements(),
            seconds(&self.counts.wait_nanos),
            self.counts.waits.load(Ordering::Relaxed),
        )
    }

    /// Stores `row` unless `component` is halted, in a statement shared with the rows queued
    /// beside it; with every topic's generation as that statement read them.
    pub async fn write(
        &self,
        row: NewPrepared,
        component: Component,
    ) -> Result<(Stored, Generations), ApiError> {
        let (reply, answer) = oneshot::channel();
        let handed_over = Instant::now();
        self.queue
            .send(Pending {
                row,
                component,
                reply,
            })
            .await
            .map_err(|_| ApiError::internal("the prepared-transaction writer stopped"))?;
        let answered = answer
            .await
            .map_err(|_| ApiError::internal("the prepared-transaction writer stopped"))?;
        self.counts.waits.fetch_add(1, Ordering::Relaxed);
        Counts::add(&self.counts.wait_nanos, handed_over.elapsed());
        answered.map_err(ApiError::internal)
    }
}

/// Writes what has queued, one batch at a time. One statement in flight on every database:
/// the rows that arrive while it runs go together in the next, so a slower commit makes a bigger
/// batch and the writer clocks itself. A second statement in flight split the queue into two
/// commits of half the rows, and on Postgres each commit's cost is mostly per statement (see
/// decisions.md, "Group commit of prepared rows"); SQLite writes one transaction at a time
/// anyway.
async fn write_batches(store: Store, mut rows: mpsc::Receiver<Pending>, counts: Arc<Counts>) {
    loop {
        let mut batch = Vec::with_capacity(MAX_BATCH);
        if rows.recv_many(&mut batch, MAX_BATCH).await == 0 {
            return;
        }
        // Awaited, but as a task of its own: a panic in one batch fails that batch's prepares
        // (their replies are dropped) instead of ending the writer for every later one.
        let (store, counts) = (store.clone(), counts.clone());
        let _ = tokio::spawn(async move { write_batch(&store, batch, &counts).await }).await;
    }
}

/// Writes one batch, a statement per component in the order the components first appear, and
/// answers each prepare.
async fn write_batch(store: &Store, mut batch: Vec<Pending>, counts: &Counts) {
    while let Some(first) = batch.first() {
        let component = first.component;
        let (same, rest): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut batch)
            .into_iter()
            .partition(|p| p.component == component);
        batch = rest;
        let (models, replies): (Vec<_>, Vec<_>) =
            same.into_iter().map(|p| (p.row, p.reply)).unzip();
        let count = models.len() as u64;
        let started = Instant::now();
        let written = write_reading_generations(store, models, component).await;
        Counts::add(&counts.statement_nanos, started.elapsed());
        counts.statements.fetch_add(1, Ordering::Relaxed);
        counts.rows.fetch_add(count, Ordering::Relaxed);
        let outcome = match written {
            Ok((written, at)) if written == count => Ok((Stored::Written, at)),
            Ok((0, at)) => Ok((Stored::Halted, at)),
            // One statement sees one halt flag: all or nothing.
            Ok((written, _)) => Err(format!("{written} of {count} prepared rows written")),
            Err(error) => {
                tracing::warn!(%error, rows = count, "storing prepared transactions failed");
                Err(error.to_string())
            }
        };
        for reply in replies {
            // A prepare whose client went away no longer waits for its answer.
            let _ = reply.send(outcome.clone());
        }
    }
}

/// Runs [`insert_unless_halted`] and reads the generations at the same moment: the rows
/// written and the generations.
async fn write_reading_generations(
    store: &Store,
    rows: Vec<NewPrepared>,
    component: Component,
) -> Result<(u64, Generations), DbErr> {
    let db = store.db();
    let backend = db.get_database_backend();
    let (insert, values) = render_insert(backend, rows, component);
    match backend {
        DbBackend::Postgres => {
            // One statement: its data-modifying CTE and its SELECT share one snapshot.
            let sql = format!(
                "WITH written AS ({insert} RETURNING 1) \
                 SELECT topic, generation, (SELECT count(*) FROM written) AS written \
                 FROM cache_generations"
            );
            let rows = db
                .query_all_raw(Statement::from_sql_and_values(backend, sql, values))
                .await?;
            let mut written = None;
            let mut topics = Vec::with_capacity(rows.len());
            for row in rows {
                written = Some(row.try_get::<i64>("", "written")?);
                topics.push((row.try_get("", "topic")?, row.try_get("", "generation")?));
            }
            // The migration seeds a row per topic, so the count always comes back.
            let written = written.ok_or_else(|| DbErr::Custom("no generations".into()))?;
            Ok((written as u64, Generations::from_rows(topics)))
        }
        _ => {
            // SQLite writes one transaction at a time: the read sees the moment of the write.
            let txn = store.begin_write().await?;
            let written = txn
                .execute_raw(Statement::from_sql_and_values(backend, insert, values))
                .await?
                .rows_affected();
            let at = generations(&txn).await?;
            txn.commit().await?;
            Ok((written, at))
        }
    }
}

/// `INSERT` of `rows` (at least one) that writes nothing while `component` is halted: the halt
/// check and the write are one statement, so a halt committed before it cannot slip between
/// them.
pub fn insert_unless_halted(
    backend: DbBackend,
    rows: Vec<NewPrepared>,
    component: Component,
) -> Statement {
    let (sql, values) = render_insert(backend, rows, component);
    Statement::from_sql_and_values(backend, sql, values)
}

/// The values a row binds, in the order of [`INSERT_COLUMNS`].
const VALUES_PER_ROW: usize = 7;

/// The columns a prepare sets; `status` is the literal `prepared`.
const INSERT_COLUMNS: &str = "id, kind, wallet, message, blockhash, params, created_at, status";

/// [`insert_unless_halted`]'s text and values. Rendered directly rather than through a query
/// builder: under load the writer renders a statement of many rows over a thousand times a
/// second, and building, rendering and dropping a builder's tree of one value per cell took
/// about 4 % of the server's time in a profile of the deposit prepare.
fn render_insert(
    backend: DbBackend,
    rows: Vec<NewPrepared>,
    component: Component,
) -> (String, Vec<Value>) {
    use std::fmt::Write;
    let mut sql = String::with_capacity(240 + rows.len() * 8 * VALUES_PER_ROW);
    let mut values = Vec::with_capacity(rows.len() * VALUES_PER_ROW + 1);
    let mut bind = |sql: &mut String, value: Value| {
        values.push(value);
        match backend {
            DbBackend::Postgres => write!(sql, "${}", values.len()).expect("writing to a String"),
            _ => sql.push('?'),
        }
    };
    write!(
        sql,
        "INSERT INTO prepared_transactions ({INSERT_COLUMNS}) SELECT "
    )
    .expect("writing to a String");
    // A VALUES list's columns are `column1`, `column2`… on both databases.
    for i in 1..=VALUES_PER_ROW {
        write!(sql, "column{i}, ").expect("writing to a String");
    }
    sql.push_str("'prepared' FROM (VALUES ");
    for (i, row) in rows.into_iter().enumerate() {
        sql.push_str(if i == 0 { "(" } else { ", (" });
        let row_values: [Value; VALUES_PER_ROW] = [
            row.id.into(),
            row.kind.into(),
            row.wallet.into(),
            row.message.into(),
            row.blockhash.into(),
            row.params.into(),
            row.created_at.into(),
        ];
        for (j, value) in row_values.into_iter().enumerate() {
            if j > 0 {
                sql.push_str(", ");
            }
            bind(&mut sql, value);
        }
        sql.push(')');
    }
    sql.push_str(") AS prepared WHERE NOT EXISTS (SELECT 1 FROM system_components WHERE name = ");
    bind(&mut sql, component.as_str().into());
    sql.push_str(" AND halted = ");
    bind(&mut sql, true.into());
    sql.push(')');
    (sql, values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use narrative_store::entities::{prepared_transactions, system_components};
    use narrative_store::freshness::Topic;
    use sea_orm::{ActiveValue::Set, EntityTrait, QueryOrder};

    fn prepared_row(id: &str) -> NewPrepared {
        NewPrepared {
            id: id.to_owned(),
            kind: "shield_back",
            wallet: "wallet".into(),
            message: vec![1, 2, 3],
            blockhash: "11111111111111111111111111111111".into(),
            params: serde_json::json!({"side": "safe"}),
            created_at: 1_700_000_000,
        }
    }

    async fn halt(conn: &sea_orm::DatabaseConnection, component: &str) {
        system_components::Entity::insert(system_components::ActiveModel {
            name: Set(component.into()),
            halted: Set(true),
            reason: Set(Some("incident".into())),
            updated_at: Set(1),
        })
        .exec_without_returning(conn)
        .await
        .unwrap();
    }

    /// The write that checks the halt flag itself: nothing is stored for a halted component,
    /// every row, whole, for a running one (on both databases).
    #[tokio::test]
    async fn rows_are_written_only_while_their_component_runs() {
        let db = narrative_store::testing::TestDb::new().await;
        let conn = db.store.db();
        halt(conn, "shield").await;
        let backend = conn.get_database_backend();
        let refused = conn
            .execute_raw(insert_unless_halted(
                backend,
                vec![prepared_row("a"), prepared_row("b")],
                Component::Shield,
            ))
            .await
            .unwrap();
        assert_eq!(refused.rows_affected(), 0);
        let stored = conn
            .execute_raw(insert_unless_halted(
                backend,
                vec![prepared_row("c"), prepared_row("d")],
                Component::Binary,
            ))
            .await
            .unwrap();
        assert_eq!(stored.rows_affected(), 2);
        let rows = prepared_transactions::Entity::find()
            .order_by_asc(prepared_transactions::Column::Id)
            .all(conn)
            .await
            .unwrap();
        let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["c", "d"]);
        let row = &rows[0];
        assert_eq!(
            (row.message.as_slice(), row.created_at, row.kind.as_str()),
            (&[1u8, 2, 3][..], 1_700_000_000, "shield_back")
        );
        assert_eq!(row.params, serde_json::json!({"side": "safe"}));
        assert_eq!(
            (row.status.as_str(), row.wallet.as_str()),
            ("prepared", "wallet")
        );
        assert_eq!(
            (row.signature.clone(), row.error.clone(), row.confirmed_at),
            (None, None, None)
        );
    }

    /// A write reads the generations of its own moment: a halt's bump is in the answer of the
    /// next write.
    #[tokio::test]
    async fn a_write_reads_the_generations_of_its_moment() {
        let db = narrative_store::testing::TestDb::new().await;
        let writer = PreparedWriter::start(db.store.clone());
        let (stored, before) = writer
            .write(prepared_row("a"), Component::Shield)
            .await
            .unwrap();
        assert_eq!(stored, Stored::Written);
        assert_eq!(before, generations(db.store.db()).await.unwrap());
        halt(db.store.db(), "shield").await;
        let (stored, after) = writer
            .write(prepared_row("b"), Component::Shield)
            .await
            .unwrap();
        assert_eq!(stored, Stored::Halted);
        assert!(after.of(Topic::System) > before.of(Topic::System));
        assert_eq!(after.of(Topic::Shield), before.of(Topic::Shield));
    }

    /// The value of `name` on the writer's metrics page.
    fn metric(page: &str, name: &str) -> f64 {
        page.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("{name} missing from:\n{page}"))
    }

    /// `/metrics` shows each statement's time and each prepare's wait, and a prepare's wait
    /// holds its statement's time.
    #[tokio::test]
    async fn statements_and_waits_are_timed() {
        let db = narrative_store::testing::TestDb::new().await;
        let writer = PreparedWriter::start(db.store.clone());
        for id in ["a", "b"] {
            writer
                .write(prepared_row(id), Component::Shield)
                .await
                .unwrap();
        }
        let page = writer.render();
        assert_eq!(
            metric(&page, "prepared_writer_statement_seconds_count"),
            2.0
        );
        assert_eq!(metric(&page, "prepared_writer_wait_seconds_count"), 2.0);
        let statements = metric(&page, "prepared_writer_statement_seconds_sum");
        let waits = metric(&page, "prepared_writer_wait_seconds_sum");
        assert!(statements > 0.0, "{page}");
        assert!(waits >= statements, "{page}");
    }

    /// Many prepares at once: each gets its own answer, a halted component's rows are refused
    /// while the others' in the same batches are written, every written row is there once, and
    /// rows queued together share statements.
    #[tokio::test]
    async fn concurrent_prepares_share_statements_and_keep_their_answers() {
        let db = narrative_store::testing::TestDb::new().await;
        halt(db.store.db(), "binary").await;
        let writer = PreparedWriter::start(db.store.clone());
        let tasks: Vec<_> = (0..300)
            .map(|i| {
                let writer = writer.clone();
                let component = if i % 3 == 0 {
                    Component::Binary
                } else {
                    Component::Shield
                };
                tokio::spawn(async move {
                    let id = format!("row-{i:03}");
                    let (stored, _) = writer.write(prepared_row(&id), component).await.unwrap();
                    (id, component, stored)
                })
            })
            .collect();
        let mut expected = Vec::new();
        for task in tasks {
            let (id, component, stored) = task.await.unwrap();
            let want = if component == Component::Binary {
                Stored::Halted
            } else {
                Stored::Written
            };
            assert_eq!(stored, want, "{id}");
            if stored == Stored::Written {
                expected.push(id);
            }
        }
        expected.sort();
        let written: Vec<String> = prepared_transactions::Entity::find()
            .order_by_asc(prepared_transactions::Column::Id)
            .all(db.store.db())
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(written.len(), 200);
        assert_eq!(written, expected);
        // All 300 queue while the first statement runs (one thread): a few batches of up to
        // MAX_BATCH, a statement per component in each, not one per row.
        let statements = writer.statements();
        assert!((2..=10).contains(&statements), "{statements} statements");
    }
}
