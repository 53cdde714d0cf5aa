//! An API key says whether its caller registered it (`self_registered`: an agent's key, from
//! `POST /v1/agent/register`) or an operator issued it. Anyone may register five agents an hour
//! from one address, each with a Free key of its own rate, so self-registered keys used from one
//! address now share a per-address budget as well; an operator's keys keep only their tier's.
//! Every key an agent holds was issued by its registration, so those are marked here.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::{add_columns, drop_columns};

#[derive(DeriveMigrationName)]
pub struct Migration;

fn columns() -> Vec<(&'static str, ColumnDef)> {
    vec![(
        "api_keys",
        boolean("self_registered").default(false).to_owned(),
    )]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        add_columns(m, columns()).await?;
        m.get_connection()
            .execute_unprepared(
                "UPDATE api_keys SET self_registered = TRUE \
                 WHERE id IN (SELECT api_key_id FROM agents)",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        drop_columns(m, columns()).await
    }
}
