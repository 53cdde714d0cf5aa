//! `score_narrative`: compute a published narrative's score (0, pending, until then). Run by
//! `domain::narratives::scoring`.

use serde::{Deserialize, Serialize};

use super::JobKind;
use crate::values::NarrativeId;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreNarrative {
    pub narrative_id: NarrativeId,
}

impl JobKind for ScoreNarrative {
    const NAME: &'static str = "score_narrative";

    /// The narrative, so a recalculation can see its scoring already waits.
    fn subject(&self) -> Option<String> {
        Some(self.narrative_id.to_string())
    }
}
