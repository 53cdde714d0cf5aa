//! Throwaway databases for tests: a fresh Postgres database per test when `DATABASE_URL` is a
//! Postgres URL (dropped afterwards), otherwise a SQLite file in a temporary directory.

use sea_orm::{ConnectionTrait, Database};

use crate::Store;

pub struct TestDb {
    pub store: Store,
    pub url: String,
    /// Postgres: the server URL and the database to drop afterwards.
    postgres: Option<(String, String)>,
    _dir: Option<tempfile::TempDir>,
}

impl TestDb {
    pub async fn new() -> TestDb {
        match std::env::var("DATABASE_URL") {
            Ok(url) if url.starts_with("postgres") => Self::postgres(&url).await,
            _ => Self::sqlite().await,
        }
    }

    async fn sqlite() -> TestDb {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}/test.db?mode=rwc", dir.path().display());
        let store = Store::connect(&url).await.expect("sqlite store");
        TestDb {
            store,
            url,
            postgres: None,
            _dir: Some(dir),
        }
    }

    async fn postgres(server: &str) -> TestDb {
        let name = format!("nms_test_{}", uuid::Uuid::new_v4().simple());
        let admin = Database::connect(server).await.expect("postgres server");
        admin
            .execute_unprepared(&format!("CREATE DATABASE {name}"))
            .await
            .expect("create test database");
        admin.close().await.ok();
        let url = database_url(server, &name);
        let store = Store::connect(&url).await.expect("postgres store");
        TestDb {
            store,
            url,
            postgres: Some((server.to_owned(), name)),
            _dir: None,
        }
    }

    pub fn is_postgres(&self) -> bool {
        self.postgres.is_some()
    }
}

/// `server` with its database path replaced by `name`.
fn database_url(server: &str, name: &str) -> String {
    let (base, query) = match server.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (server, None),
    };
    let authority_end = base.find("://").map_or(0, |i| i + 3);
    let path_start = base[authority_end..]
        .find('/')
        .map_or(base.len(), |i| authority_end + i);
    let mut url = format!("{}/{}", &base[..path_start], name);
    if let Some(q) = query {
        url.push('?');
        url.push_str(q);
    }
    url
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let Some((server, name)) = self.postgres.take() else {
            return;
        };
        // Drop runs outside async: use a runtime of its own on another thread.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                if let Ok(admin) = Database::connect(server.as_str()).await {
                    let _ = admin
                        .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .await;
                }
            });
        })
        .join();
    }
}

#[cfg(test)]
mod tests {
    use super::database_url;

    #[test]
    fn database_url_swaps_the_database_name() {
        assert_eq!(
            database_url("postgres://postgres@127.0.0.1:5432/test", "x"),
            "postgres://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            database_url("postgres://u:p@h/test?sslmode=disable", "x"),
            "postgres://u:p@h/x?sslmode=disable"
        );
        assert_eq!(
            database_url("postgres://h:5432", "x"),
            "postgres://h:5432/x"
        );
    }
}
