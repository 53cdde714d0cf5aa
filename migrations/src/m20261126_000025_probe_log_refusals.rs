//! The shield gate counts an address's refused terms acknowledgements. It counted every outcome
//! but success and `ip_blocked`, so the service's own failures (503 while shield is halted, a
//! 500) blocked honest callers, and a whole NAT behind them. `refused` marks the attempts the
//! gate holds against the caller (answered 4xx); rows logged before it count as not refused.
//! The count also read every row of the never-shrinking log: `(ip, id)` is the index it
//! filters and ranges on.

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
                .table("shield_probe_log")
                .add_column(boolean("refused").default(false))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "shield_probe_log",
            "idx_shield_probe_log_ip",
            &["ip", "id"],
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_index(
            Index::drop()
                .name("idx_shield_probe_log_ip")
                .table("shield_probe_log")
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table("shield_probe_log")
                .drop_column("refused")
                .to_owned(),
        )
        .await
    }
}
