//! shield_vault: program state, coverages (with both sides' books flattened into
//! `safe_*` / `exploit_*` columns as spec 4.14 names them), backings, votes.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::{account_table, index};

#[derive(DeriveMigrationName)]
pub struct Migration;

fn side_columns(table: &mut TableCreateStatement, side: &str) {
    let name = |suffix: &str| Alias::new(format!("{side}_{suffix}"));
    table
        .col(big_integer(name("principal")))
        .col(big_integer(name("total_assets")))
        .col(string(name("shares_total")))
        .col(big_integer(name("yield_harvested")))
        .col(big_integer(name("yield_paid")))
        .col(big_integer(name("held")))
        .col(integer(name("backers")));
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            account_table("shield_programs")
                .col(string("admin"))
                .col(json_binary("oracles"))
                .col(integer("oracle_threshold"))
                .col(string("treasury"))
                .col(string("harvest_authority"))
                .col(string("seam_pool_program"))
                .col(integer("max_self_hedge_bps"))
                .col(boolean("paused"))
                .col(big_integer("coverage_count"))
                .col(json_binary_null("pending_change"))
                .to_owned(),
        )
        .await?;
        let mut coverages = account_table("shield_coverages")
            .col(string("protocol_id"))
            .col(string("kind"))
            .col(string_null("protocol_wallet"))
            .col(integer("period_days"))
            .col(big_integer("period_start"))
            .col(big_integer("period_end"))
            .col(big_integer("fee_lamports"))
            .col(string("status"))
            .col(string_null("outcome"))
            .col(integer("safe_votes"))
            .col(integer("exploit_votes"))
            .col(big_integer("outcome_proposed_at"))
            .col(big_integer("finalized_at"))
            .to_owned();
        side_columns(&mut coverages, "safe");
        side_columns(&mut coverages, "exploit");
        coverages
            .col(big_integer("winner_bonus_pool"))
            .col(big_integer("protocol_payout"))
            .col(big_integer("treasury_payout"))
            .col(big_integer("seam_payout"))
            .col(big_integer("principal_returned"))
            .col(big_integer("bonus_paid"))
            .col(integer("claims_count"));
        m.create_table(coverages).await?;
        m.create_index(index(
            "shield_coverages",
            "idx_shield_coverages_protocol_id",
            &["protocol_id"],
        ))
        .await?;
        m.create_table(
            account_table("shield_backings")
                .col(string("protocol_id"))
                .col(string("backer"))
                .col(string("side"))
                .col(big_integer("amount_lamports"))
                .col(string("shares"))
                .col(integer("multiplier_bps"))
                .col(big_integer("discovery_lamports"))
                .col(boolean("claimed"))
                .col(big_integer("principal_paid"))
                .col(big_integer("bonus_paid"))
                .col(big_integer("yield_paid"))
                .col(big_integer("first_backed_at"))
                .col(big_integer("last_backed_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "shield_backings",
            "idx_shield_backings_protocol_id",
            &["protocol_id"],
        ))
        .await?;
        m.create_index(index(
            "shield_backings",
            "idx_shield_backings_backer",
            &["backer"],
        ))
        .await?;
        m.create_table(
            account_table("shield_votes")
                .col(string("protocol_id"))
                .col(string("oracle"))
                .col(string("vote"))
                .col(big_integer("submitted_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "shield_votes",
            "idx_shield_votes_protocol_id",
            &["protocol_id"],
        ))
        .await
    }
}
