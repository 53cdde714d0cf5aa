//! The product's workflows and rules, one module per area. Handlers in `routes/` call these;
//! they call the chain runner, the store, the providers and the job queue below them.

pub mod agents;
pub mod binary;
pub mod human;
pub mod keys;
pub mod markets;
pub mod narratives;
pub mod nft;
pub mod profiles;
pub mod quota;
pub mod shield;
pub mod system;
