//! The in-app notification feed (spec 6.2): one row per event and wallet, unique by the event's
//! key so a cause seen twice writes once, with its read state; the operator's announcements; and
//! the cursors of consumers that follow the indexed program events.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("notifications")
                .if_not_exists()
                .col(big_pk_auto("id"))
                .col(string("wallet"))
                .col(string("kind"))
                .col(string("title"))
                .col(string("body"))
                .col(json_binary("data"))
                .col(string_uniq("dedupe_key"))
                .col(big_integer("created_at"))
                .col(big_integer_null("read_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "notifications",
            "idx_notifications_wallet",
            &["wallet", "id"],
        ))
        .await?;
        m.create_index(index(
            "notifications",
            "idx_notifications_wallet_read",
            &["wallet", "read_at"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("announcements")
                .if_not_exists()
                .col(big_pk_auto("id"))
                .col(string("title"))
                .col(string("body"))
                // The wallets it goes to (JSON list), or null for every known wallet.
                .col(json_binary_null("audience"))
                .col(string("created_by"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("event_cursors")
                .if_not_exists()
                .col(string("name").primary_key())
                .col(big_integer("last_event_id"))
                .col(big_integer("updated_at"))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for table in ["event_cursors", "announcements", "notifications"] {
            m.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}
