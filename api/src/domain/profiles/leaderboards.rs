//! The conviction group's leaderboards (spec 4.3): wallets by conviction score, and creators by
//! creator score, highest first, ties by wallet so that pages are stable.

use crate::domain::profiles::{conviction, creator, creator_scores};
use crate::error::ApiError;
use crate::state::AppState;

/// A page of `(wallet, T)` ranked by `key` (descending), and how many there are.
fn ranked<T>(
    mut rows: Vec<(String, T)>,
    key: impl Fn(&T) -> f64,
    limit: u64,
    offset: u64,
) -> (Vec<(String, T)>, u64) {
    let total = rows.len() as u64;
    rows.sort_by(|a, b| key(&b.1).total_cmp(&key(&a.1)).then_with(|| a.0.cmp(&b.0)));
    (
        rows.into_iter()
            .skip(offset as usize)
            .take(limit as usize)
            .collect(),
        total,
    )
}

/// Wallets with a resolved backing, by conviction score.
pub async fn conviction(
    state: &AppState,
    limit: u64,
    offset: u64,
) -> Result<(Vec<(String, conviction::Score)>, u64), ApiError> {
    let scores = conviction::scores(state.store.db(), None).await?;
    Ok(ranked(
        scores.into_iter().collect(),
        |s| s.score,
        limit,
        offset,
    ))
}

/// Wallets that published a narrative, by creator score.
pub async fn creators(
    state: &AppState,
    limit: u64,
    offset: u64,
) -> Result<(Vec<(String, creator::CreatorScore)>, u64), ApiError> {
    let scores = creator_scores(state.store.db(), None).await?;
    Ok(ranked(
        scores.into_iter().collect(),
        |s| s.score,
        limit,
        offset,
    ))
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
        let (page, total) = ranked(rows.clone(), |s| *s, 2, 1);
        assert_eq!(total, 4);
        let wallets: Vec<&str> = page.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(wallets, vec!["a", "b"]);
        let (all, _) = ranked(rows, |s| *s, 10, 0);
        assert_eq!(all[0].0, "c");
        assert_eq!(all[3].0, "d");
    }
}
