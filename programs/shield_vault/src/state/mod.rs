//! Accounts owned by shield_vault, one file each.

pub mod backing;
pub mod coverage;
pub mod program_state;
pub mod vote;

pub use backing::*;
pub use coverage::*;
pub use program_state::*;
pub use vote::*;
