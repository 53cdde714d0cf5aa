//! binary_vault: program state, config, markets, backings, oracle votes, disputes.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::{account_table, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            account_table("binary_program_states")
                .col(string("admin"))
                .col(boolean("paused"))
                .col(big_integer("market_count"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            account_table("binary_configs")
                .col(integer("capital_loss_bps"))
                .col(integer("crucible_share_bps"))
                .col(integer("oracle_threshold"))
                .col(json_binary("oracles"))
                .col(big_integer("resolution_timelock_secs"))
                .col(big_integer("max_resolution_delay_secs"))
                .col(big_integer("dispute_bond_lamports"))
                .col(string("treasury"))
                .col(big_integer("min_backing_spl"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            account_table("markets")
                .col(string("market_id"))
                .col(string_null("market_uuid"))
                .col(string("creator"))
                .col(string("variant"))
                .col(string("source"))
                .col(string_null("mint"))
                .col(boolean("approved"))
                .col(integer("oracle_status"))
                .col(boolean("finalized"))
                .col(string_null("outcome"))
                .col(big_integer("created_at"))
                .col(big_integer("deadline"))
                .col(big_integer("resolution_proposed_at"))
                .col(big_integer("finalized_at"))
                .col(big_integer("yes_total"))
                .col(big_integer("no_total"))
                .col(integer("yes_backers"))
                .col(integer("no_backers"))
                .col(integer("yes_votes"))
                .col(integer("no_votes"))
                .col(big_integer("total_yield"))
                .col(big_integer("min_backing"))
                .col(integer("capital_loss_bps"))
                .col(integer("crucible_share_bps"))
                .col(big_integer("resolution_timelock_secs"))
                .col(big_integer("max_resolution_delay_secs"))
                .col(big_integer("winner_bonus_pool"))
                .col(big_integer("loser_refund_pool"))
                .col(big_integer("crucible_amount"))
                .col(big_integer("total_paid_out"))
                .col(integer("claims_count"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "markets",
            "idx_markets_market_uuid",
            &["market_uuid"],
        ))
        .await?;
        m.create_index(index("markets", "idx_markets_market_id", &["market_id"]))
            .await?;
        m.create_table(
            account_table("backings")
                .col(string("market_id"))
                .col(string("backer"))
                .col(string("side"))
                .col(big_integer("amount"))
                .col(boolean("claimed"))
                .col(big_integer("payout"))
                .col(big_integer("first_backed_at"))
                .col(big_integer("last_backed_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("backings", "idx_backings_market_id", &["market_id"]))
            .await?;
        m.create_index(index("backings", "idx_backings_backer", &["backer"]))
            .await?;
        m.create_table(
            account_table("oracle_votes")
                .col(string("market_id"))
                .col(string("oracle"))
                .col(string("vote"))
                .col(integer("confidence_bps"))
                .col(big_integer("submitted_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "oracle_votes",
            "idx_oracle_votes_market_id",
            &["market_id"],
        ))
        .await?;
        m.create_table(
            account_table("disputes")
                .col(string("market_id"))
                .col(string("disputer"))
                .col(string("status"))
                .col(big_integer("bond_lamports"))
                .col(big_integer("opened_at"))
                .col(big_integer("settled_at"))
                .col(integer("dispute_count"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("disputes", "idx_disputes_market_id", &["market_id"]))
            .await
    }
}
