//! Prepare-mints are found by status: the hourly retention pass reads the oldest of those still
//! `prepared` a day on (to ask the ledger whether each landed), and keeps or deletes the
//! unpublished ones by deadline. `narrative_mints` keeps a row for every narrative ever
//! published, so without an index each of those reads went through the whole table. One index,
//! status then creation time: the first read is its exact order, and the others read only the
//! few rows still `prepared` or `landed`. Every prepare-mint pays for one index more.

use sea_orm_migration::prelude::*;

use crate::columns::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

const TABLE: &str = "narrative_mints";
const NAME: &str = "idx_narrative_mints_status_created";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_index(index(
            TABLE,
            NAME,
            &["status", "created_at", "narrative_id"],
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_index(Index::drop().name(NAME).table(TABLE).to_owned())
            .await
    }
}
