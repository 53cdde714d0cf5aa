//! Opening the store, on SQLite by default and on Postgres when DATABASE_URL points at it.

use narrative_store::testing::TestDb;
use sea_orm::{ConnectionTrait, DbBackend, Statement};

/// The backend process a statement ran on (Postgres only).
async fn backend_pid(db: &sea_orm::DatabaseConnection) -> i32 {
    db.query_one_raw(Statement::from_string(
        DbBackend::Postgres,
        "SELECT pg_backend_pid() AS pid",
    ))
    .await
    .unwrap()
    .unwrap()
    .try_get("", "pid")
    .unwrap()
}

/// A dedicated store reaches the same database (what it writes the shared store reads) and,
/// on Postgres, runs every statement on one connection of its own, even when several are
/// asked of it at once; the shared pool keeps its own connections.
#[tokio::test]
async fn a_dedicated_store_writes_the_same_database_on_one_connection() {
    let db = TestDb::new().await;
    let dedicated = db.store.dedicated();
    let backend = dedicated.backend();
    assert_eq!(backend, db.store.backend());
    dedicated
        .db()
        .execute_raw(Statement::from_string(
            backend,
            "INSERT INTO cache_generations (topic, generation) VALUES ('dedicated_probe', 41)",
        ))
        .await
        .unwrap();
    let read = db
        .store
        .db()
        .query_one_raw(Statement::from_string(
            backend,
            "SELECT generation FROM cache_generations WHERE topic = 'dedicated_probe'",
        ))
        .await
        .unwrap()
        .expect("the shared store reads the row");
    assert_eq!(read.try_get::<i64>("", "generation").unwrap(), 41);

    if !db.is_postgres() {
        return;
    }
    let first = backend_pid(dedicated.db()).await;
    let mut asked = tokio::task::JoinSet::new();
    for _ in 0..6 {
        let db = dedicated.db().clone();
        asked.spawn(async move { backend_pid(&db).await });
    }
    let at_once = asked.join_all().await;
    assert!(
        at_once.iter().all(|pid| *pid == first),
        "{first} then {at_once:?}"
    );
    let shared = backend_pid(db.store.db()).await;
    assert_ne!(
        shared, first,
        "the shared pool lent the dedicated connection"
    );
    assert_eq!(
        dedicated
            .db()
            .get_postgres_connection_pool()
            .options()
            .get_max_connections(),
        1
    );
}
