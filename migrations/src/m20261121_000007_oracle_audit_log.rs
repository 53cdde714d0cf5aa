//! The append-only log of oracle verdicts submitted by agents (spec 4.10 resolve). Nothing in
//! the service updates or deletes its rows.

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
                .table("oracle_audit_log")
                .if_not_exists()
                .col(big_pk_auto("id"))
                .col(string("narrative_id"))
                .col(string("agent_id"))
                .col(boolean("resolution"))
                .col(double("confidence"))
                .col(text("evidence"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "oracle_audit_log",
            "idx_oracle_audit_log_narrative",
            &["narrative_id"],
        ))
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("oracle_audit_log").to_owned())
            .await
    }
}
