//! A wallet's share of one Echo Pool epoch: its conviction and creator amounts (lamports), the
//! leaf amount (their sum) and the Merkle proof `claim_sol` needs.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "echo_allocations")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub epoch_address: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub wallet: String,
    pub epoch_number: i64,
    pub conviction_amount: i64,
    pub creator_amount: i64,
    pub amount: i64,
    /// Sibling hashes (hex), leaf to root.
    pub proof: Json,
    /// What earned it.
    pub detail: Json,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
