//! One writer per indexer checkpoint. Every indexer (the binary, or an api process running it
//! in-process) asks for the lease of its checkpoint name before it streams; the others wait as
//! standbys and take over when the holder dies.
//!
//! - **Postgres:** a session advisory lock on a connection of its own. The server releases it
//!   the moment that connection ends (a killed process's socket closes), so a standby's next
//!   try succeeds; nothing has to expire.
//! - **SQLite:** a row in `indexer_leases` with an expiry the holder keeps pushing forward.
//!   A process that dies stops renewing and the row can be taken once `ttl` has passed.
//!
//! The lease is not what keeps the data right: batches are idempotent (newer-wins upserts,
//! events unique by position, a checkpoint that only moves forward), so two writers would still
//! store each fact once. It keeps the work (and the gap fill a checkpoint waits on) in one place.

use std::time::Duration;

use sea_orm::sqlx::{self, Connection, PgConnection, Postgres};
use sea_orm::{ConnectionTrait, DbBackend, Statement};

use crate::error::StoreError;
use crate::Store;

/// The lease of one checkpoint name, held until released, lost or dropped.
pub struct Lease {
    name: String,
    held: Held,
}

enum Held {
    Postgres {
        connection: PgConnection,
        key: i64,
    },
    Sqlite {
        store: Store,
        holder: String,
        ttl: Duration,
    },
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.held {
            Held::Postgres { .. } => "postgres advisory lock",
            Held::Sqlite { .. } => "sqlite lease row",
        };
        f.debug_struct("Lease")
            .field("name", &self.name)
            .field("kind", &kind)
            .finish()
    }
}

/// The advisory-lock key of checkpoint `name`: FNV-1a of a namespaced name, so it is the same
/// in every process and does not collide with other users of advisory locks by accident.
pub fn advisory_key(name: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in b"narrative-indexer:".iter().chain(name.as_bytes()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash as i64
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, millis)
}

fn db_error(e: sqlx::Error) -> StoreError {
    StoreError::Db(sea_orm::DbErr::Custom(format!("lease: {e}")))
}

impl Store {
    /// Tries once to take the lease of checkpoint `name`. `ttl` is how long a SQLite lease
    /// survives its holder without a renewal (Postgres needs none). `None`: someone else holds it.
    pub async fn try_lease(&self, name: &str, ttl: Duration) -> Result<Option<Lease>, StoreError> {
        self.try_lease_at(name, ttl, now_millis()).await
    }

    /// [`Store::try_lease`] at `now` (milliseconds since the Unix epoch), which decides whether
    /// a SQLite row has expired; tests move it instead of waiting. Postgres ignores it.
    pub async fn try_lease_at(
        &self,
        name: &str,
        ttl: Duration,
        now: i64,
    ) -> Result<Option<Lease>, StoreError> {
        match self.backend() {
            DbBackend::Postgres => self.try_advisory_lock(name).await,
            _ => self.try_lease_row(name, ttl, now).await,
        }
    }

    async fn try_advisory_lock(&self, name: &str) -> Result<Option<Lease>, StoreError> {
        // A connection outside the pool: the lock lives as long as this session, and a pooled
        // connection could be recycled (and the lock with it) behind our back.
        let mut connection = self
            .db()
            .get_postgres_connection_pool()
            .acquire()
            .await
            .map_err(db_error)?
            .detach();
        let key = advisory_key(name);
        let (taken,): (bool,) =
            sqlx::query_as::<Postgres, (bool,)>("SELECT pg_try_advisory_lock($1)")
                .bind(key)
                .fetch_one(&mut connection)
                .await
                .map_err(db_error)?;
        if !taken {
            let _ = connection.close().await;
            return Ok(None);
        }
        Ok(Some(Lease {
            name: name.to_owned(),
            held: Held::Postgres { connection, key },
        }))
    }

    async fn try_lease_row(
        &self,
        name: &str,
        ttl: Duration,
        now: i64,
    ) -> Result<Option<Lease>, StoreError> {
        let holder = uuid::Uuid::new_v4().to_string();
        // One statement: insert, or take over a row whose holder let it expire.
        let taken = self
            .db()
            .execute_raw(Statement::from_sql_and_values(
                self.backend(),
                "INSERT INTO indexer_leases (name, holder, expires_at) VALUES (?, ?, ?) \
                 ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, \
                 expires_at = excluded.expires_at WHERE indexer_leases.expires_at < ?",
                [
                    name.into(),
                    holder.clone().into(),
                    now.saturating_add(millis(ttl)).into(),
                    now.into(),
                ],
            ))
            .await?
            .rows_affected()
            == 1;
        Ok(taken.then(|| Lease {
            name: name.to_owned(),
            held: Held::Sqlite {
                store: self.clone(),
                holder,
                ttl,
            },
        }))
    }
}

