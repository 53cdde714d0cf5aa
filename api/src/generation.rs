//! Drafting a narrative from a topic (spec 4.1 generate), run by the job queue: an
//! OpenAI-compatible model when configured, otherwise a local drafter that turns the topic into
//! a dated YES/NO thesis with resolution rules.

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::ai::ChatModel;
use crate::routes::narratives::CATEGORIES;

/// What a generation produces: enough to call prepare-mint and publish.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Draft {
    pub title: String,
    pub thesis: String,
    pub category: String,
    pub resolution_source: String,
    pub criteria: String,
}

#[async_trait::async_trait]
pub trait Generator: Send + Sync {
    /// A draft about `topic`, in `category` when given, resolving by `deadline` (ISO date).
    async fn draft(
        &self,
        topic: &str,
        category: Option<&str>,
        deadline: &str,
    ) -> anyhow::Result<Draft>;
}

pub const INSTRUCTION: &str = "You write theses for a YES/NO prediction market. From the user's \
topic, answer only a JSON object {\"title\", \"thesis\", \"category\", \"resolution_source\", \
\"criteria\"}: a short title; one falsifiable YES/NO statement that resolves by the deadline \
given; the category, one of the listed ones; the public source that will settle it; and the \
exact criteria for YES. Write in the topic's language.";

/// An OpenAI-compatible chat model answering [`INSTRUCTION`].
pub struct ChatGenerator(pub ChatModel);

#[async_trait::async_trait]
impl Generator for ChatGenerator {
    async fn draft(
        &self,
        topic: &str,
        category: Option<&str>,
        deadline: &str,
    ) -> anyhow::Result<Draft> {
        let user = format!(
            "Topic: {topic}\nDeadline: {deadline}\nCategory: {}\nCategories: {}",
            category.unwrap_or("choose one"),
            CATEGORIES.join(", ")
        );
        let answer = self.0.complete_json(INSTRUCTION, &user).await?;
        let mut draft: Draft =
            serde_json::from_value(answer).context("the draft misses a field")?;
        draft.category = draft.category.trim().to_ascii_uppercase();
        anyhow::ensure!(
            CATEGORIES.contains(&draft.category.as_str()),
            "the model chose an unknown category {}",
            draft.category
        );
        anyhow::ensure!(!draft.thesis.trim().is_empty(), "the draft has no thesis");
        Ok(draft)
    }
}

/// Deterministic drafts for development and tests.
pub struct LocalGenerator;

#[async_trait::async_trait]
impl Generator for LocalGenerator {
    async fn draft(
        &self,
        topic: &str,
        category: Option<&str>,
        deadline: &str,
    ) -> anyhow::Result<Draft> {
        Ok(draft_locally(topic, category, deadline))
    }
}

const TITLE_CHARS: usize = 80;

pub fn draft_locally(topic: &str, category: Option<&str>, deadline: &str) -> Draft {
    let claim = crate::polish::tidy(topic);
    let claim = claim.trim_end_matches(['.', '?', '!', '。']);
    let title: String = claim.chars().take(TITLE_CHARS).collect();
    Draft {
        thesis: format!("{claim} before {deadline}."),
        category: category
            .map(str::to_owned)
            .unwrap_or_else(|| crate::originality::suggest_category(topic)),
        resolution_source: "Public primary sources reporting the event, as cited in the \
                            resolving oracle's evidence."
            .into(),
        criteria: format!(
            "YES if \"{claim}\" is true at any time before {deadline} 23:59:59 UTC; NO otherwise."
        ),
        title,
    }
}

#[cfg(test)]
mod tests {
    use super::draft_locally;

    #[test]
    fn the_local_draft_dates_the_claim_and_suggests_a_category() {
        let draft = draft_locally("  sol flips eth by market cap ", None, "2027-01-31");
        assert_eq!(draft.title, "Sol flips eth by market cap");
        assert_eq!(
            draft.thesis,
            "Sol flips eth by market cap before 2027-01-31."
        );
        assert_eq!(draft.category, "MARKET");
        assert!(draft.criteria.contains("before 2027-01-31 23:59:59 UTC"));
        let pinned = draft_locally("the fed cuts rates", Some("MACRO"), "2027-03-01");
        assert_eq!(pinned.category, "MACRO");
    }
}
