//! A place on the waitlist, by email (stored lower-case) and/or wallet, each unique; `id` is
//! the order of joining.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "waitlist_entries")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub email: Option<String>,
    pub wallet: Option<String>,
    /// The wallet that referred this one.
    pub referrer: Option<String>,
    pub created_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
