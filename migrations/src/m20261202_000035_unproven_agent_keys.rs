//! An agent's key is filed under its wallet only when the registration proved the wallet
//! (since 2026-11-29). Keys of agents registered before, without a proof, were filed under the
//! wallet they merely named: listed publicly as that wallet's keys and revocable by its holder.
//! They are filed under no wallet now (the operator revokes them; their agents are unchanged).

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.get_connection()
            .execute_unprepared(
                "UPDATE api_keys SET wallet = NULL \
                 WHERE id IN (SELECT api_key_id FROM agents WHERE NOT wallet_proven)",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, _: &SchemaManager) -> Result<(), DbErr> {
        // Which wallet each key named is still on its agent; nothing to undo by schema.
        Ok(())
    }
}
