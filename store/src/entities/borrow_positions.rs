//! A borrow against lending positions (spec 2.9, 4.7), recorded once its transaction is verified
//! on the ledger.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "borrow_positions")]
pub struct Model {
    /// The `borrow_id`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub wallet: String,
    pub protocol: String,
    pub asset: String,
    pub mint: String,
    /// The debt when borrowed, in the token's base units.
    pub amount_base: i64,
    pub amount_usd_micros: i64,
    /// Percent, spread included.
    pub borrow_apy: f64,
    pub max_ltv_bps: i32,
    pub tier: String,
    pub obligation: String,
    /// `open`, `repaid` or `closed_outside`.
    pub status: String,
    pub borrow_signature: String,
    pub repay_signature: Option<String>,
    pub last_health: Option<f64>,
    pub health_checked_at: Option<i64>,
    /// The lowest alert level sent for the current fall, if any.
    pub alert_level: Option<String>,
    pub created_at: i64,
    pub closed_at: Option<i64>,
    /// The slot the borrow landed in (NULL for positions recorded before it was kept): a loan
    /// read from an earlier slot cannot tell that the loan is gone.
    pub landed_slot: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
