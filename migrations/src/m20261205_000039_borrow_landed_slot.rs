//! A borrow position keeps the slot its borrow landed in (`landed_slot`). A position whose loan
//! shows no debt is closed as repaid or liquidated at the venue, and a node behind the borrow
//! (one of several behind a load balancer) shows no loan at all: its read is now believed only
//! from that slot on. Rows written before are NULL and keep the old rule.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::{add_columns, drop_columns};

#[derive(DeriveMigrationName)]
pub struct Migration;

fn columns() -> Vec<(&'static str, ColumnDef)> {
    vec![("borrow_positions", big_integer_null("landed_slot"))]
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
