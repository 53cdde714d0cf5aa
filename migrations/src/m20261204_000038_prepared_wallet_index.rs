//! Prepared transactions are found by wallet and blockhash: every confirm asks which of the
//! wallet's unconfirmed prepares of its kind the landed transaction is (those prepared with the
//! blockhash it carries: `Chain::signed_as`), and the withdrawal and p0 confirms, whose bodies
//! may name only the backing, look there first. Until now nothing indexed the wallet, so each
//! such lookup read the whole table, which keeps every confirmed row. One index, wallet then
//! blockhash: the lookup every confirm makes reads the few rows of one blockhash's seconds,
//! and the withdrawal's fallback to the wallet's newest reads the wallet's rows only. Every
//! prepare pays for one index more.

use sea_orm_migration::prelude::*;

use crate::columns::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

const TABLE: &str = "prepared_transactions";
const NAME: &str = "idx_prepared_transactions_wallet_blockhash";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_index(index(TABLE, NAME, &["wallet", "blockhash"]))
            .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_index(Index::drop().name(NAME).table(TABLE).to_owned())
            .await
    }
}
