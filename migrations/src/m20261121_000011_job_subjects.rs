//! What a job is about (a narrative's id for its settlement), so its progress can be found
//! without reading every payload.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("jobs")
                .add_column(string_null("subject"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("jobs", "idx_jobs_kind_subject", &["kind", "subject"]))
            .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_index(
            Index::drop()
                .name("idx_jobs_kind_subject")
                .table("jobs")
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table("jobs")
                .drop_column("subject")
                .to_owned(),
        )
        .await
    }
}
