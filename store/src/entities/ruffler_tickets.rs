//! A ruffler ticket: a wallet's entry in the draw of one round (the Echo Pool epoch open when it
//! was won), unique by its cause.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ruffler_tickets")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub round: i64,
    pub wallet: String,
    pub source_key: String,
    pub created_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
