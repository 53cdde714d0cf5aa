//! A mission a wallet completed, once (the primary key), with the points it awarded.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "mission_completions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub wallet: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub mission_id: String,
    pub points: i64,
    pub completed_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
