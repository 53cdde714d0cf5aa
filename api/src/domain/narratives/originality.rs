//! How original a thesis is against the ones already published: cosine similarity of word
//! counts (lower-cased words of two letters or more, common English words left out), and a
//! category suggested by the most similar theses, or by keywords when nothing is close.

use std::collections::HashMap;

use narrative_store::entities::narratives;
use sea_orm::{EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::domain::narratives::feed::visible;
use crate::error::ApiError;
use crate::state::AppState;

/// How many published theses (the newest) a thesis is compared with.
pub const COMPARED_THESES: u64 = 5_000;

/// Words too common to tell theses apart.
const STOP_WORDS: [&str; 40] = [
    "the", "a", "an", "and", "or", "of", "to", "in", "on", "by", "for", "at", "be", "is", "are",
    "was", "will", "would", "before", "after", "than", "that", "this", "with", "its", "it", "as",
    "from", "into", "over", "under", "end", "more", "less", "least", "most", "not", "no", "yes",
    "has",
];

/// Keywords that point to a category when no published thesis is close.
const KEYWORDS: [(&str, &[&str]); 8] = [
    (
        "MARKET",
        &[
            "price", "btc", "bitcoin", "eth", "ether", "ethereum", "sol", "solana", "token", "ath",
            "market", "cap",
        ],
    ),
    (
        "ONCHAIN",
        &[
            "tvl",
            "validator",
            "validators",
            "onchain",
            "wallet",
            "wallets",
            "transactions",
            "fees",
            "staking",
            "protocol",
        ],
    ),
    (
        "SPORTS",
        &[
            "win",
            "wins",
            "league",
            "cup",
            "match",
            "season",
            "championship",
            "final",
            "team",
        ],
    ),
    (
        "POLITICAL",
        &[
            "election",
            "president",
            "senate",
            "vote",
            "parliament",
            "minister",
            "party",
        ],
    ),
    (
        "TECHNOLOGY",
        &[
            "launch", "release", "ship", "ships", "upgrade", "ai", "model", "chip", "software",
        ],
    ),
    (
        "MACRO",
        &[
            "inflation",
            "fed",
            "rates",
            "rate",
            "cpi",
            "gdp",
            "recession",
            "unemployment",
        ],
    ),
    (
        "CLIMATE",
        &[
            "temperature",
            "emissions",
            "carbon",
            "climate",
            "hurricane",
            "record",
            "heat",
        ],
    ),
    (
        "HEALTH",
        &["vaccine", "trial", "fda", "approval", "disease", "cases"],
    ),
];

pub fn words(text: &str) -> HashMap<String, u32> {
    let mut counts = HashMap::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 2 && !STOP_WORDS.contains(&w.as_str()))
    {
        *counts.entry(word).or_insert(0) += 1;
    }
    counts
}

