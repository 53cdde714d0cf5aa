//! `announce`: writes an operator's announcement into the feed of every wallet of its audience,
//! a page of wallets per database transaction, so a large audience never holds one long write;
//! a run repeated after a crash writes only what is missing (each notification is unique). Run
//! by `domain::notifications::announcements`.

use serde::{Deserialize, Serialize};

use super::JobKind;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Announce {
    pub announcement_id: i64,
}

impl JobKind for Announce {
    const NAME: &'static str = "announce";

    fn subject(&self) -> Option<String> {
        Some(self.announcement_id.to_string())
    }
}
