//! A wallet blocked from protocol writes (its prepares answer 403 `wallet_blocked`) because
//! screening flagged it, until an operator lifts the block.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "blocked_wallets")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub wallet: String,
    pub reason: String,
    pub source: String,
    pub blocked_at: i64,
    pub lifted_at: Option<i64>,
    pub lifted_by: Option<String>,
}

impl Model {
    /// Whether the block stands.
    pub fn active(&self) -> bool {
        self.lifted_at.is_none()
    }
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
