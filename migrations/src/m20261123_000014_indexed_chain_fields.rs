//! Fields the programs gained with the on-chain hardening, indexed so the store equals the
//! chain: a market's own oracle set and whether its crucible share was forwarded, a coverage's
//! seam forwarding, an epoch's `claimable_at`, binary_vault's pending config change, and the
//! admin each program's two-step rotation waits on.

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
        add_columns(m, columns()).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        drop_columns(m, columns()).await
    }
}
