//! The schema of the indexed store, one migration per file (sea-orm names a migration after its
//! file). The same migrations run on SQLite (embedded default) and Postgres.
//!
//! Every table that mirrors an on-chain account has the account's address as primary key and
//! the `(slot, write_version)` of the update it was last written from, so that an older update
//! can never overwrite a newer one, plus a `closed` flag. Amounts are BIGINT: lamports always fit
//! (total supply < 2^63) and SPL amounts are checked on the way in; u128 share counts are TEXT.

pub use sea_orm_migration::prelude::*;

mod columns;
mod m20261121_000001_binary_tables;
mod m20261121_000002_crucible_tables;
mod m20261121_000003_shield_tables;
mod m20261121_000004_indexer_tables;
mod m20261121_000005_api_tables;
mod m20261121_000006_agents_narratives;
mod m20261121_000007_oracle_audit_log;
mod m20261121_000008_agent_webhooks;
mod m20261121_000009_narrative_groups;
mod m20261121_000010_narrative_publishing;
mod m20261121_000011_job_subjects;
mod m20261123_000012_spl_minimum_per_mint;
mod m20261123_000013_indexer_leases;
mod m20261123_000014_indexed_chain_fields;
mod m20261124_000015_echo_pool;
mod m20261124_000016_engagement;
mod m20261124_000017_notifications;
mod m20261124_000018_read_models;
mod m20261124_000019_web_push;
mod m20261124_000020_kyc;
mod m20261124_000021_verifications;
mod m20261125_000022_tier_nfts;
mod m20261125_000023_admin_actions;
mod m20261125_000024_shield_blocked_ips;
mod m20261126_000025_probe_log_refusals;
mod m20261127_000026_wallet_proofs;
mod m20261127_000027_oracle_grants;
mod m20261127_000029_retention_and_leaderboards;
mod m20261127_000030_webhook_signing_secrets;
mod m20261128_000031_governance_fields;
mod m20261129_000032_defi_positions;
mod m20261130_000033_borrow;
mod m20261201_000034_p0_positions;
mod m20261202_000035_unproven_agent_keys;
mod m20261203_000036_job_leases;
mod m20261203_000037_prepared_blockhash;
mod m20261204_000038_prepared_wallet_index;
mod m20261205_000039_borrow_landed_slot;
mod m20261206_000040_self_registered_keys;
mod m20261207_000041_mint_status_index;
mod m20261208_000042_forwarded_payouts;

pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261121_000001_binary_tables::Migration),
            Box::new(m20261121_000002_crucible_tables::Migration),
            Box::new(m20261121_000003_shield_tables::Migration),
            Box::new(m20261121_000004_indexer_tables::Migration),
            Box::new(m20261121_000005_api_tables::Migration),
            Box::new(m20261121_000006_agents_narratives::Migration),
            Box::new(m20261121_000007_oracle_audit_log::Migration),
            Box::new(m20261121_000008_agent_webhooks::Migration),
            Box::new(m20261121_000009_narrative_groups::Migration),
            Box::new(m20261121_000010_narrative_publishing::Migration),
            Box::new(m20261121_000011_job_subjects::Migration),
            Box::new(m20261123_000012_spl_minimum_per_mint::Migration),
            Box::new(m20261123_000013_indexer_leases::Migration),
            Box::new(m20261123_000014_indexed_chain_fields::Migration),
            Box::new(m20261124_000015_echo_pool::Migration),
            Box::new(m20261124_000016_engagement::Migration),
            Box::new(m20261124_000017_notifications::Migration),
            Box::new(m20261124_000018_read_models::Migration),
            Box::new(m20261124_000019_web_push::Migration),
            Box::new(m20261124_000020_kyc::Migration),
            Box::new(m20261124_000021_verifications::Migration),
            Box::new(m20261125_000022_tier_nfts::Migration),
            Box::new(m20261125_000023_admin_actions::Migration),
            Box::new(m20261125_000024_shield_blocked_ips::Migration),
            Box::new(m20261126_000025_probe_log_refusals::Migration),
            Box::new(m20261127_000026_wallet_proofs::Migration),
            Box::new(m20261127_000027_oracle_grants::Migration),
            Box::new(m20261127_000029_retention_and_leaderboards::Migration),
            Box::new(m20261127_000030_webhook_signing_secrets::Migration),
            Box::new(m20261128_000031_governance_fields::Migration),
            Box::new(m20261129_000032_defi_positions::Migration),
            Box::new(m20261130_000033_borrow::Migration),
            Box::new(m20261201_000034_p0_positions::Migration),
            Box::new(m20261202_000035_unproven_agent_keys::Migration),
            Box::new(m20261203_000036_job_leases::Migration),
            Box::new(m20261203_000037_prepared_blockhash::Migration),
            Box::new(m20261204_000038_prepared_wallet_index::Migration),
            Box::new(m20261205_000039_borrow_landed_slot::Migration),
            Box::new(m20261206_000040_self_registered_keys::Migration),
            Box::new(m20261207_000041_mint_status_index::Migration),
            Box::new(m20261208_000042_forwarded_payouts::Migration),
        ]
    }
}
