//! A transaction the api built for a wallet to sign; confirmed once the ledger shows it landed.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "prepared_transactions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub kind: String,
    pub wallet: String,
    pub message: Vec<u8>,
    pub params: Json,
    pub status: String,
    pub signature: Option<String>,
    pub error: Option<String>,
    pub created_at: i64,
    pub confirmed_at: Option<i64>,
    /// The blockhash the message carries, base58 (NULL on rows written before 2026-12-01).
    pub blockhash: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
