//! An agent webhook's signing secret is random, made when the webhook is registered and kept
//! here, instead of being the SHA-256 of the agent's API key (which the store keeps to check the
//! key, so anyone who read it could sign deliveries). Webhooks registered before have none: their
//! deliveries are not sent until the agent registers the webhook again and learns its secret.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("agent_webhooks")
                // `whsec_<base64 of 32 random bytes>`, as the agent verifies with it.
                .add_column(string_null("signing_secret"))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("agent_webhooks")
                .drop_column("signing_secret")
                .to_owned(),
        )
        .await
    }
}
