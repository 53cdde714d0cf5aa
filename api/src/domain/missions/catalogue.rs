//! The missions, as data: `catalogue.json` is the one place a mission is defined (its id, text,
//! the metric it measures, the target, and the points and ruffler tickets it awards). Adding a
//! mission over an existing metric is a row there; a new metric is a variant of [`Metric`] and
//! one field of the progress.

use std::sync::OnceLock;

use serde::Deserialize;

use crate::values::enum_value;

enum_value!(
    /// What a mission measures of a wallet.
    Metric,
    "mission_metric",
    "What a mission measures: backing positions held, distinct narratives backed, lamports \
     backed, correct backings, the longest streak of correct backings, narratives published, \
     Echo Pool claims, and whether the current terms are accepted (1) or not (0).",
    [
        Backings => "backings",
        NarrativesBacked => "narratives_backed",
        LamportsBacked => "lamports_backed",
        CorrectBackings => "correct_backings",
        LongestStreak => "longest_streak",
        NarrativesPublished => "narratives_published",
        EchoClaims => "echo_claims",
        TermsAccepted => "terms_accepted",
    ]
);

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Mission {
    pub id: String,
    pub title: String,
    pub description: String,
    pub metric: Metric,
    /// Complete once the metric reaches this.
    pub target: u64,
    pub points: u64,
    /// Ruffler tickets it wins into the open round.
    pub tickets: u32,
}

const CATALOGUE: &str = include_str!("catalogue.json");

/// The catalogue, parsed once. A catalogue that does not parse or repeats an id is a bug the
/// tests catch.
pub fn missions() -> &'static [Mission] {
    static PARSED: OnceLock<Vec<Mission>> = OnceLock::new();
    PARSED
        .get_or_init(|| serde_json::from_str(CATALOGUE).expect("catalogue.json holds the missions"))
}

pub fn find(id: &str) -> Option<&'static Mission> {
    missions().iter().find(|m| m.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_parses_with_unique_ids_and_reachable_targets() {
        let missions = missions();
        assert!(missions.len() >= 10);
        let mut ids: Vec<&str> = missions.iter().map(|m| m.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), missions.len(), "mission ids repeat");
        for mission in missions {
            assert!(mission.target > 0, "{}", mission.id);
            assert!(mission.points > 0, "{}", mission.id);
            if mission.metric == Metric::TermsAccepted {
                assert_eq!(mission.target, 1, "a yes/no metric reaches 1 at most");
            }
        }
        // Every metric is measured by at least one mission.
        for metric in Metric::ALL {
            assert!(missions.iter().any(|m| m.metric == *metric), "{metric}");
        }
    }
}
