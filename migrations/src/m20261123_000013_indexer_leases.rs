//! Who writes an indexer checkpoint: on SQLite a lease row per checkpoint name, renewed by its
//! holder and taken over once it expires (Postgres uses a session advisory lock instead, which
//! the server releases the moment the holder's connection dies; the table stays empty there).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("indexer_leases")
                .if_not_exists()
                .col(string("name").primary_key())
                .col(string("holder"))
                // Milliseconds since the Unix epoch.
                .col(big_integer("expires_at"))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("indexer_leases").to_owned())
            .await
    }
}
