//! `narrative-api`: the `/v1` REST service. It reads what the indexer stored, keeps the api's
//! own records (halt flags, shield terms, partner applications), and renders every answer in the
//! shapes of the specification (section 4.0 and 7).

pub mod agent_webhooks;
pub mod ai;
pub mod app;
pub mod auth;
pub mod background;
pub mod binary_backing;
pub mod client;
pub mod config;
pub mod conviction;
pub mod creator;
pub mod error;
pub mod followups;
pub mod generation;
pub mod human;
pub mod indexed;
pub mod jobs;
pub mod keys;
pub mod ledger;
pub mod limits;
pub mod market_creation;
pub mod metrics;
pub mod narrative_generation;
pub mod narrative_publish;
pub mod narrative_scoring;
pub mod originality;
pub mod polish;
pub mod prepared;
pub mod price;
pub mod probe_log;
pub mod rate_limit;
pub mod review;
pub mod routes;
pub mod settlement;
pub mod shield_backing;
pub mod signature;
pub mod state;
pub mod system;
pub mod time;
pub mod validate;

pub use app::build_app;
pub use config::Config;
pub use state::{AppState, Providers};
