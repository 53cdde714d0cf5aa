//! Signed wallet messages are single use. Every message the api accepts as a wallet's proof
//! carries its issued-at time, and is refused outside a window around the server's clock; inside
//! the window, the signature is remembered here so the same proof cannot be presented twice (a
//! replayed preferences change would otherwise undo a newer one). Rows older than the window are
//! deleted by the retention job: by then the issued-at check refuses them anyway.

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
                .table("used_wallet_signatures")
                .if_not_exists()
                // The wallet's ed25519 signature, base58.
                .col(string("signature").primary_key())
                .col(string("wallet"))
                // What the message was for (its domain separator: `terms`, `kyc-start`, …).
                .col(string("purpose"))
                .col(big_integer("issued_at"))
                .col(big_integer("used_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "used_wallet_signatures",
            "idx_used_wallet_signatures_issued_at",
            &["issued_at"],
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("used_wallet_signatures").to_owned())
            .await
    }
}
