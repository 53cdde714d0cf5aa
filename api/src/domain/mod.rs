//! The product's workflows and rules, one module per area. Handlers in `routes/` call these;
//! they call the chain runner, the store, the providers and the job queue below them.

pub mod admin;
pub mod agents;
pub mod binary;
pub mod borrow;
pub mod defi;
pub mod echo;
pub mod human;
pub mod keys;
pub mod kyc;
pub mod markets;
pub mod missions;
pub mod narratives;
pub mod nft;
pub mod notifications;
pub mod p0;
pub mod points;
pub mod profiles;
pub mod quota;
pub mod retention;
pub mod shield;
pub mod system;
pub mod terms;
pub mod users;
pub mod verify;
pub mod waitlist;
pub mod wallet_proof;
