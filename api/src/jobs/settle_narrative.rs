//! `settle_narrative`: settle a resolved narrative on chain (the service's oracle vote, then
//! `finalize_resolution` once the hold has passed). Run by `chain::settlement`; looked up by the
//! narrative for its settlement status.

use serde::{Deserialize, Serialize};

use super::JobKind;
use crate::values::{MarketRef, NarrativeId};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettleNarrative {
    pub narrative_id: NarrativeId,
    /// The narrative's market (written as its 32-byte id in hex).
    pub market_id: MarketRef,
    /// The verdict: true for YES.
    pub outcome: bool,
    /// The verdict's confidence, 7000–10000.
    pub confidence_bps: u16,
}

impl JobKind for SettleNarrative {
    const NAME: &'static str = "settle_narrative";

    fn subject(&self) -> Option<String> {
        Some(self.narrative_id.to_string())
    }
}
