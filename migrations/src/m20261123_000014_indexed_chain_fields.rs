//! Fields the programs gained with the on-chain hardening, indexed so the store equals the
//! chain: a market's own oracle set and whether its crucible share was forwarded, a coverage's
//! seam forwarding, an epoch's `claimable_at`, binary_vault's pending config change, and the
//! admin each program's two-step rotation waits on.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// (table, column) pairs, added one statement each (SQLite alters one column at a time).
fn columns() -> Vec<(&'static str, ColumnDef)> {
    vec![
        (
            "markets",
            boolean("crucible_forwarded").default(false).to_owned(),
        ),
        ("markets", integer("oracle_threshold").default(0).to_owned()),
        ("markets", json_binary_null("oracles")),
        (
            "crucible_epochs",
            big_integer("claimable_at").default(0).to_owned(),
        ),
        (
            "shield_coverages",
            boolean("seam_forwarded").default(false).to_owned(),
        ),
        ("binary_configs", json_binary_null("pending_change")),
        ("binary_program_states", string_null("pending_admin")),
        ("crucible_states", string_null("pending_admin")),
        ("shield_programs", string_null("pending_admin")),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for (table, mut column) in columns() {
            m.alter_table(
                Table::alter()
                    .table(table)
                    .add_column(&mut column)
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for (table, column) in columns().into_iter().rev() {
            m.alter_table(
                Table::alter()
                    .table(table)
                    .drop_column(column.get_column_name())
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }
}
