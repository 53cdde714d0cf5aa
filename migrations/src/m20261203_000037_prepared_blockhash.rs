//! A prepared transaction's row names the blockhash its message carries (`blockhash`, base58).
//! A confirm whose body does not name its prepared transaction (the generic withdrawal's and
//! p0's: spec 4.5 gives them only the backing) finds it among the wallet's prepares made with
//! the blockhash the landed transaction carries: a handful, made in the seconds that blockhash
//! was the service's, however many other prepares anyone asked for the wallet since. Before,
//! it looked among the wallet's 50 newest, and 50 prepares named after the wallet by anyone
//! pushed the signed one out. Indexed with the wallet by migration 38. Rows written before are
//! NULL (they keep the old lookup until retention removes them).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::{add_columns, drop_columns};

#[derive(DeriveMigrationName)]
pub struct Migration;

fn columns() -> Vec<(&'static str, ColumnDef)> {
    vec![("prepared_transactions", string_null("blockhash"))]
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
