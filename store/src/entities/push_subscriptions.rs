//! A browser's Web Push subscription (spec 4.11): where to send, and the keys its messages are
//! encrypted to. One row per endpoint; subscribing the endpoint again replaces it.

use sea_orm::entity::prelude::*;

#[derive(Clone, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "push_subscriptions")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub wallet: String,
    pub endpoint: String,
    /// base64url of the browser's uncompressed P-256 public key.
    pub p256dh: String,
    /// base64url of the browser's 16-byte authentication secret.
    pub auth: String,
    pub created_at: i64,
    pub updated_at: i64,
}

/// The endpoint is a capability URL and the auth secret a key: neither is printed.
impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("push_subscriptions::Model")
            .field("id", &self.id)
            .field("wallet", &self.wallet)
            .finish_non_exhaustive()
    }
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
