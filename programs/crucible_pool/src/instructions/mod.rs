//! One module per instruction: its accounts struct and its handler.
#![allow(ambiguous_glob_reexports)]

pub mod claim_sol;
pub mod claim_spl;
pub mod close_claim_receipt;
pub mod close_epoch;
pub mod deposit_sol;
pub mod deposit_spl;
pub mod init_sol_pool;
pub mod init_token_pool;
pub mod initialize;
pub mod rollover;
pub mod rotate_admin;
pub mod set_authorized_source;
pub mod update_settings;
pub mod veto_epoch_root;

pub use claim_sol::*;
pub use claim_spl::*;
pub use close_claim_receipt::*;
pub use close_epoch::*;
pub use deposit_sol::*;
pub use deposit_spl::*;
pub use init_sol_pool::*;
pub use init_token_pool::*;
pub use initialize::*;
pub use rollover::*;
pub use rotate_admin::*;
pub use set_authorized_source::*;
pub use update_settings::*;
pub use veto_epoch_root::*;
