//! `retention`: deletes, for ever, the rows that anonymous calls grow once they are past their
//! retention period (unconfirmed prepared transactions, the shield probe log, partner
//! applications, finished jobs, used wallet signatures). One row (a singleton); run by
//! `domain::retention`, which states the periods.

use serde::{Deserialize, Serialize};

use super::{JobKind, PerpetualJob};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retention {}

impl JobKind for Retention {
    const NAME: &'static str = "retention";
}

impl PerpetualJob for Retention {
    const SINGLETON: &'static str = "retention";
}
