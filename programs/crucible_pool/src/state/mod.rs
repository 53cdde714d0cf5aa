//! Accounts owned by the crucible pool, one file each.

pub mod asset_pool;
pub mod claim_receipt;
pub mod crucible_state;
pub mod epoch;

pub use asset_pool::*;
pub use claim_receipt::*;
pub use crucible_state::*;
pub use epoch::*;
