//! crucible_pool: program state, asset pools, epochs, claim receipts.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::{account_table, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            account_table("crucible_states")
                .col(string("admin"))
                .col(string("keeper"))
                .col(json_binary("authorized_sources"))
                .col(big_integer("epoch_duration_secs"))
                .col(big_integer("claim_window_secs"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            account_table("crucible_asset_pools")
                .col(string_null("mint"))
                .col(big_integer("current_epoch"))
                .col(big_integer("total_deposited"))
                .col(big_integer("total_claimed"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            account_table("crucible_epochs")
                .col(string_null("mint"))
                .col(big_integer("epoch"))
                .col(string("status"))
                .col(big_integer("started_at"))
                .col(big_integer("closed_at"))
                .col(big_integer("claim_deadline"))
                .col(big_integer("deposited"))
                .col(big_integer("rolled_in"))
                .col(big_integer("conviction_pool"))
                .col(big_integer("creator_pool"))
                .col(string("merkle_root"))
                .col(big_integer("claimed"))
                .col(integer("claims"))
                .col(big_integer("rolled_out"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "crucible_epochs",
            "idx_crucible_epochs_mint_epoch",
            &["mint", "epoch"],
        ))
        .await?;
        m.create_table(
            account_table("crucible_claims")
                .col(string("epoch"))
                .col(string("wallet"))
                .col(big_integer("amount"))
                .col(big_integer("claimed_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "crucible_claims",
            "idx_crucible_claims_wallet",
            &["wallet"],
        ))
        .await
    }
}
