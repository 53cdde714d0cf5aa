//! binary_vault no longer has one SPL backing minimum for every mint: each SPL market's minimum
//! comes from its mint's decimals (and is indexed with the market), so the config column goes.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("binary_configs")
                .drop_column("min_backing_spl")
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("binary_configs")
                .add_column(big_integer("min_backing_spl").default(0))
                .to_owned(),
        )
        .await
    }
}
