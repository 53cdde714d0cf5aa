//! Accounts owned by binary_vault, one file each.

pub mod backing;
pub mod config;
pub mod dispute;
pub mod market;
pub mod oracle_vote;
pub mod program_state;

pub use backing::*;
pub use config::*;
pub use dispute::*;
pub use market::*;
pub use oracle_vote::*;
pub use program_state::*;
