//! A wallet's signed acceptance of one version of the platform terms.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "terms_acceptances")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub wallet: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub terms_version: String,
    /// The wallet's signature (base58) of the terms message.
    pub signature: String,
    pub accepted_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
