//! A wallet's position on one side of a binary market (`side` is `yes`/`no`).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "backings")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub address: String,
    pub market_id: String,
    pub backer: String,
    pub side: String,
    pub amount: i64,
    pub claimed: bool,
    pub payout: i64,
    pub first_backed_at: i64,
    pub last_backed_at: i64,
    pub slot: i64,
    pub write_version: i64,
    pub closed: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

crate::account_table!(Entity);
