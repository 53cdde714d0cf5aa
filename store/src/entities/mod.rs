//! sea-orm entities, one per table (see the `migration` crate for the schema).

pub mod backings;
pub mod binary_configs;
pub mod binary_program_states;
pub mod crucible_asset_pools;
pub mod crucible_claims;
pub mod crucible_epochs;
pub mod crucible_states;
pub mod disputes;
pub mod indexer_checkpoints;
pub mod markets;
pub mod oracle_votes;
pub mod program_events;
pub mod raw_accounts;
pub mod shield_backings;
pub mod shield_coverages;
pub mod shield_programs;
pub mod shield_votes;
