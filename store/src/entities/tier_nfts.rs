//! A tier NFT (spec 4.12): a Token-2022 mint in one tier's collection, who minted it through
//! the service and who the ledger last showed holding it.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "tier_nfts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub mint: String,
    /// `ember` … `volcanic`.
    pub tier: String,
    pub collection: String,
    pub name: String,
    pub uri: String,
    /// The wallet that minted it through the service.
    pub minted_by: Option<String>,
    pub mint_signature: Option<String>,
    pub minted_at: Option<i64>,
    /// Who the ledger last showed holding it.
    pub owner: Option<String>,
    pub owner_checked_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
