//! A prepared narrative mint (spec 4.1 prepare-mint): the Yield market's creation plus the
//! publish fee, waiting for `publish` to name its signature. `status` is `prepared` until a
//! publish succeeds, then `published`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "narrative_mints")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub narrative_id: String,
    /// The prepared transaction the wallet signs.
    pub prepared_id: String,
    pub wallet: String,
    pub deadline_days: i32,
    /// Unix seconds: the market's deadline.
    pub deadline_at: i64,
    /// The creator's locked YES backing, lamports.
    pub stake_lamports: i64,
    /// The treasury's share of the fee, lamports.
    pub treasury_lamports: i64,
    pub status: String,
    pub created_at: i64,
    pub published_at: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
