//! A binary market's dispute record.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "disputes")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub address: String,
    pub market_id: String,
    pub disputer: String,
    pub status: String,
    pub bond_lamports: i64,
    pub opened_at: i64,
    pub settled_at: i64,
    pub dispute_count: i32,
    /// Whether an upheld or lapsed dispute's forfeit bond has left for the treasury.
    pub bond_forwarded: bool,
    pub slot: i64,
    pub write_version: i64,
    pub closed: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

crate::account_table!(Entity);
