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

#[derive(DeriveMigrationName)]
pub struct Migration;

const COLUMNS: [&str; 4] = [
    "wallet_proven",
    "oracle_granted_at",
    "oracle_granted_by",
    "oracle_revoked_at",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        // One column a statement: SQLite alters one thing at a time.
        let columns = [
            boolean("wallet_proven").default(false).to_owned(),
            big_integer_null("oracle_granted_at"),
            string_null("oracle_granted_by"),
            big_integer_null("oracle_revoked_at"),
        ];
        for mut column in columns {
            m.alter_table(
                Table::alter()
                    .table("agents")
                    .add_column(&mut column)
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for column in COLUMNS.iter().rev() {
            m.alter_table(
                Table::alter()
                    .table("agents")
                    .drop_column(Alias::new(*column))
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }
}
