//! A wallet's balance in one p0 (marginfi v2) bank as the service recorded it: one row per
//! wallet and bank, opened by a verified deposit, closed by a verified withdrawal of all of it.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "p0_positions")]
pub struct Model {
    /// The `position_id`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub wallet: String,
    /// The wallet's margin account.
    pub account: String,
    pub bank: String,
    pub token_symbol: String,
    pub mint: String,
    /// Deposited less withdrawn, in base units.
    pub principal_base: i64,
    /// `open` or `closed`.
    pub status: String,
    pub narrative_id: Option<String>,
    pub last_signature: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub closed_at: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
