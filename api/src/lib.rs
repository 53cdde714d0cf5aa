//! `narrative-api`: the `/v1` REST service. It reads what the indexer stored, keeps the api's
//! own records (halt flags, shield terms, partner applications), and renders every answer in the
//! shapes of the specification (section 4.0 and 7).

pub mod app;
pub mod auth;
pub mod client;
pub mod config;
pub mod error;
pub mod keys;
pub mod limits;
pub mod metrics;
pub mod probe_log;
pub mod rate_limit;
pub mod routes;
pub mod signature;
pub mod state;
pub mod system;
pub mod time;
pub mod validate;

pub use app::build_app;
pub use config::Config;
pub use state::AppState;
