//! The indexer's own tables: decoded events, accounts that decode to nothing known, and the
//! checkpoint a restarted indexer resumes from.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::{account_table, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("program_events")
                .if_not_exists()
                .col(big_pk_auto("id"))
                .col(string("program"))
                .col(string("name"))
                .col(big_integer("slot"))
                .col(string("signature"))
                .col(big_integer("tx_index"))
                .col(integer("instruction_index"))
                .col(integer("inner_index"))
                .col(string_null("subject"))
                .col(string_null("actor"))
                .col(blob("data"))
                .to_owned(),
        )
        .await?;
        // What makes an event unique on chain: a replayed transaction inserts nothing twice.
        m.create_index(
            index(
                "program_events",
                "uq_program_events_position",
                &["signature", "instruction_index", "inner_index"],
            )
            .unique()
            .to_owned(),
        )
        .await?;
        m.create_index(index(
            "program_events",
            "idx_program_events_subject",
            &["subject", "slot"],
        ))
        .await?;
        m.create_table(
            account_table("raw_accounts")
                .col(string("owner"))
                .col(big_integer("lamports"))
                .col(blob("data"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("indexer_checkpoints")
                .if_not_exists()
                .col(string("name").primary_key())
                .col(big_integer("slot"))
                .col(big_integer("updated_at"))
                .to_owned(),
        )
        .await
    }
}
