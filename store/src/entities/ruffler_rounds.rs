//! A drawn ruffler round: its seed (hex), how many tickets took part, the winning ticket and its
//! wallet (none when nobody held a ticket), and the prize in points.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ruffler_rounds")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub round: i64,
    pub epoch_address: String,
    pub seed: String,
    pub tickets: i32,
    pub winner: Option<String>,
    pub winning_ticket: Option<i64>,
    pub prize_points: i64,
    pub drawn_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
