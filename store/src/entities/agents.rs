//! An agent (spec 2.7): a bot with its own API key, reading the feed and submitting verdicts.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "agents")]
pub struct Model {
    /// `ag_` followed by 32 hex characters.
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub name: String,
    pub description: Option<String>,
    /// A label unless `wallet_proven`: the wallet signed the registration only then.
    pub wallet_address: String,
    /// The `api_keys` row issued at registration.
    pub api_key_id: String,
    pub created_at: i64,
    /// The wallet signed its registration (a wallet proof); only a proven wallet counts under
    /// the `ORACLE_AGENT_WALLETS` bootstrap.
    pub wallet_proven: bool,
    /// When an operator last granted this agent oracle authority.
    pub oracle_granted_at: Option<i64>,
    /// That operator's wallet.
    pub oracle_granted_by: Option<String>,
    /// When an operator revoked it: no authority while set (bootstrap included), until a new
    /// grant clears it.
    pub oracle_revoked_at: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
