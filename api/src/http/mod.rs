//! HTTP plumbing around the routes: error rendering (the framework's failures and 405s in the
//! spec's envelopes), the auth schemes of spec 5, the limiter in front of every route, the
//! caller's address, metrics, the OpenAPI document as served, and the response cache of the hot
//! reads with its freshness barrier.

pub mod auth;
pub mod cache;
pub mod client_ip;
pub mod contract;
pub mod errors;
pub mod health;
pub mod metrics;
pub mod probe;
pub mod rate_limit;

/// Spec 8: request bodies are at most 1 MiB.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
