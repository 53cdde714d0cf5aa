//! narrative-sdk: the off-chain twin of binary_vault, crucible_pool and shield_vault.
//!
//! Every PDA, instruction layout, account decoder and event decoder the api, the indexer, the
//! tests and the scripts need lives here and is built from the programs' own types, so nothing
//! outside this crate derives an address or lays out an instruction by hand.

pub mod binary;
pub mod crucible;
pub mod decode;
pub mod derive;
pub mod error;
pub mod market_id;
pub mod memo;
pub mod merkle;
pub mod pda;
pub mod shield;
pub mod tx;

pub use anchor_lang::prelude::Pubkey;
pub use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
pub use binary_vault;
pub use crucible_pool;
pub use error::SdkError;
pub use shield_vault;
pub use vault_common;

/// Program ids, as declared by the programs.
pub mod ids {
    pub use binary_vault::ID as BINARY_VAULT;
    pub use crucible_pool::ID as CRUCIBLE_POOL;
    pub use shield_vault::ID as SHIELD_VAULT;
}
