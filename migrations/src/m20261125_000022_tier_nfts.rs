//! Tier NFTs (spec 4.12): one row per Token-2022 mint that is a member of a tier's collection,
//! with the wallet that minted it through the service and the wallet the ledger last showed
//! holding it. Rows are written only from the ledger: a confirmed mint, or a webhook's mint
//! re-read from the chain. A change bumps the `markets` generation, under which the conviction
//! profiles (whose tier honours a held NFT) are cached.

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
                .table("tier_nfts")
                .if_not_exists()
                .col(string("mint").primary_key())
                // `ember` … `volcanic`: the collection it is a member of.
                .col(string("tier"))
                .col(string("collection"))
                .col(string("name"))
                .col(string("uri"))
                // The wallet that minted it through the service; null for a mint first seen
                // through a webhook.
                .col(string_null("minted_by"))
                .col(string_null("mint_signature"))
                .col(big_integer_null("minted_at"))
                // Who the ledger last showed holding it; null when no wallet it was asked about
                // holds it.
                .col(string_null("owner"))
                .col(big_integer("owner_checked_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("tier_nfts", "idx_tier_nfts_owner", &["owner"]))
            .await?;
        m.create_index(index(
            "tier_nfts",
            "idx_tier_nfts_minted_by",
            &["minted_by"],
        ))
        .await?;
        watch(m, "tier_nfts", "markets").await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("tier_nfts").to_owned())
            .await
    }
}
