//! Migrations that correct data, run against rows written before them (on SQLite by default,
//! on Postgres when DATABASE_URL points at it).

use migration::MigratorTrait;
use narrative_store::entities::api_keys;
use narrative_store::testing::TestDb;
use sea_orm::{ConnectionTrait, EntityTrait};

/// Keys of agents registered without a proof were filed under the wallet they named; after the
/// migration they are filed under no wallet. A proven agent's key and the operator's keys keep
/// theirs.
#[tokio::test]
async fn unproven_agents_keys_are_filed_under_no_wallet() {
    let db = TestDb::new().await;
    let conn = db.store.db();
    let named = "C9QjHcuPyyncqkpSqKdQpFJjUNTgbwmbEN4GeGUoSpjN";
    for (key, agent, proven) in [
        ("key-unproven", Some("ag_unproven"), false),
        ("key-proven", Some("ag_proven"), true),
        ("key-operator", None, false),
    ] {
        conn.execute_unprepared(&format!(
            "INSERT INTO api_keys (id, prefix, key_hash, tier, wallet, name, created_at) \
             VALUES ('{key}', 'nms_0000', '{key}-hash', 'free', '{named}', 'bot', 1)"
        ))
        .await
        .unwrap();
        if let Some(agent) = agent {
            conn.execute_unprepared(&format!(
                "INSERT INTO agents (id, name, description, wallet_address, api_key_id, \
                 created_at, wallet_proven) \
                 VALUES ('{agent}', 'bot', NULL, '{named}', '{key}', 1, {proven})"
            ))
            .await
            .unwrap();
        }
    }
    // The rows are as the earlier code wrote them; the migration (and those after it) runs
    // again over them.
    undo_since(conn, "m20261202_000035_unproven_agent_keys").await;
    migration::Migrator::up(conn, None).await.unwrap();
    let wallet_of = |id: &'static str| async move {
        api_keys::Entity::find_by_id(id.to_owned())
            .one(conn)
            .await
            .unwrap()
            .unwrap()
            .wallet
    };
    assert_eq!(wallet_of("key-unproven").await, None);
    assert_eq!(wallet_of("key-proven").await.as_deref(), Some(named));
    assert_eq!(wallet_of("key-operator").await.as_deref(), Some(named));
}

/// Takes the schema back to before migration `name` (every later one undone too).
async fn undo_since(conn: &sea_orm::DatabaseConnection, name: &str) {
    let migrations = migration::Migrator::migrations();
    let at = migrations
        .iter()
        .position(|m| m.name() == name)
        .expect("the migration is listed");
    let since = u32::try_from(migrations.len() - at).unwrap();
    migration::Migrator::down(conn, Some(since)).await.unwrap();
}

/// Every key an agent holds came from its registration: the migration that records a key's
/// origin marks those self-registered, and the operator's keys not.
#[tokio::test]
async fn agents_keys_are_marked_self_registered() {
    let db = TestDb::new().await;
    let conn = db.store.db();
    // Rows as the code before the column wrote them: an agent's key and an operator's.
    undo_since(conn, "m20261206_000040_self_registered_keys").await;
    for (key, agent) in [("key-agent", Some("ag_bot")), ("key-operator", None)] {
        conn.execute_unprepared(&format!(
            "INSERT INTO api_keys (id, prefix, key_hash, tier, wallet, name, created_at) \
             VALUES ('{key}', 'nms_0000', '{key}-hash', 'free', NULL, 'bot', 1)"
        ))
        .await
        .unwrap();
        if let Some(agent) = agent {
            conn.execute_unprepared(&format!(
                "INSERT INTO agents (id, name, description, wallet_address, api_key_id, \
                 created_at, wallet_proven) \
                 VALUES ('{agent}', 'bot', NULL, 'C9QjHcuPyyncqkpSqKdQpFJjUNTgbwmbEN4GeGUoSpjN', \
                 '{key}', 1, FALSE)"
            ))
            .await
            .unwrap();
        }
    }
    migration::Migrator::up(conn, None).await.unwrap();
    let registered = |id: &'static str| async move {
        api_keys::Entity::find_by_id(id.to_owned())
            .one(conn)
            .await
            .unwrap()
            .unwrap()
            .self_registered
    };
    assert!(registered("key-agent").await);
    assert!(!registered("key-operator").await);
}
