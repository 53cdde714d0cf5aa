//! One in-app notification of one wallet (spec 6.2): its type, text and data, unique by the
//! event that caused it (`dedupe_key`), and when it was read.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "notifications")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub wallet: String,
    pub kind: String,
    pub title: String,
    pub body: String,
    pub data: Json,
    pub dedupe_key: String,
    pub created_at: i64,
    pub read_at: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
