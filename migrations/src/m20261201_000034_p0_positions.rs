//! p0, the unified-margin venue (spec 4.5; marginfi v2).
//!
//! `p0_positions`: a wallet's balance in one p0 bank as the service recorded it, one row per
//! wallet and bank (the venue keeps one balance per bank in the wallet's margin account). A
//! verified deposit opens it or adds to `principal_base`; a verified withdrawal takes from it
//! and a withdrawal of everything closes it (a later deposit reopens the same row). Its id is the
//! `position_id` of the spec's withdraw confirm. The balance itself (principal plus interest) is
//! read from the ledger. Its writes bump the `defi` generation.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::m20261124_000018_read_models::watch;
use sea_orm_migration::sea_orm::DbBackend;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("p0_positions")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("wallet"))
                // The wallet's margin account, the bank, and the bank's token.
                .col(string("account"))
                .col(string("bank"))
                .col(string("token_symbol"))
                .col(string("mint"))
                // Deposited less withdrawn, in the token's base units (interest not included).
                .col(big_integer("principal_base"))
                // `open` or `closed` (withdrawn in full).
                .col(string("status"))
                .col(string_null("narrative_id"))
                // The last verified transaction that moved it.
                .col(string("last_signature"))
                .col(big_integer("created_at"))
                .col(big_integer("updated_at"))
                .col(big_integer_null("closed_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .if_not_exists()
                .name("idx_p0_positions_wallet_bank")
                .table("p0_positions")
                .col("wallet")
                .col("bank")
                .unique()
                .to_owned(),
        )
        .await?;
        watch(m, "p0_positions", "defi").await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        if m.get_database_backend() != DbBackend::Postgres {
            for tag in ["ins", "upd", "del"] {
                m.get_connection()
                    .execute_unprepared(&format!(
                        "DROP TRIGGER IF EXISTS nms_gen_p0_positions_{tag}"
                    ))
                    .await?;
            }
        }
        m.drop_table(Table::drop().table("p0_positions").to_owned())
            .await
    }
}
