//! Narratives (spec 2.1; each is a binary_vault market whose `market_id` comes from its UUID) and
//! the agents that read and resolve them (spec 2.7).

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
                .table("narratives")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string_uniq("market_id"))
                .col(string("wallet_address"))
                .col(string("title"))
                .col(text("thesis"))
                .col(string("category"))
                .col(string_null("sub_category"))
                .col(string_null("asset_tag"))
                .col(string("narrative_type"))
                .col(boolean("is_protocol_narrative"))
                .col(string_null("protocol_narrative_label"))
                .col(string("status"))
                .col(string("oracle_status"))
                .col(double("score"))
                .col(double("uncertainty_score"))
                .col(big_integer("deadline_at"))
                .col(string("deadline_tag"))
                .col(big_integer_null("opens_at"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        for (name, column) in [
            ("idx_narratives_created_at", "created_at"),
            ("idx_narratives_category", "category"),
            ("idx_narratives_wallet", "wallet_address"),
            ("idx_narratives_oracle_status", "oracle_status"),
        ] {
            m.create_index(index("narratives", name, &[column])).await?;
        }
        m.create_table(
            Table::create()
                .table("agents")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("name"))
                .col(string_null("description"))
                .col(string("wallet_address"))
                .col(string_uniq("api_key_id"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("agents", "idx_agents_wallet", &["wallet_address"]))
            .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("agents").to_owned())
            .await?;
        m.drop_table(Table::drop().table("narratives").to_owned())
            .await
    }
}
