//! A fee-gated market creation request (`POST /v1/markets`).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "market_creations")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub market_id: String,
    pub question: String,
    pub variant: String,
    pub deadline: i64,
    pub creator: String,
    pub seed_yes: i64,
    pub seed_no: i64,
    pub fee_tx_signature: String,
    pub source: String,
    pub status: String,
    pub created_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
