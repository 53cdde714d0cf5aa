//! narrative-store: the indexed state of the programs, as sea-orm entities over one schema that
//! runs on SQLite (the embedded default) and Postgres, plus the writes the indexer makes and the
//! reads the api makes.

pub mod accounts;
pub mod batch;
mod clock;
pub mod connect;
pub mod csv;
pub mod entities;
pub mod error;
pub mod freshness;
pub mod indexed;
pub mod lease;
mod pg_bulk;
mod prepared;
pub mod rows;
pub mod sql;
#[cfg(feature = "test-util")]
pub mod testing;
mod writer;

pub use csv::csv_rows;
pub use prepared::{PreparedBatch, WriteStats};

pub use batch::{AccountUpdate, Batch, Closure, EventRecord};
pub use connect::{Store, DEFAULT_SQLITE_URL};
pub use error::StoreError;
pub use lease::Lease;
pub use rows::AccountRow;
