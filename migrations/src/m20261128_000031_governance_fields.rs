//! Fields the programs gained with issue 27, indexed so the store equals the chain and the
//! operators can see what is pending: a market's dispute bond (fixed at creation), a coverage's
//! own oracle set and its UNRESOLVABLE votes, and crucible_pool's guardian and pending settings
//! change.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::{add_columns, drop_columns};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// (table, column) pairs.
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
        add_columns(m, columns()).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        drop_columns(m, columns()).await
    }
}
