//! One module per instruction (the timelocked admin changes and the four claims share one):
//! accounts struct plus handler.
#![allow(ambiguous_glob_reexports)]

pub mod admin_change;
pub mod back_shield;
pub mod claim;
pub mod close_shield_vote;
pub mod finalize_resolution;
pub mod forward_payout;
pub mod forward_seam_share;
pub mod harvest_yield;
pub mod initialize_program;
pub mod open_coverage;
pub mod pause_program;
pub mod refund_all;
pub mod submit_oracle_resolution;
pub mod trigger_timeout_refund;

pub use admin_change::*;
pub use back_shield::*;
pub use claim::*;
pub use close_shield_vote::*;
pub use finalize_resolution::*;
pub use forward_payout::*;
pub use forward_seam_share::*;
pub use harvest_yield::*;
pub use initialize_program::*;
pub use open_coverage::*;
pub use pause_program::*;
pub use refund_all::*;
pub use submit_oracle_resolution::*;
pub use trigger_timeout_refund::*;
