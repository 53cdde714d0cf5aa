//! narrative-indexer: the programs' accounts and events, from a source (Yellowstone gRPC, or
//! JSON-RPC polling as the fallback any validator supports) through a bounded channel, decoding
//! and batching, into the store: one database transaction per batch, checkpoint included. One
//! indexer per checkpoint writes (a lease); the others stand by.

pub mod config;
pub mod events;
pub mod leader;
pub mod metrics;
pub mod pipeline;
pub mod redact;
pub mod source;

pub use leader::{run_as_leader, LeaseConfig};
pub use pipeline::{run_pipeline, PipelineConfig};
pub use source::{Envelope, ResumePoint, Source, SourceMessage};
