//! Drafting a narrative from a topic (spec 4.1 generate), run by the job queue: an
//! OpenAI-compatible model when configured, otherwise a local drafter that turns the topic into
//! a dated YES/NO thesis with resolution rules.

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::providers::chat::ChatModel;
use crate::values::Category;

/// What a drafter produces: enough to call prepare-mint and publish once it has a category.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Draft {
    pub title: String,
    pub thesis: String,
    /// `None` when the drafter leaves the choice to its caller.
    pub category: Option<Category>,
    pub resolution_source: String,
    pub criteria: String,
}

#[async_trait::async_trait]
pub trait Generator: Send + Sync {
    /// A draft about `topic`, in `category` when given, resolving by `deadline` (ISO date).
    async fn draft(
        &self,
        topic: &str,
        category: Option<Category>,
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
        category: Option<Category>,
        deadline: &str,
    ) -> anyhow::Result<Draft> {
        let user = format!(
            "Topic: {topic}\nDeadline: {deadline}\nCategory: {}\nCategories: {}",
            category.map_or("choose one", Category::as_str),
            Category::ALL
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let answer = self.0.complete_json(INSTRUCTION, &user).await?;
        let text = |field: &str| {
            answer[field]
                .as_str()
                .map(str::to_owned)
                .with_context(|| format!("the draft has no {field}"))
        };
        let chosen = text("category")?.trim().to_ascii_uppercase();
        let chosen: Category = chosen
            .parse()
            .map_err(|_| anyhow::anyhow!("the model chose an unknown category {chosen}"))?;
        let draft = Draft {
            title: text("title")?,
            thesis: text("thesis")?,
            category: Some(category.unwrap_or(chosen)),
            resolution_source: text("resolution_source")?,
            criteria: text("criteria")?,
        };
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
        category: Option<Category>,
        deadline: &str,
    ) -> anyhow::Result<Draft> {
        Ok(draft_locally(topic, category, deadline))
    }
}

const TITLE_CHARS: usize = 80;

/// A dated thesis from the topic's own words; the category only when one was asked for.
pub fn draft_locally(topic: &str, category: Option<Category>, deadline: &str) -> Draft {
    let claim = crate::providers::polisher::tidy(topic);
    let claim = claim.trim_end_matches(['.', '?', '!', '。']);
    let title: String = claim.chars().take(TITLE_CHARS).collect();
    Draft {
        thesis: format!("{claim} before {deadline}."),
        category,
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
    use crate::values::Category;

    #[test]
    fn the_local_draft_dates_the_claim_and_keeps_the_asked_category() {
        let draft = draft_locally("  sol flips eth by market cap ", None, "2027-01-31");
        assert_eq!(draft.title, "Sol flips eth by market cap");
        assert_eq!(
            draft.thesis,
            "Sol flips eth by market cap before 2027-01-31."
        );
        assert_eq!(draft.category, None);
        assert!(draft.criteria.contains("before 2027-01-31 23:59:59 UTC"));
        let pinned = draft_locally("the fed cuts rates", Some(Category::Macro), "2027-03-01");
        assert_eq!(pinned.category, Some(Category::Macro));
    }
}
