//! A DeFi earn position (spec 2.8): a deposit into a venue verified on the ledger.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "defi_positions")]
pub struct Model {
    /// The `backing_id`: the id of the prepared deposit transaction.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub wallet: String,
    pub protocol: String,
    pub token_symbol: String,
    pub mint: String,
    pub amount_base: i64,
    pub amount_lamports: i64,
    pub receipt_amount: i64,
    pub rate_liquidity: String,
    pub rate_receipt: String,
    pub narrative_id: Option<String>,
    pub status: String,
    pub deposit_signature: String,
    pub withdraw_signature: Option<String>,
    pub withdrawn_base: Option<i64>,
    pub created_at: i64,
    pub withdrawn_at: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
