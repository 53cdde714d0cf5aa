//! What a verification method's provider (or the ledger) last said of a wallet (spec 2.10).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "wallet_verifications")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub wallet: String,
    /// `idpass`, `passport`, `sas` or `holder`.
    #[sea_orm(primary_key, auto_increment = false)]
    pub method: String,
    /// `verified`, `unverified` or `requested`.
    pub status: String,
    /// The passport score.
    pub score: Option<f64>,
    /// What proved it: the pass's id, the attestation's address; for `holder`, the balance
    /// held in base units (decimal string).
    pub reference: Option<String>,
    pub checked_at: i64,
    pub verified_at: Option<i64>,
    pub expires_at: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
