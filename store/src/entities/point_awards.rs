//! One award in the points ledger: who, how many, why (`mission`, `backing`, `referral`,
//! `ruffler`) and the cause it came from, unique, so no cause pays twice.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "point_awards")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub wallet: String,
    pub points: i64,
    pub reason: String,
    pub source_key: String,
    pub detail: Option<Json>,
    pub created_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
