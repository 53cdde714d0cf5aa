//! Program state of binary_vault.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "binary_program_states")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub address: String,
    pub admin: String,
    pub paused: bool,
    pub market_count: i64,
    /// The admin a two-step rotation waits on to accept.
    pub pending_admin: Option<String>,
    pub slot: i64,
    pub write_version: i64,
    pub closed: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

crate::account_table!(Entity);
