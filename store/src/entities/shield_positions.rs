//! A shield backing made through the api (spec 4.14's `shield_positions`).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "shield_positions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub wallet: String,
    pub protocol: String,
    pub side: String,
    pub amount_lamports: i64,
    pub arcium_enabled: bool,
    pub window: String,
    pub yield_earned: i64,
    pub status: String,
    pub tx_signature: Option<String>,
    pub created_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
