//! The review a thesis gets before it is published (spec 4.1 publish): moderation (422
//! `content_flagged`) and how uncertain its outcome is (422 `narrative_too_obvious` below the
//! launch threshold). An OpenAI-compatible model when configured, otherwise a local reviewer:
//! a word list for moderation and a transparent heuristic for uncertainty, both deterministic.

use anyhow::Context;

use crate::providers::chat::ChatModel;

#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    /// Moderation categories the thesis falls under; empty when it is acceptable.
    pub flagged: Vec<String>,
    /// 0 (the outcome is already certain) to 100 (a coin flip).
    pub uncertainty: f64,
}

#[async_trait::async_trait]
pub trait Reviewer: Send + Sync {
    async fn review(&self, thesis: &str) -> anyhow::Result<Review>;
}

pub const INSTRUCTION: &str = "You review theses for a YES/NO prediction market. Answer only a \
JSON object {\"flagged\": [...], \"uncertainty\": n}. \"flagged\" lists the categories of \
prohibited content the thesis contains, from: violence, death_market, hate, harassment, privacy, \
sexual, self_harm, illegal; it is empty when the thesis is acceptable. \"uncertainty\" is a \
number from 0 to 100: 0 when the outcome is already known, certain or true by definition, 100 \
when informed people would split evenly.";

/// An OpenAI-compatible chat model answering [`INSTRUCTION`].
pub struct ChatReviewer(pub ChatModel);

#[async_trait::async_trait]
impl Reviewer for ChatReviewer {
    async fn review(&self, thesis: &str) -> anyhow::Result<Review> {
        let answer = self.0.complete_json(INSTRUCTION, thesis).await?;
        let flagged = answer["flagged"]
            .as_array()
            .context("the review has no flagged list")?
            .iter()
            .filter_map(|c| c.as_str().map(str::to_owned))
            .collect();
        let uncertainty = answer["uncertainty"]
            .as_f64()
            .filter(|u| u.is_finite())
            .context("the review has no uncertainty")?
            .clamp(0.0, 100.0);
        Ok(Review {
            flagged,
            uncertainty,
        })
    }
}

/// Whole words that flag a thesis, by moderation category.
const FLAGGED_WORDS: [(&str, &[&str]); 4] = [
    (
        "violence",
        &[
            "assassinate",
            "assassinated",
            "assassination",
            "murder",
            "murdered",
            "bombing",
            "massacre",
            "behead",
        ],
    ),
    ("death_market", &["die", "dies", "died", "dead", "death"]),
    ("self_harm", &["suicide", "self-harm"]),
    ("privacy", &["dox", "doxx", "doxxed", "doxxing"]),
];

/// Phrases that make a thesis certain or true by definition.
const CERTAINTY_PHRASES: [&str; 10] = [
    "will exist",
    "will still exist",
    "will continue to exist",
    "sun will rise",
    "guaranteed",
    "definitely",
    "certainly",
    "inevitably",
    "100%",
    "or not",
];

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Deterministic review for development and tests.
pub struct LocalReviewer;

#[async_trait::async_trait]
impl Reviewer for LocalReviewer {
    async fn review(&self, thesis: &str) -> anyhow::Result<Review> {
        Ok(review_locally(thesis))
    }
}

/// Moderation by [`FLAGGED_WORDS`]; uncertainty starts at 50, loses 35 per certainty phrase,
/// gains 15 for a measurable number and 15 for a time bound, within 0–100.
pub fn review_locally(thesis: &str) -> Review {
    let lower = thesis.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '%'))
        .filter(|w| !w.is_empty())
        .collect();
    let flagged = FLAGGED_WORDS
        .iter()
        .filter(|(_, terms)| words.iter().any(|w| terms.contains(w)))
        .map(|(category, _)| (*category).to_owned())
        .collect();
    let certain = CERTAINTY_PHRASES
        .iter()
        .filter(|p| lower.contains(*p))
        .count() as f64;
    let measurable = thesis.chars().any(|c| c.is_ascii_digit());
    let time_bound = words.iter().any(|w| {
        MONTHS.contains(w)
            || ["by", "before", "until", "q1", "q2", "q3", "q4"].contains(w)
            || (w.len() == 4 && w.starts_with("20") && w.chars().all(|c| c.is_ascii_digit()))
    });
    let uncertainty = 50.0 - 35.0 * certain
        + if measurable { 15.0 } else { 0.0 }
        + if time_bound { 15.0 } else { 0.0 };
    Review {
        flagged,
        uncertainty: uncertainty.clamp(0.0, 100.0),
    }
}

#[cfg(test)]
mod tests {
    use super::review_locally;

    #[test]
    fn a_dated_measurable_claim_is_uncertain_and_clean() {
        let review = review_locally("SOL closes above $300 on Coinbase before 30 June 2027");
        assert!(review.flagged.is_empty());
        assert_eq!(review.uncertainty, 80.0);
    }

    #[test]
    fn certainty_and_tautology_are_obvious() {
        assert_eq!(
            review_locally("Bitcoin will still exist tomorrow").uncertainty,
            15.0
        );
        assert_eq!(
            review_locally("ETH goes up or not, guaranteed").uncertainty,
            0.0
        );
        assert_eq!(review_locally("Rates are cut").uncertainty, 50.0);
    }

    #[test]
    fn moderation_matches_whole_words_by_category() {
        let review = review_locally("The senator is assassinated and dies by June");
        assert_eq!(review.flagged, vec!["violence", "death_market"]);
        // "studied" contains "die" but is not the word.
        assert!(review_locally("Studied diet trial reports results in 2027")
            .flagged
            .is_empty());
        assert_eq!(
            review_locally("Someone gets doxxed").flagged,
            vec!["privacy"]
        );
    }
}
