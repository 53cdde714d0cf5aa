//! Oracle authority is an operator's grant, not a wallet's claim. An agent's wallet was a label
//! anyone could type; `wallet_proven` records that the wallet signed the registration (a wallet
//! proof), and only a proven wallet can count under the `ORACLE_AGENT_WALLETS` bootstrap. The
//! grant itself is three columns on the agent: the last grant (`oracle_granted_at`, by
//! `oracle_granted_by`, an operator's wallet) and its revocation (`oracle_revoked_at`, which
//! also overrides the bootstrap). The history of grants and revocations is the operators' log
//! (`admin_actions`), written in the same transaction. Existing agents start unproven and
//! ungranted: none of them proved its wallet.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::{add_columns, drop_columns};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The agent's new columns.
fn columns() -> Vec<(&'static str, ColumnDef)> {
    vec![
        ("agents", boolean("wallet_proven").default(false).to_owned()),
        ("agents", big_integer_null("oracle_granted_at")),
        ("agents", string_null("oracle_granted_by")),
        ("agents", big_integer_null("oracle_revoked_at")),
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
