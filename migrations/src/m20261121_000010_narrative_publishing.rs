//! What publishing a narrative needs beyond the narrative row: the prepared mint (market
//! creation + publish fee) a publish is checked against, the resolution rules, the score's
//! history, and the asynchronous AI drafts (`generate`).

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
                .table("narrative_mints")
                .if_not_exists()
                .col(string("narrative_id").primary_key())
                .col(string("prepared_id"))
                .col(string("wallet"))
                .col(integer("deadline_days"))
                .col(big_integer("deadline_at"))
                .col(big_integer("stake_lamports"))
                .col(big_integer("treasury_lamports"))
                .col(string("status"))
                .col(big_integer("created_at"))
                .col(big_integer_null("published_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "narrative_mints",
            "idx_narrative_mints_wallet",
            &["wallet"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("narrative_rules")
                .if_not_exists()
                .col(string("narrative_id").primary_key())
                .col(text("resolution_source"))
                .col(text("criteria"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("narrative_score_history")
                .if_not_exists()
                .col(big_pk_auto("id"))
                .col(string("narrative_id"))
                .col(double("score"))
                .col(double("originality"))
                .col(double("uncertainty"))
                .col(big_integer("recorded_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "narrative_score_history",
            "idx_narrative_score_history_narrative",
            &["narrative_id", "recorded_at"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("narrative_generations")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("wallet_address"))
                .col(text("topic"))
                .col(string_null("category"))
                .col(string("status"))
                .col(json_binary_null("draft"))
                .col(string_null("error"))
                .col(big_integer("created_at"))
                .col(big_integer("updated_at"))
                .to_owned(),
        )
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            "narrative_generations",
            "narrative_score_history",
            "narrative_rules",
            "narrative_mints",
        ] {
            m.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}
