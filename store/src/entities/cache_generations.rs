//! The generation of one topic of data, bumped by every write that changes it.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "cache_generations")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub topic: String,
    pub generation: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
