//! Program state of crucible_pool.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "crucible_states")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub address: String,
    pub admin: String,
    pub keeper: String,
    pub authorized_sources: Json,
    pub epoch_duration_secs: i64,
    pub claim_window_secs: i64,
    /// The admin a two-step rotation waits on to accept.
    pub pending_admin: Option<String>,
    /// May veto a posted root besides the admin; null when there is none.
    pub guardian: Option<String>,
    /// The settings change waiting for the admin timelock (`change`, `proposed_at`).
    pub pending_change: Option<Json>,
    pub slot: i64,
    pub write_version: i64,
    pub closed: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

crate::account_table!(Entity);
