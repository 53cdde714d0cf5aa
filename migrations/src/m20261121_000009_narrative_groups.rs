//! Narrative groups (spec 2.4): a titled set of narratives, some featured; members may point at
//! where a pre-market narrative comes from.

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
                .table("narrative_groups")
                .if_not_exists()
                .col(string("id").primary_key())
                .col(string("title"))
                .col(boolean("featured"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("narrative_group_members")
                .if_not_exists()
                .col(string("group_id"))
                .col(string("narrative_id"))
                .col(string_null("pre_market_source"))
                .col(integer("position"))
                .primary_key(Index::create().col("group_id").col("narrative_id"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "narrative_group_members",
            "idx_narrative_group_members_narrative",
            &["narrative_id"],
        ))
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("narrative_group_members").to_owned())
            .await?;
        m.drop_table(Table::drop().table("narrative_groups").to_owned())
            .await
    }
}