impl Lease {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Confirms the lease is still ours (and, on SQLite, pushes its expiry forward).
    /// `Ok(false)`: it is lost (the lock's session ended, or the row expired or was taken) and
    /// the holder must stop writing. `Err`: SQLite could not be asked (busy behind a long
    /// batch, say); the lease stands until its expiry, so the holder may try again until then.
    pub async fn renew(&mut self) -> Result<bool, StoreError> {
        self.renew_at(now_millis()).await
    }

    /// [`Lease::renew`] at `now` (see [`Store::try_lease_at`]).
    pub async fn renew_at(&mut self, now: i64) -> Result<bool, StoreError> {
        match &mut self.held {
            Held::Postgres { connection, key } => {
                // The session is the lock: if it no longer answers, the lock went with it.
                Ok(sqlx::query_as::<Postgres, (bool,)>(
                    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' \
                     AND pid = pg_backend_pid() AND granted \
                     AND ((classid::bigint << 32) | objid::bigint) = $1)",
                )
                .bind(*key)
                .fetch_one(connection)
                .await
                .is_ok_and(|(held,)| held))
            }
            Held::Sqlite { store, holder, ttl } => {
                let renewed = store
                    .db()
                    .execute_raw(Statement::from_sql_and_values(
                        store.backend(),
                        "UPDATE indexer_leases SET expires_at = ? \
                         WHERE name = ? AND holder = ? AND expires_at >= ?",
                        [
                            now.saturating_add(millis(*ttl)).into(),
                            self.name.clone().into(),
                            holder.clone().into(),
                            now.into(),
                        ],
                    ))
                    .await?;
                Ok(renewed.rows_affected() == 1)
            }
        }
    }

    /// Gives the lease up at once, so a standby need not wait for it to expire.
    pub async fn release(self) {
        match self.held {
            Held::Postgres {
                mut connection,
                key,
            } => {
                let _ = sqlx::query::<Postgres>("SELECT pg_advisory_unlock($1)")
                    .bind(key)
                    .execute(&mut connection)
                    .await;
                let _ = connection.close().await;
            }
            Held::Sqlite { store, holder, .. } => {
                let _ = store
                    .db()
                    .execute_raw(Statement::from_sql_and_values(
                        store.backend(),
                        "DELETE FROM indexer_leases WHERE name = ? AND holder = ?",
                        [self.name.into(), holder.into()],
                    ))
                    .await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestDb;

    const KEY_OF_DEFAULT: u64 = 0xd3c5_8a32_5f6d_f44c;

    #[test]
    fn advisory_keys_are_stable_and_distinct_per_name() {
        assert_eq!(advisory_key("default"), advisory_key("default"));
        assert_ne!(advisory_key("default"), advisory_key("grpc"));
        // Pinned (FNV-1a 64 of "narrative-indexer:default", computed independently): every
        // process and every version must lock the same key for a name.
        assert_eq!(advisory_key("default"), KEY_OF_DEFAULT as i64);
    }

    #[tokio::test]
    async fn one_holder_at_a_time_and_release_hands_over() {
        let db = TestDb::new().await;
        let ttl = Duration::from_secs(60);
        let mut first = db.store.try_lease("idx", ttl).await.unwrap().expect("free");
        assert!(db.store.try_lease("idx", ttl).await.unwrap().is_none());
        // Another name is another lease.
        let other = db
            .store
            .try_lease("other", ttl)
            .await
            .unwrap()
            .expect("free");
        assert!(first.renew().await.unwrap());
        first.release().await;
        let mut second = db
            .store
            .try_lease("idx", ttl)
            .await
            .unwrap()
            .expect("released");
        assert!(second.renew().await.unwrap());
        other.release().await;
        second.release().await;
    }

    #[tokio::test]
    async fn a_holder_that_dies_is_replaced() {
        let db = TestDb::new().await;
        let ttl = Duration::from_millis(300);
        let t0 = 1_767_225_600_000;
        let mut first = db
            .store
            .try_lease_at("idx", ttl, t0)
            .await
            .unwrap()
            .expect("free");
        // Until it expires (Postgres: while its session lives) nobody else gets it.
        let just_before = t0 + 299;
        assert!(db
            .store
            .try_lease_at("idx", ttl, just_before)
            .await
            .unwrap()
            .is_none());
        let second = if db.is_postgres() {
            // Dropping the connection is what a killed process does to its session; the server
            // frees the lock when it notices, a moment later.
            drop(first);
            let taken = async {
                let mut ticks = tokio::time::interval(Duration::from_millis(20));
                loop {
                    ticks.tick().await;
                    if let Some(lease) = db.store.try_lease("idx", ttl).await.unwrap() {
                        return lease;
                    }
                }
            };
            tokio::time::timeout(Duration::from_secs(10), taken)
                .await
                .expect("the lock is freed with its session")
        } else {
            // SQLite: the row outlives its holder for `ttl`, then is taken over.
            let expired = t0 + 301;
            let second = db.store.try_lease_at("idx", ttl, expired).await.unwrap();
            let second = second.expect("an expired row is taken over");
            assert!(
                !first.renew_at(expired + 1).await.unwrap(),
                "an expired holder learns it lost the lease"
            );
            second
        };
        second.release().await;
    }
}
