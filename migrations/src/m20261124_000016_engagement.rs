//! What wallets do around the markets: missions completed (once each), the ledger of point
//! awards (one row per award, unique by its cause, so the total can be audited row by row),
//! acceptances of the platform terms (one per wallet and version) and the waitlist.

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
                .table("mission_completions")
                .if_not_exists()
                .col(string("wallet"))
                .col(string("mission_id"))
                .col(big_integer("points"))
                .col(big_integer("completed_at"))
                .primary_key(Index::create().col("wallet").col("mission_id"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("point_awards")
                .if_not_exists()
                .col(big_pk_auto("id"))
                .col(string("wallet"))
                .col(big_integer("points"))
                // mission, backing, referral, ruffler.
                .col(string("reason"))
                // The cause, unique: `mission:<id>:<wallet>`, `backing:<signature>:<n>`, ….
                .col(string_uniq("source_key"))
                .col(json_binary_null("detail"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "point_awards",
            "idx_point_awards_wallet",
            &["wallet"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("terms_acceptances")
                .if_not_exists()
                .col(string("wallet"))
                .col(string("terms_version"))
                .col(string("signature"))
                .col(big_integer("accepted_at"))
                .primary_key(Index::create().col("wallet").col("terms_version"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("waitlist_entries")
                .if_not_exists()
                // The order of joining: a position is the number of entries up to this id.
                .col(big_pk_auto("id"))
                .col(string_null("email"))
                .col(string_null("wallet"))
                .col(string_null("referrer"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(
            index("waitlist_entries", "uq_waitlist_email", &["email"])
                .unique()
                .to_owned(),
        )
        .await?;
        m.create_index(
            index("waitlist_entries", "uq_waitlist_wallet", &["wallet"])
                .unique()
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            "waitlist_entries",
            "terms_acceptances",
            "point_awards",
            "mission_completions",
        ] {
            m.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}
