//! One oracle verdict as an agent submitted it (append-only).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "oracle_audit_log")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub narrative_id: String,
    pub agent_id: String,
    /// The verdict: true when the thesis came true.
    pub resolution: bool,
    pub confidence: f64,
    /// At most 1,000 characters.
    pub evidence: String,
    pub created_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
