//! `narrative-api`: the `/v1` REST service. It reads what the indexer stored, keeps the api's
//! own records, prepares transactions for wallets and verifies them on the ledger, and renders
//! every answer in the shapes of the specification (sections 4 and 7).
//!
//! Layers, top to bottom (each imports only from those below it):
//!
//! | module | role |
//! |---|---|
//! | `app`, `background` | composition: the HTTP application, the worker and the indexer |
//! | `routes` | poem-openapi handlers and their request/response types |
//! | `http` | middleware, error rendering, auth schemes, the limiter, the served document |
//! | `domain` | the workflows and rules of each product area |
//! | `state` | the context domain code receives: the chain, the providers, the settings |
//! | `chain` | the ledger, the prepare → confirm runner, settlement |
//! | `jobs` | the durable queue, its worker, one typed job kind per file |
//! | `providers` | outside services behind traits (AI, human verification, prices, outbound) |
//! | `config`, `limits` | settings, rate-limit counters |
//! | `freshness` | the generations barrier and the memos of values read under it |
//! | `values`, `error`, `clock` | typed boundary values, the one error, injected time |
//!
//! `api/tests/layout.rs` holds the exact table and fails when a module names one above it.

// The middleware stack nests deep enough to pass the compiler's default query depth.
#![recursion_limit = "256"]

pub mod app;
pub mod background;
pub mod chain;
pub mod clock;
pub mod config;
pub mod domain;
pub mod error;
pub mod freshness;
pub mod http;
pub mod jobs;
pub mod limits;
pub mod providers;
pub mod routes;
pub mod state;
pub mod values;

pub use app::build_app;
pub use config::Config;
pub use state::{AppState, Providers};

/// The allocator the service's binaries declare as their global one (the library leaves the
/// choice to them): glibc's malloc took about a seventh of the deposit prepare's server time,
/// in the consolidation and free-list work of many small, short-lived allocations across two
/// worker threads; mimalloc's thread-local pages serve them for less.
pub type ServiceAllocator = mimalloc::MiMalloc;

/// [`ServiceAllocator`]'s value, for `#[global_allocator]`.
pub const SERVICE_ALLOCATOR: ServiceAllocator = mimalloc::MiMalloc;
