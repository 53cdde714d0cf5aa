//! The ledger side of the service: the `Ledger` trait and its JSON-RPC client, the halt rule,
//! what the ledger says of a wallet (loyalty-token holdings, SAS attestations), the one
//! prepare → confirm runner every money flow goes through (and the wallet blocks it enforces),
//! the service's own signed transactions, and the jobs that act on the chain (refreshing
//! changed accounts, settling resolved narratives).

pub mod attestations;
pub mod blocks;
pub mod confirm;
pub mod halts;
pub mod holdings;
pub mod ledger;
pub mod mints;
pub mod prepared_writer;
pub mod refresh;
pub mod seeded;
pub mod send;
pub mod settlement;
pub mod tier_nfts;
pub mod venues;

pub use confirm::{Admission, Chain, ConfirmWait, Confirmed, MoneyFlow, Prepared, Unsigned};
