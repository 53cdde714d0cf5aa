//! The ledger side of the service: the `Ledger` trait and its JSON-RPC client, the halt rule,
//! the one prepare → confirm runner every money flow goes through, and the jobs that act on the
//! chain (refreshing changed accounts, settling resolved narratives).

pub mod confirm;
pub mod halts;
pub mod ledger;
pub mod refresh;
pub mod settlement;

pub use confirm::{Chain, ConfirmWait, MoneyFlow, Prepared, Unsigned};
