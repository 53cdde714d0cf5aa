//! The payouts the programs now leave for a forwarding call instead of paying inside a ruling
//! or a finalisation: whether a coverage's treasury and protocol shares have left its losing
//! vault, and whether a dispute's forfeit bond has left for the treasury. Indexed so the store
//! equals the chain and the shield keeper finds the shares still waiting.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::{add_columns, drop_columns};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// (table, column) pairs.
fn columns() -> Vec<(&'static str, ColumnDef)> {
    vec![
        (
            "shield_coverages",
            boolean("treasury_forwarded").default(false).to_owned(),
        ),
        (
            "shield_coverages",
            boolean("protocol_forwarded").default(false).to_owned(),
        ),
        (
            "disputes",
            boolean("bond_forwarded").default(false).to_owned(),
        ),
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
