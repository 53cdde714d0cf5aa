//! An issued API key; only its SHA-256 is stored.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "api_keys")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub prefix: String,
    pub key_hash: String,
    pub tier: String,
    pub wallet: Option<String>,
    pub name: Option<String>,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
    pub last_used_at: Option<i64>,
    /// Registered by its caller (an agent's key), not issued by an operator: its requests also
    /// count against their address's budget for such keys.
    pub self_registered: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
