//! Two things issue 26 ("limits that hold") needs of the schema:
//!
//! - The retention job (`api/src/jobs/retention.rs`) deletes the rows anonymous calls grow by
//!   age: each table gets the index its delete ranges on, so a run reads only what it removes.
//!   Finished jobs are found by status, then age.
//! - The leaderboards (points, missions, agents) are served from the response cache, so what
//!   they rank besides markets gets a generation of its own, `engagement`, bumped by the same
//!   triggers as the other topics on point awards, mission completions, agents and Echo Pool
//!   allocations.

use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

use crate::columns::index;
use crate::m20261124_000018_read_models::watch;

#[derive(DeriveMigrationName)]
pub struct Migration;

const INDEXES: [(&str, &str, &[&str]); 4] = [
    (
        "prepared_transactions",
        "idx_prepared_transactions_status_created",
        &["status", "created_at"],
    ),
    (
        "shield_probe_log",
        "idx_shield_probe_log_created",
        &["created_at"],
    ),
    (
        "shield_partner_applications",
        "idx_shield_partner_applications_created",
        &["created_at"],
    ),
    ("jobs", "idx_jobs_status_updated", &["status", "updated_at"]),
];

/// The topic, as `narrative_store::freshness::Topic::Engagement` names it.
const TOPIC: &str = "engagement";
const WATCHED: [&str; 4] = [
    "point_awards",
    "mission_completions",
    "agents",
    "echo_allocations",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for (table, name, columns) in INDEXES {
            m.create_index(index(table, name, columns)).await?;
        }
        m.exec_stmt(
            Query::insert()
                .into_table("cache_generations")
                .columns(["topic", "generation"])
                .values_panic([TOPIC.into(), 0i64.into()])
                .on_conflict(OnConflict::new().do_nothing().to_owned())
                .to_owned(),
        )
        .await?;
        for table in WATCHED {
            watch(m, table, TOPIC).await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let postgres = m.get_database_backend() == DbBackend::Postgres;
        for table in WATCHED {
            for tag in ["ins", "upd", "del"] {
                let on = if postgres {
                    format!(" ON {table}")
                } else {
                    String::new()
                };
                m.get_connection()
                    .execute_unprepared(&format!(
                        "DROP TRIGGER IF EXISTS nms_gen_{table}_{tag}{on}"
                    ))
                    .await?;
            }
        }
        m.exec_stmt(
            Query::delete()
                .from_table("cache_generations")
                .and_where(Expr::col("topic").eq(TOPIC))
                .to_owned(),
        )
        .await?;
        for (table, name, _) in INDEXES {
            m.drop_index(Index::drop().name(name).table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
