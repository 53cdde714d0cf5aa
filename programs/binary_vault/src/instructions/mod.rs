//! One module per instruction (admin settings share one): accounts struct plus handler.
#![allow(ambiguous_glob_reexports)]

pub mod admin;
pub mod approve_market;
pub mod back_market;
pub mod back_market_spl;
pub mod claim;
pub mod claim_spl;
pub mod close_oracle_vote;
pub mod create_market;
pub mod create_market_spl;
pub mod finalize_resolution;
pub mod forward_crucible_share;
pub mod forward_crucible_share_spl;
pub mod forward_dispute_bond;
pub mod initialize;
pub mod lapse_dispute;
pub mod resolve_dispute;
pub mod submit_oracle_resolution;
pub mod trigger_timeout_refund;
pub mod yield_scaffold;

pub use admin::*;
pub use approve_market::*;
pub use back_market::*;
pub use back_market_spl::*;
pub use claim::*;
pub use claim_spl::*;
pub use close_oracle_vote::*;
pub use create_market::*;
pub use create_market_spl::*;
pub use finalize_resolution::*;
pub use forward_crucible_share::*;
pub use forward_crucible_share_spl::*;
pub use forward_dispute_bond::*;
pub use initialize::*;
pub use lapse_dispute::*;
pub use resolve_dispute::*;
pub use submit_oracle_resolution::*;
pub use trigger_timeout_refund::*;
pub use yield_scaffold::*;
