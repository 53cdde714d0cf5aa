//! How a narrative resolves (spec 2.3), when its creator attached rules.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "narrative_rules")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub narrative_id: String,
    pub resolution_source: String,
    pub criteria: String,
    pub created_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
