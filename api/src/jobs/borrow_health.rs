//! `borrow_health`: watches open borrows for ever: re-reads their loans on an interval and when
//! the price moves, alerts their wallets as their health factor falls through spec 3.4's levels,
//! and closes the records of borrows the lender closed. One row (a singleton); run by
//! `domain::borrow::alerts`.

use serde::{Deserialize, Serialize};

use super::{JobKind, PerpetualJob};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BorrowHealth {}

impl JobKind for BorrowHealth {
    const NAME: &'static str = "borrow_health";
}

impl PerpetualJob for BorrowHealth {
    const SINGLETON: &'static str = "borrow_health";
}
