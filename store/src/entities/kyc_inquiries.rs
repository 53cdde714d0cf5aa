//! A hosted KYC inquiry opened with the provider for a wallet and tier, with its status as the
//! provider last reported it (`created`, then `completed`, `approved`, `declined`, `failed`,
//! `expired`, `needs_review`…).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "kyc_inquiries")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub inquiry_id: String,
    pub wallet: String,
    pub tier: i32,
    /// `persona` or `local`.
    pub provider: String,
    pub status: String,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
