//! Verification (spec 2.10, 4.8): one row per wallet and method (`idpass`, `passport`, `sas`,
//! `holder`) holding what the method's provider or the ledger last said of the wallet. Only a
//! provider's answer or a ledger read writes `verified`; a SAS request (`coming_soon`) is kept
//! as `requested`.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("wallet_verifications")
                .if_not_exists()
                .col(string("wallet"))
                .col(string("method"))
                // `verified`, `unverified` or `requested`.
                .col(string("status"))
                // The passport score.
                .col(double_null("score"))
                // What proved it: the pass's id, the attestation's address; for `holder`, the
                // balance held (base units, as a decimal string: a u64 does not fit a double).
                .col(string_null("reference"))
                .col(big_integer("checked_at"))
                .col(big_integer_null("verified_at"))
                // When the proof lapses (a pass's or an attestation's expiry).
                .col(big_integer_null("expires_at"))
                .primary_key(Index::create().col("wallet").col("method"))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("wallet_verifications").to_owned())
            .await
    }
}
