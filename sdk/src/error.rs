//! Errors of the sdk's decoding and conversion functions.

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SdkError {
    #[error("market_id does not end in 16 zero bytes, so it is not a UUID-derived id")]
    MarketIdNotUuid,
    #[error("invalid UUID: {0}")]
    InvalidUuid(String),
    #[error("invalid base64 transaction: {0}")]
    InvalidBase64(String),
    #[error("invalid transaction bytes: {0}")]
    InvalidTransaction(String),
}
