//! The operators' log (spec 5.6): every action taken through the admin surface (a narrative
//! hidden, restored or given a verdict, a Classic market approved or rejected, a job retried or
//! cancelled, scores recalculated), who took it and what it changed. Append-only; restoring a
//! hidden narrative reads the status its hiding recorded.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("admin_actions")
                .if_not_exists()
                .col(big_pk_auto("id"))
                // `narrative.hide`, `market.approve`, `job.retry`, …
                .col(string("action"))
                // What it acted on: a narrative's id, a market creation's id, a job's id.
                .col(string("subject"))
                .col(json_binary("detail"))
                // The operator's wallet.
                .col(string("actor"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "admin_actions",
            "idx_admin_actions_subject",
            &["subject", "action"],
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("admin_actions").to_owned())
            .await
    }
}
