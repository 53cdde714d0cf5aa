//! One scoring of a narrative: the score and the two measures it was computed from.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "narrative_score_history")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub narrative_id: String,
    pub score: f64,
    /// 0–100: 100 × (1 − highest similarity to another published thesis).
    pub originality: f64,
    /// 0–100: how uncertain the outcome is, from the thesis review.
    pub uncertainty: f64,
    pub recorded_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
