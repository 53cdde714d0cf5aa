//! A wallet's Web Push preferences: the notification types it turned off (every type is on until
//! then, including types added later).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "push_preferences")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub wallet: String,
    /// A JSON list of type names.
    pub disabled: Json,
    pub updated_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
