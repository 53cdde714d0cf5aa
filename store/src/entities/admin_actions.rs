//! One action taken through the operators' surface: append-only.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "admin_actions")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// `narrative.hide`, `market.approve`, `job.retry`, …
    pub action: String,
    /// What it acted on: a narrative's id, a market creation's id, a job's id.
    pub subject: String,
    pub detail: Json,
    /// The operator's wallet.
    pub actor: String,
    pub created_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
