//! A wallet's verified KYC tier: the highest tier of an inquiry the provider approved.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "kyc_verifications")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub wallet: String,
    pub tier: i32,
    /// The approved inquiry that gave the tier.
    pub inquiry_id: String,
    pub verified_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
