//! A wallet's position on one side of a shield (`side` is `safe`/`exploit`; `shares` decimal text).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "shield_backings")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub address: String,
    pub protocol_id: String,
    pub backer: String,
    pub side: String,
    pub amount_lamports: i64,
    pub shares: String,
    pub multiplier_bps: i32,
    pub discovery_lamports: i64,
    pub claimed: bool,
    pub principal_paid: i64,
    pub bonus_paid: i64,
    pub yield_paid: i64,
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
