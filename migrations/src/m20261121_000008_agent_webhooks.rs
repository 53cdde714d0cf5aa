//! Agents' webhook subscriptions (spec 4.10 / 6.1) and every delivery attempt made to them.

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
                .table("agent_webhooks")
                .if_not_exists()
                .col(string("agent_id").primary_key())
                .col(string("url"))
                .col(json_binary("events"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("webhook_deliveries")
                .if_not_exists()
                .col(big_pk_auto("id"))
                .col(string("agent_id"))
                .col(string("event"))
                .col(string("url"))
                .col(big_integer("job_id"))
                .col(integer("attempt"))
                .col(integer_null("status_code"))
                .col(string_null("error"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "webhook_deliveries",
            "idx_webhook_deliveries_agent",
            &["agent_id"],
        ))
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("webhook_deliveries").to_owned())
            .await?;
        m.drop_table(Table::drop().table("agent_webhooks").to_owned())
            .await
    }
}
