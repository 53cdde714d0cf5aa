//! What reads need without recomputing it per request: a generation per topic of data, bumped by
//! triggers in the transaction of every write to the topic's tables, whoever writes (the indexer,
//! the api, an operator's SQL), so the api's response cache can check before serving what it
//! holds; and each market's count of distinct live backing wallets, kept by triggers on
//! `backings` in the same way.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The topics, as `narrative_store::freshness::Topic` names them.
const TOPICS: [&str; 5] = ["markets", "shield", "echo", "system", "terms"];

/// The tables whose writes change each topic.
const WATCHED: [(&str, &str); 16] = [
    ("markets", "markets"),
    ("backings", "markets"),
    ("narratives", "markets"),
    ("narrative_groups", "markets"),
    ("narrative_group_members", "markets"),
    ("shield_coverages", "shield"),
    ("shield_positions", "shield"),
    ("crucible_states", "echo"),
    ("crucible_asset_pools", "echo"),
    ("crucible_epochs", "echo"),
    ("crucible_claims", "echo"),
    ("echo_distributions", "echo"),
    ("ruffler_rounds", "echo"),
    ("system_components", "system"),
    ("terms_acceptances", "terms"),
    ("shield_terms_acknowledgements", "terms"),
];

/// Postgres: one statement-level trigger per table and event, bumping the topic only when the
/// statement changed rows (its transition table is not empty), so an update matching nothing
/// (a closure of an address the table does not hold) invalidates nothing. It also notifies
/// `nms_generations` (`narrative_store::freshness::CHANNEL`) with the topic: Postgres delivers
/// it at commit, once per transaction and topic, to every api process listening.
const PG_FUNCTION: &str = "CREATE OR REPLACE FUNCTION nms_bump_generation() RETURNS trigger \
    LANGUAGE plpgsql AS $$ BEGIN \
    IF EXISTS (SELECT 1 FROM changed) THEN \
    UPDATE cache_generations SET generation = generation + 1 WHERE topic = TG_ARGV[0]; \
    PERFORM pg_notify('nms_generations', TG_ARGV[0]); \
    END IF; RETURN NULL; END $$";

/// Installs the generation triggers on `table` for `topic`, as this migration does for the
/// tables it watches (later migrations add their own tables this way). Dropping the table drops
/// them.
pub(crate) async fn watch(m: &SchemaManager<'_>, table: &str, topic: &str) -> Result<(), DbErr> {
    let statements = if m.get_database_backend() == sea_orm_migration::sea_orm::DbBackend::Postgres
    {
        pg_triggers(table, topic)
    } else {
        sqlite_triggers(table, topic)
    };
    for statement in statements {
        m.get_connection().execute_unprepared(&statement).await?;
    }
    Ok(())
}

fn pg_triggers(table: &str, topic: &str) -> Vec<String> {
    [
        ("ins", "INSERT", "NEW"),
        ("upd", "UPDATE", "NEW"),
        ("del", "DELETE", "OLD"),
    ]
    .into_iter()
    .map(|(tag, event, side)| {
        format!(
            "CREATE TRIGGER nms_gen_{table}_{tag} AFTER {event} ON {table} \
                 REFERENCING {side} TABLE AS changed FOR EACH STATEMENT \
                 EXECUTE FUNCTION nms_bump_generation('{topic}')"
        )
    })
    .collect()
}

/// Postgres: the backer counts of the markets a statement on `backings` touched, recounted
/// once per statement from its transition table.
const PG_RECOUNT: &str = "CREATE OR REPLACE FUNCTION nms_recount_backers() RETURNS trigger \
    LANGUAGE plpgsql AS $$ BEGIN \
    DELETE FROM market_backer_counts WHERE market_id IN (SELECT market_id FROM changed); \
    INSERT INTO market_backer_counts (market_id, backers) \
    SELECT market_id, COUNT(DISTINCT backer) FROM backings \
    WHERE market_id IN (SELECT market_id FROM changed) AND NOT closed GROUP BY market_id; \
    RETURN NULL; END $$";

fn pg_backer_triggers() -> Vec<String> {
    [
        ("ins", "INSERT", "NEW"),
        ("upd", "UPDATE", "NEW"),
        ("del", "DELETE", "OLD"),
    ]
    .into_iter()
    .map(|(tag, event, side)| {
        format!(
            "CREATE TRIGGER nms_backers_{tag} AFTER {event} ON backings \
                 REFERENCING {side} TABLE AS changed FOR EACH STATEMENT \
                 EXECUTE FUNCTION nms_recount_backers()"
        )
    })
    .collect()
}

