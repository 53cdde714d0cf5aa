//! A narrative (spec 2.1): a YES/NO thesis settled by the binary_vault market whose `market_id`
//! (64 hex characters) is derived from this UUID. Backing totals come from the indexed market.
//! Times are unix seconds; `score` 0 means scoring is pending.

use sea_orm::entity::prelude::*;

/// The `status` of a narrative an operator hid: in no public read.
pub const HIDDEN: &str = "hidden";

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "narratives")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub market_id: String,
    pub wallet_address: String,
    pub title: String,
    pub thesis: String,
    pub category: String,
    pub sub_category: Option<String>,
    pub asset_tag: Option<String>,
    pub narrative_type: String,
    pub is_protocol_narrative: bool,
    pub protocol_narrative_label: Option<String>,
    pub status: String,
    /// `open`, `live`, `pending`, `resolved_true`, `resolved_false`.
    pub oracle_status: String,
    pub score: f64,
    pub uncertainty_score: f64,
    pub deadline_at: i64,
    /// `SHORT` or `LONG`.
    pub deadline_tag: String,
    /// Set for a pre-market narrative: backing opens here.
    pub opens_at: Option<i64>,
    pub created_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
