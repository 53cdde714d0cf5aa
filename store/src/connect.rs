//! Opening the store: SQLite under `./data/` unless a `postgres://` URL is given; migrations run
//! on every open, so a fresh machine needs nothing else.

use std::time::Duration;

use migration::MigratorTrait;
use sea_orm::sqlx::sqlite::SqliteJournalMode;
use sea_orm::{
    ConnectOptions, Database, DatabaseConnection, DatabaseTransaction, DbBackend, DbErr,
    SqlxPostgresConnector, TransactionOptions, TransactionTrait,
};

use crate::error::StoreError;

/// Where the embedded store lives when no URL is configured.
pub const DEFAULT_SQLITE_URL: &str = "sqlite://data/narrative.db?mode=rwc";

/// A pooled connection idle at least this long is pinged before it is lent.
pub const CHECK_IDLE_CONNECTIONS_AFTER: Duration = Duration::from_secs(10);

#[derive(Clone)]
pub struct Store {
    db: DatabaseConnection,
}

impl Store {
    /// Connects to `url` (`sqlite://…` or `postgres://…`) and brings the schema up to date.
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        let mut options = ConnectOptions::new(url.to_owned());
        options
            .sqlx_logging(false)
            .acquire_timeout(Duration::from_secs(30))
            // The pool pinged every connection it lent: a round trip before every query, which
            // under load was most of a short query's latency. Only a connection idle this
            // long is pinged now; a busy one that the server dropped fails its query once and
            // leaves the pool.
            .test_before_acquire_if_idle_for(CHECK_IDLE_CONNECTIONS_AFTER);
        if url.starts_with("sqlite:") {
            create_parent_directory(url)?;
            // WAL lets the api read while the indexer writes; one writer at a time waits up to
            // the busy timeout instead of failing with "database is locked".
            options.max_connections(4).map_sqlx_sqlite_opts(|o| {
                o.journal_mode(SqliteJournalMode::Wal)
                    .busy_timeout(Duration::from_secs(10))
            });
        } else {
            options.max_connections(16).min_connections(1);
        }
        let db = Database::connect(options).await?;
        migration::Migrator::up(&db, None).await?;
        Ok(Store { db })
    }

    pub fn db(&self) -> &DatabaseConnection {
        &self.db
    }

    /// A store over one connection of its own to the same database, for a task that runs one
    /// statement after another (the api's prepared-transaction writer and freshness probe). The
    /// shared pool lends its idle connections first in, first out, so such a task's statements
    /// went to every backend in turn, each with caches cold from the last; on one connection
    /// they are also never queued behind the reads. The connection opens on first use and is
    /// pinged before it is lent, as the pool's are, only after it has been idle; sqlx also pings
    /// every connection handed back, one `Sync` round trip after each statement (keeping the
    /// connection between statements instead changed nothing measurable: decisions.md, "The
    /// deposit prepare's speed"). SQLite: the same pool (a local file, and one writer at a time
    /// whatever the connection).
    pub fn dedicated(&self) -> Store {
        match self.backend() {
            DbBackend::Postgres => {
                let shared = self.db.get_postgres_connection_pool();
                let own = shared
                    .options()
                    .clone()
                    .max_connections(1)
                    .min_connections(0)
                    .connect_lazy_with((*shared.connect_options()).clone());
                Store {
                    db: SqlxPostgresConnector::from_sqlx_postgres_pool(own),
                }
            }
            _ => self.clone(),
        }
    }

    pub fn backend(&self) -> DbBackend {
        self.db.get_database_backend()
    }

    /// A transaction that writes. On SQLite it takes the write lock when it begins (`BEGIN
    /// IMMEDIATE`): a deferred transaction that reads first and then writes fails at once
    /// (`SQLITE_BUSY_SNAPSHOT`, which no busy timeout waits out) when another connection commits
    /// in between, where this one waits its turn. On Postgres an ordinary transaction.
    pub async fn begin_write(&self) -> Result<DatabaseTransaction, DbErr> {
        self.db
            .begin_with_options(TransactionOptions {
                sqlite_transaction_mode: Some(sea_orm::SqliteTransactionMode::Immediate),
                ..Default::default()
            })
            .await
    }

    /// A round trip to the database (health checks).
    pub async fn ping(&self) -> Result<(), StoreError> {
        Ok(self.db.ping().await?)
    }
}

/// `sqlite://data/x.db?mode=rwc` creates the file but not its directory.
fn create_parent_directory(url: &str) -> Result<(), StoreError> {
    let path = url
        .trim_start_matches("sqlite:")
        .trim_start_matches("//")
        .split('?')
        .next()
        .unwrap_or_default();
    if path.is_empty() || path.starts_with(':') {
        return Ok(());
    }
    if let Some(parent) = std::path::Path::new(path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent).map_err(|source| StoreError::Directory {
            path: parent.display().to_string(),
            source,
        })?;
    }
    Ok(())
}
