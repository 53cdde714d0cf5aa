//! KYC (spec 4.9): the hosted inquiries opened with the KYC provider, one row each with its
//! state as the provider last reported it; each wallet's verified tier (written only from a
//! signed provider webhook that approved an inquiry); each wallet's latest screening; and the
//! wallets blocked from protocol writes. Blocks are part of the `terms` topic (who may write),
//! so the prepares that keep them in memory learn of a block or an unblock at once.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use crate::columns::index;
use crate::m20261124_000018_read_models::watch;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("kyc_inquiries")
                .if_not_exists()
                .col(string("inquiry_id").primary_key())
                .col(string("wallet"))
                .col(integer("tier"))
                .col(string("provider"))
                .col(string("status"))
                .col(big_integer("created_at"))
                .col(big_integer("updated_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "kyc_inquiries",
            "idx_kyc_inquiries_wallet",
            &["wallet", "created_at"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("kyc_verifications")
                .if_not_exists()
                .col(string("wallet").primary_key())
                .col(integer("tier"))
                .col(string("inquiry_id"))
                .col(big_integer("verified_at"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("wallet_screenings")
                .if_not_exists()
                .col(string("wallet").primary_key())
                .col(boolean("flagged"))
                .col(string_null("reason"))
                .col(string("provider"))
                .col(big_integer("screened_at"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("blocked_wallets")
                .if_not_exists()
                .col(string("wallet").primary_key())
                .col(string("reason"))
                // `screening` (what blocked it).
                .col(string("source"))
                .col(big_integer("blocked_at"))
                // Set when an operator lifts the block; a lifted block stays lifted.
                .col(big_integer_null("lifted_at"))
                .col(string_null("lifted_by"))
                .to_owned(),
        )
        .await?;
        watch(m, "blocked_wallets", "terms").await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            "blocked_wallets",
            "wallet_screenings",
            "kyc_verifications",
            "kyc_inquiries",
        ] {
            m.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}
