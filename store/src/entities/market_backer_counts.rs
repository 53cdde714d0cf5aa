//! A market's distinct live backing wallets (a wallet on both sides counts once), kept by the
//! batch writer.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "market_backer_counts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub market_id: String,
    pub backers: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