/// SQLite: row-level and incremental, so a market with many backers is not recounted per row.
/// A wallet counts from its first live backing of the market to its last.
const SQLITE_BACKER_TRIGGERS: [&str; 4] = [
    // A live backing of a wallet without another live one in the market: one more.
    "CREATE TRIGGER IF NOT EXISTS nms_backers_ins AFTER INSERT ON backings WHEN NEW.closed = 0 \
     BEGIN INSERT INTO market_backer_counts (market_id, backers) SELECT NEW.market_id, 1 \
     WHERE NOT EXISTS (SELECT 1 FROM backings WHERE market_id = NEW.market_id \
     AND backer = NEW.backer AND address <> NEW.address AND closed = 0) \
     ON CONFLICT (market_id) DO UPDATE SET backers = backers + 1; END",
    // Closed: one fewer, unless the wallet holds another live backing there.
    "CREATE TRIGGER IF NOT EXISTS nms_backers_close AFTER UPDATE OF closed ON backings \
     WHEN OLD.closed = 0 AND NEW.closed = 1 \
     BEGIN UPDATE market_backer_counts SET backers = backers - 1 \
     WHERE market_id = NEW.market_id AND NOT EXISTS (SELECT 1 FROM backings \
     WHERE market_id = NEW.market_id AND backer = NEW.backer AND address <> NEW.address \
     AND closed = 0); END",
    // Reopened: one more, unless it already counted.
    "CREATE TRIGGER IF NOT EXISTS nms_backers_reopen AFTER UPDATE OF closed ON backings \
     WHEN OLD.closed = 1 AND NEW.closed = 0 \
     BEGIN INSERT INTO market_backer_counts (market_id, backers) SELECT NEW.market_id, 1 \
     WHERE NOT EXISTS (SELECT 1 FROM backings WHERE market_id = NEW.market_id \
     AND backer = NEW.backer AND address <> NEW.address AND closed = 0) \
     ON CONFLICT (market_id) DO UPDATE SET backers = backers + 1; END",
    "CREATE TRIGGER IF NOT EXISTS nms_backers_del AFTER DELETE ON backings WHEN OLD.closed = 0 \
     BEGIN UPDATE market_backer_counts SET backers = backers - 1 \
     WHERE market_id = OLD.market_id AND NOT EXISTS (SELECT 1 FROM backings \
     WHERE market_id = OLD.market_id AND backer = OLD.backer AND closed = 0); END",
];

/// SQLite has row-level triggers only: each changed row bumps its topic.
fn sqlite_triggers(table: &str, topic: &str) -> Vec<String> {
    [("ins", "INSERT"), ("upd", "UPDATE"), ("del", "DELETE")]
        .into_iter()
        .map(|(tag, event)| {
            format!(
                "CREATE TRIGGER IF NOT EXISTS nms_gen_{table}_{tag} AFTER {event} ON {table} \
                 BEGIN UPDATE cache_generations SET generation = generation + 1 \
                 WHERE topic = '{topic}'; END"
            )
        })
        .collect()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("cache_generations")
                .if_not_exists()
                .col(string("topic").primary_key())
                .col(big_integer("generation").default(0))
                .to_owned(),
        )
        .await?;
        let mut seed = Query::insert();
        seed.into_table("cache_generations")
            .columns(["topic", "generation"]);
        for topic in TOPICS {
            seed.values_panic([topic.into(), 0i64.into()]);
        }
        m.exec_stmt(
            seed.on_conflict(OnConflict::new().do_nothing().to_owned())
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("market_backer_counts")
                .if_not_exists()
                .col(string("market_id").primary_key())
                .col(big_integer("backers"))
                .to_owned(),
        )
        .await?;
        // The counts of the backings already indexed.
        let backfill = Query::insert()
            .into_table("market_backer_counts")
            .columns(["market_id", "backers"])
            .select_from(
                Query::select()
                    .column("market_id")
                    .expr(Expr::col("backer").count_distinct())
                    .from("backings")
                    .and_where(Expr::col("closed").eq(false))
                    .group_by_col("market_id")
                    .to_owned(),
            )
            .map_err(|e| DbErr::Migration(e.to_string()))?
            .to_owned();
        m.exec_stmt(backfill).await?;
        let db = m.get_connection();
        let postgres = m.get_database_backend() == sea_orm_migration::sea_orm::DbBackend::Postgres;
        if postgres {
            db.execute_unprepared(PG_FUNCTION).await?;
            db.execute_unprepared(PG_RECOUNT).await?;
            for statement in pg_backer_triggers() {
                db.execute_unprepared(&statement).await?;
            }
        } else {
            for statement in SQLITE_BACKER_TRIGGERS {
                db.execute_unprepared(statement).await?;
            }
        }
        for (table, topic) in WATCHED {
            watch(m, table, topic).await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let db = m.get_connection();
        let postgres = m.get_database_backend() == sea_orm_migration::sea_orm::DbBackend::Postgres;
        for tag in ["ins", "upd", "del", "close", "reopen"] {
            let drop = if postgres {
                format!("DROP TRIGGER IF EXISTS nms_backers_{tag} ON backings")
            } else {
                format!("DROP TRIGGER IF EXISTS nms_backers_{tag}")
            };
            db.execute_unprepared(&drop).await?;
        }
        for (table, _) in WATCHED {
            for tag in ["ins", "upd", "del"] {
                let drop = if m.get_database_backend()
                    == sea_orm_migration::sea_orm::DbBackend::Postgres
                {
                    format!("DROP TRIGGER IF EXISTS nms_gen_{table}_{tag} ON {table}")
                } else {
                    format!("DROP TRIGGER IF EXISTS nms_gen_{table}_{tag}")
                };
                db.execute_unprepared(&drop).await?;
            }
        }
        for table in ["market_backer_counts", "cache_generations"] {
            m.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}
