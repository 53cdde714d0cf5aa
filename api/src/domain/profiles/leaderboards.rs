//! The conviction group's leaderboards (spec 4.3): wallets by conviction score, and creators by
//! creator score, highest first, ties by wallet so that pages are stable.

use std::sync::Arc;

use narrative_store::freshness::Topic;

use crate::domain::profiles::{conviction, creator, creator_scores};
use crate::error::ApiError;
use crate::freshness::LastBuilt;
use crate::state::AppState;

/// `(wallet, T)` ranked by `key` (descending), ties by wallet.
fn ranked<T>(mut rows: Vec<(String, T)>, key: impl Fn(&T) -> f64) -> Vec<(String, T)> {
    rows.sort_by(|a, b| key(&b.1).total_cmp(&key(&a.1)).then_with(|| a.0.cmp(&b.0)));
    rows
}

/// A page of a ranking, and how many there are.
fn page<T: Clone>(ranking: &[(String, T)], limit: u64, offset: u64) -> (Vec<(String, T)>, u64) {
    let page = ranking
        .iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .cloned()
        .collect();
    (page, ranking.len() as u64)
}

/// The two rankings as last scored, each with the `markets` generation it was scored under:
/// scoring reads every resolved backing (or every published narrative), and every page of a
/// board, whatever its offset, is cut from the same ranking.
pub struct Boards {
    conviction: LastBuilt<i64, Arc<Vec<(String, conviction::Score)>>>,
    creators: LastBuilt<i64, Arc<Vec<(String, creator::CreatorScore)>>>,
}

impl Default for Boards {
    fn default() -> Self {
        Boards {
            conviction: LastBuilt::new("conviction_leaderboard"),
            creators: LastBuilt::new("creator_leaderboard"),
        }
    }
}

impl Boards {
    /// The `/metrics` lines.
    pub fn render(&self) -> String {
        self.conviction.render() + &self.creators.render()
    }
}

/// The `markets` generation as the barrier reads it after the request arrived (`None` when it
/// cannot be read: the ranking is then scored for this request alone).
async fn markets_generation(state: &AppState) -> Option<i64> {
    match state.freshness.current().await {
        Ok(generations) => Some(generations.of(Topic::Markets)),
        Err(error) => {
            tracing::warn!(%error, "freshness unknown: the leaderboard is scored anew");
            None
        }
    }
}

/// Wallets with a resolved backing, by conviction score.
pub async fn conviction(
    state: &AppState,
    boards: &Boards,
    limit: u64,
    offset: u64,
) -> Result<(Vec<(String, conviction::Score)>, u64), ApiError> {
    let store = state.store.clone();
    let ranking = boards
        .conviction
        .get(markets_generation(state).await, || async move {
            let scores = conviction::scores(store.db(), None).await?;
            // Kept for every wallet: without the per-category figures, which the board does
            // not show (the wallet's profile reads them).
            let slim = scores.into_iter().map(|(wallet, mut score)| {
                score.per_category.clear();
                (wallet, score)
            });
            Ok::<_, ApiError>(Arc::new(ranked(slim.collect(), |s| s.score)))
        })
        .await?;
    Ok(page(&ranking, limit, offset))
}

/// Wallets that published a narrative, by creator score.
pub async fn creators(
    state: &AppState,
    boards: &Boards,
    limit: u64,
    offset: u64,
) -> Result<(Vec<(String, creator::CreatorScore)>, u64), ApiError> {
    let store = state.store.clone();
    let ranking = boards
        .creators
        .get(markets_generation(state).await, || async move {
            let scores = creator_scores(store.db(), None).await?;
            Ok::<_, ApiError>(Arc::new(ranked(scores.into_iter().collect(), |s| s.score)))
        })
        .await?;
    Ok(page(&ranking, limit, offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_rank_by_wallet_and_pages_cut_the_ranking() {
        let rows = vec![
            ("b".to_owned(), 10.0),
            ("a".to_owned(), 10.0),
            ("c".to_owned(), 30.0),
            ("d".to_owned(), 0.0),
        ];
        let ranking = ranked(rows, |s| *s);
        let (cut, total) = page(&ranking, 2, 1);
        assert_eq!(total, 4);
        let wallets: Vec<&str> = cut.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(wallets, vec!["a", "b"]);
        let (all, _) = page(&ranking, 10, 0);
        assert_eq!(all[0].0, "c");
        assert_eq!(all[3].0, "d");
        assert!(page(&ranking, 10, u64::MAX).0.is_empty());
    }
}
