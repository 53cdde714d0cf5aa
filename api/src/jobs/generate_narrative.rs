//! `generate_narrative`: draft a narrative from a topic with the AI provider, for `generate`.
//! Run by `domain::narratives::drafts`.

use serde::{Deserialize, Serialize};

use super::JobKind;
use crate::values::GenerationId;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GenerateNarrative {
    pub generation_id: GenerationId,
    /// The draft's resolution window.
    pub deadline_days: i64,
}

impl JobKind for GenerateNarrative {
    const NAME: &'static str = "generate_narrative";
}
