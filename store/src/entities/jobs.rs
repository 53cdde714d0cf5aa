//! A unit of follow-up work in the durable queue.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "jobs")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub kind: String,
    /// What the job is about, when it is about one thing (a narrative's id for its settlement).
    pub subject: Option<String>,
    pub payload: Json,
    pub status: String,
    pub attempts: i32,
    pub run_at: i64,
    pub locked_until: Option<i64>,
    pub last_error: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    /// Set on a job meant to exist once (a perpetual job): unique, so a second enqueue of it
    /// revives the one row instead of adding another.
    pub singleton: Option<String>,
    /// How many times the job was leased: the token that fences a lease (a worker's outcome
    /// and renewals apply only while the row still holds the count its lease set).
    pub leases: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
