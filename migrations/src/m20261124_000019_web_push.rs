//! Web Push (spec 4.11, 6.2): the browsers' push subscriptions (one row per endpoint, so a
//! wallet may have a browser on each device), the wallets' per-type preferences (kept as the
//! types turned off, so a type added later is on for everyone), and the service's own keys
//! (the VAPID pair, generated once by whichever process starts first).

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
                .table("push_subscriptions")
                .if_not_exists()
                .col(big_pk_auto("id"))
                .col(string("wallet"))
                .col(string_uniq("endpoint"))
                // base64url: the browser's P-256 key (65 bytes) and its auth secret (16 bytes).
                .col(string("p256dh"))
                .col(string("auth"))
                .col(big_integer("created_at"))
                .col(big_integer("updated_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "push_subscriptions",
            "idx_push_subscriptions_wallet",
            &["wallet", "id"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("push_preferences")
                .if_not_exists()
                .col(string("wallet").primary_key())
                // The notification types turned off (a JSON list of names).
                .col(json_binary("disabled"))
                .col(big_integer("updated_at"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("service_keys")
                .if_not_exists()
                .col(string("name").primary_key())
                .col(string("secret"))
                .col(string("public"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for table in ["service_keys", "push_preferences", "push_subscriptions"] {
            m.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}
