//! One attempt to deliver an event to an agent's webhook.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_deliveries")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub agent_id: String,
    pub event: String,
    pub url: String,
    /// The `deliver_webhook` job (one per event and agent; its attempts are the retries).
    pub job_id: i64,
    pub attempt: i32,
    /// The receiver's HTTP status, when it answered.
    pub status_code: Option<i32>,
    pub error: Option<String>,
    pub created_at: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
