//! An asynchronous AI draft (spec 4.1 generate): `queued`, then `done` with `draft` or `failed`
//! with `error`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "narrative_generations")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub wallet_address: String,
    pub topic: String,
    pub category: Option<String>,
    pub status: String,
    /// `{title, thesis, category, resolution_source, criteria}` once done.
    pub draft: Option<Json>,
    pub error: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
