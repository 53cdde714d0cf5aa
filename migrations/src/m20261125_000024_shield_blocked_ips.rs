//! The shield gate's blocks (spec 5 rule 6, "Shield blocked-IP listing and unblock"): an address
//! that kept failing the gate is refused until an operator lifts the block. One row per address;
//! a lifted block keeps its history (`lifted_at`, `lifted_by`) until the address is blocked again.
//! Its writes bump the `terms` generation (as wallet blocks do), under which the gate keeps the
//! blocks in memory.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::m20261124_000018_read_models::watch;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("shield_blocked_ips")
                .if_not_exists()
                .col(string("ip").primary_key())
                // Refused attempts counted when it was blocked.
                .col(integer("failures"))
                .col(string("reason"))
                .col(big_integer("blocked_at"))
                .col(big_integer_null("lifted_at"))
                .col(string_null("lifted_by"))
                // The gate's log id when the block was lifted: only later refusals count again.
                .col(big_integer_null("lifted_after_probe"))
                .to_owned(),
        )
        .await?;
        watch(m, "shield_blocked_ips", "terms").await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("shield_blocked_ips").to_owned())
            .await
    }
}
