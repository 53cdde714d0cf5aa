//! A wallet's signed message the api has accepted once: refused if presented again.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "used_wallet_signatures")]
pub struct Model {
    /// The wallet's ed25519 signature, base58.
    #[sea_orm(primary_key, auto_increment = false)]
    pub signature: String,
    pub wallet: String,
    /// The message's purpose (`terms`, `kyc-start`, …).
    pub purpose: String,
    /// Unix seconds, as the message states it.
    pub issued_at: i64,
    pub used_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