/// Cosine similarity of two word counts, 0 (nothing shared) to 1 (the same words in the same
/// proportions).
pub fn cosine(a: &HashMap<String, u32>, b: &HashMap<String, u32>) -> f64 {
    let dot: f64 = a
        .iter()
        .filter_map(|(w, n)| b.get(w).map(|m| f64::from(*n) * f64::from(*m)))
        .sum();
    let norm = |v: &HashMap<String, u32>| {
        v.values()
            .map(|n| f64::from(*n).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let denominator = norm(a) * norm(b);
    if denominator == 0.0 {
        0.0
    } else {
        dot / denominator
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Originality {
    /// The highest similarity to a published thesis, 0 to 1.
    pub similarity: f64,
    /// 100 × (1 − similarity), rounded.
    pub score: f64,
    pub suggested_category: String,
}

/// Two theses this similar are taken as the same claim.
pub const DUPLICATE_AT: f64 = 0.8;
/// From this similarity the closest thesis's category is suggested.
const SUGGEST_FROM: f64 = 0.3;

/// `thesis` against `published` (thesis, category) pairs.
pub fn check<'a>(
    thesis: &str,
    published: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Originality {
    let mine = words(thesis);
    let mut best = (0.0f64, None::<&str>);
    for (other, category) in published {
        let similarity = cosine(&mine, &words(other));
        if similarity > best.0 {
            best = (similarity, Some(category));
        }
    }
    let suggested_category = match best {
        (s, Some(category)) if s >= SUGGEST_FROM => category.to_owned(),
        _ => by_keywords(&mine),
    };
    let similarity = (best.0 * 1_000.0).round() / 1_000.0;
    Originality {
        similarity,
        score: ((1.0 - best.0) * 100.0).round(),
        suggested_category,
    }
}

/// A thesis checked against the published ones, with a message for the author.
pub struct Checked {
    pub originality: Originality,
    pub message: &'static str,
}

/// Checks `thesis` against the most recent published theses an operator has not hidden: the
/// answer (a similarity, a category) is public, and would otherwise tell a caller guessing at
/// a hidden thesis how close the guess came.
pub async fn check_thesis(state: &AppState, thesis: &str) -> Result<Checked, ApiError> {
    let published: Vec<(String, String)> = narratives::Entity::find()
        .select_only()
        .column(narratives::Column::Thesis)
        .column(narratives::Column::Category)
        .filter(visible())
        .order_by_desc(narratives::Column::CreatedAt)
        .limit(COMPARED_THESES)
        .into_tuple()
        .all(state.store.db())
        .await?;
    let originality = check(
        thesis,
        published.iter().map(|(t, c)| (t.as_str(), c.as_str())),
    );
    let message = if originality.similarity >= DUPLICATE_AT {
        "a published narrative already makes this claim"
    } else if originality.similarity >= 0.5 {
        "close to a published narrative; sharpen what makes it different"
    } else {
        "original"
    };
    Ok(Checked {
        originality,
        message,
    })
}

/// The category whose keywords `text` uses most (`CONVICTION` when none).
pub fn suggest_category(text: &str) -> String {
    by_keywords(&words(text))
}

/// The category whose keywords the thesis uses most (`CONVICTION` when none).
fn by_keywords(words: &HashMap<String, u32>) -> String {
    KEYWORDS
        .iter()
        .map(|(category, keys)| {
            let hits: u32 = keys.iter().filter_map(|k| words.get(*k)).sum();
            (hits, *category)
        })
        .filter(|(hits, _)| *hits > 0)
        // Ties go to the first listed category.
        .fold(None::<(u32, &str)>, |best, (hits, category)| match best {
            Some((h, _)) if h >= hits => best,
            _ => Some((hits, category)),
        })
        .map_or_else(|| "CONVICTION".to_owned(), |(_, c)| c.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_theses_are_one_and_unrelated_ones_zero() {
        let a = words("SOL trades above $300 before June");
        assert!((cosine(&a, &a) - 1.0).abs() < 1e-12);
        assert_eq!(cosine(&a, &words("The Lakers win the championship")), 0.0);
        assert_eq!(cosine(&a, &words("")), 0.0);
    }

    #[test]
    fn a_reworded_claim_is_close_and_suggests_its_category() {
        let published = [
            ("SOL trades above $300 before June", "MARKET"),
            ("The Lakers win the championship this season", "SPORTS"),
        ];
        let result = check("Will SOL trade above $300 before June?", published);
        assert!(result.similarity > 0.7, "{result:?}");
        assert_eq!(result.suggested_category, "MARKET");
        assert_eq!(result.score, ((1.0 - result.similarity) * 100.0).round());

        let fresh = check("Inflation falls under 2% and the Fed cuts rates", published);
        assert_eq!(fresh.similarity, 0.0);
        assert_eq!(fresh.score, 100.0);
        assert_eq!(fresh.suggested_category, "MACRO", "by keywords");
        assert_eq!(
            check("Something entirely unheard of", published).suggested_category,
            "CONVICTION"
        );
    }
}
