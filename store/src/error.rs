//! Errors of the store.

use sea_orm::DbErr;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Db(#[from] DbErr),
    /// An on-chain number that the schema's BIGINT cannot hold.
    #[error("{field} = {value} does not fit in a signed 64-bit column")]
    OutOfRange { field: &'static str, value: u128 },
    #[error("cannot create the database directory {path}: {source}")]
    Directory {
        path: String,
        source: std::io::Error,
    },
}
