//! An agent's webhook: one URL per agent and the events it wants.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "agent_webhooks")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub agent_id: String,
    pub url: String,
    /// Array of event names (`narrative.created`, `narrative.resolved`).
    pub events: Json,
    pub created_at: i64,
    /// The Standard Webhooks secret deliveries are signed with (`whsec_…`), random per
    /// registration; none for webhooks registered before secrets were random (not delivered).
    pub signing_secret: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
