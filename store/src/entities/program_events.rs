//! A decoded program event, at its position in the transaction that emitted it. `subject` is
//! what the event is about (a market or protocol id in hex, or an epoch account), `actor` the
//! wallet that acted; `data` is the event's Anchor encoding (decode with narrative_sdk).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "program_events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub program: String,
    pub name: String,
    pub slot: i64,
    pub signature: String,
    pub tx_index: i64,
    pub instruction_index: i32,
    pub inner_index: i32,
    pub subject: Option<String>,
    pub actor: Option<String>,
    pub data: Vec<u8>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
