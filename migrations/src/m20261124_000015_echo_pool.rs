//! The Echo Pool's off-chain half: each epoch's distribution as the keeper computed it (the
//! window it covers, the two pools, the Merkle root it posted) and every wallet's allocation with
//! its proof, so a wallet can claim what the root pays it; the ruffler's tickets and drawn
//! rounds; and a singleton key on jobs, so a perpetual job (the keeper, the event follower) has
//! one row however many processes start.

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
                .table("echo_distributions")
                .if_not_exists()
                // The crucible_pool epoch account.
                .col(string("epoch_address").primary_key())
                .col(string_null("mint"))
                .col(big_integer("epoch_number"))
                // Results finalized in [window_start, window_end) count for this epoch.
                .col(big_integer("window_start"))
                .col(big_integer("window_end"))
                .col(big_integer("available"))
                .col(big_integer("conviction_pool"))
                .col(big_integer("creator_pool"))
                .col(string("merkle_root"))
                // computed → closed → rolled_over; or vetoed.
                .col(string("status"))
                .col(big_integer("computed_at"))
                .col(big_integer_null("closed_at"))
                .col(string_null("close_signature"))
                .col(big_integer_null("claimable_at"))
                .col(big_integer_null("claim_deadline"))
                .col(big_integer_null("rolled_over_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "echo_distributions",
            "idx_echo_distributions_status",
            &["status"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("echo_allocations")
                .if_not_exists()
                .col(string("epoch_address"))
                .col(string("wallet"))
                .col(big_integer("epoch_number"))
                .col(big_integer("conviction_amount"))
                .col(big_integer("creator_amount"))
                .col(big_integer("amount"))
                // Sibling hashes, hex, leaf to root.
                .col(json_binary("proof"))
                // What earned it: the winning backings and forfeits it was computed from.
                .col(json_binary("detail"))
                .primary_key(Index::create().col("epoch_address").col("wallet"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "echo_allocations",
            "idx_echo_allocations_wallet",
            &["wallet", "epoch_number"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("ruffler_tickets")
                .if_not_exists()
                .col(big_pk_auto("id"))
                // The round is the Echo Pool epoch open when the ticket was won.
                .col(big_integer("round"))
                .col(string("wallet"))
                // Why the ticket was won, unique: a cause gives its ticket once.
                .col(string_uniq("source_key"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ruffler_tickets",
            "idx_ruffler_tickets_round",
            &["round", "wallet"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("ruffler_rounds")
                .if_not_exists()
                .col(big_integer("round").primary_key())
                .col(string("epoch_address"))
                .col(string("seed"))
                .col(integer("tickets"))
                .col(string_null("winner"))
                .col(big_integer_null("winning_ticket"))
                .col(big_integer("prize_points"))
                .col(big_integer("drawn_at"))
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table("jobs")
                .add_column(string_null("singleton"))
                .to_owned(),
        )
        .await?;
        // Unique where set: NULLs are distinct on both SQLite and Postgres.
        m.create_index(
            index("jobs", "uq_jobs_singleton", &["singleton"])
                .unique()
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_index(
            Index::drop()
                .name("uq_jobs_singleton")
                .table("jobs")
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table("jobs")
                .drop_column("singleton")
                .to_owned(),
        )
        .await?;
        for table in [
            "ruffler_rounds",
            "ruffler_tickets",
            "echo_allocations",
            "echo_distributions",
        ] {
            m.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}
