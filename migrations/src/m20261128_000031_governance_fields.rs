//! Fields the programs gained with issue 27, indexed so the store equals the chain and the
//! operators can see what is pending: a market's dispute bond (fixed at creation), a coverage's
//! own oracle set and its UNRESOLVABLE votes, and crucible_pool's guardian and pending settings
//! change.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// (table, column) pairs, added one statement each (SQLite alters one column at a time).
fn columns() -> Vec<(&'static str, ColumnDef)> {
    vec![
        (
            "markets",
            big_integer("dispute_bond_lamports").default(0).to_owned(),
        ),
        (
            "shield_coverages",
            integer("unresolvable_votes").default(0).to_owned(),
        ),
        (
            "shield_coverages",
            integer("oracle_threshold").default(0).to_owned(),
        ),
        ("shield_coverages", json_binary_null("oracles")),
        ("crucible_states", string_null("guardian")),
        ("crucible_states", json_binary_null("pending_change")),
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
