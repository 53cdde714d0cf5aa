//! The missions leaderboard (spec 4.4): every wallet that completed a mission, has a conviction
//! score or shared in a recent Echo Pool epoch, ranked by the chosen figure (ties by wallet, so
//! pages are stable), each entry carrying all three.
//!
//! One SQL statement ranks and pages them, whatever the number of wallets: the conviction score
//! is computed in SQL by the rules of `domain::profiles::conviction` (window functions over each
//! wallet's resolved backings in the order they settled; see [`CONVICTION_SQL`]), so no wallet
//! is loaded into memory but the page's. The route is served from the response cache.

use sea_orm::{ConnectionTrait, FromQueryResult, Statement};

use crate::domain::echo::keeper::{CLOSED, ROLLED_OVER};
use crate::domain::echo::reads::HISTORY_EPOCHS;
use crate::domain::profiles::conviction;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::enum_value;

enum_value!(
    /// What the missions leaderboard ranks by.
    MissionSort,
    "mission_sort",
    "What to rank by: missions completed, conviction score, or epoch performance (lamports \
     allocated to the wallet over the last 12 closed Echo Pool epochs).",
    [
        MissionsCompleted => "missions_completed",
        ConvictionScore => "conviction_score",
        EpochPerformance => "epoch_performance",
    ]
);

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Entry {
    pub wallet: String,
    pub missions_completed: u64,
    pub conviction_score: f64,
    pub conviction_tier: String,
    pub epoch_performance_lamports: u64,
}

/// Each wallet's conviction score, `(wallet, score)`, from its resolved backings in settlement
/// order (`conviction::histories`' order): a correct backing earns 10 plus 2 per correct one
/// right before it (capped at 10), an incorrect one loses 5, and the score never goes below 0.
/// With `S` the running sum of those points (unfloored), the floored score after the last
/// backing is `S_n - min(0, min_k S_k)` (the floor only ever lifts the walk by its lowest
/// point). The streak before a correct backing is its rank among the backings since the
/// wallet's last incorrect one (`run` counts incorrect ones so far, and each run starts with
/// the incorrect one that opened it).
pub const CONVICTION_SQL: &str = "\
resolved AS (
  SELECT b.backer AS wallet,
         CASE WHEN b.side = m.outcome THEN 1 ELSE 0 END AS won,
         ROW_NUMBER() OVER (PARTITION BY b.backer
                            ORDER BY m.finalized_at, b.market_id, b.side) AS pos
  FROM backings b JOIN markets m ON m.market_id = b.market_id
  WHERE m.finalized AND NOT m.closed AND m.outcome IS NOT NULL
),
runs AS (
  SELECT wallet, won, pos,
         SUM(1 - won) OVER (PARTITION BY wallet ORDER BY pos ROWS UNBOUNDED PRECEDING) AS run
  FROM resolved
),
streaks AS (
  SELECT wallet, won, pos,
         ROW_NUMBER() OVER (PARTITION BY wallet, run ORDER BY pos) - 1
           - CASE WHEN run > 0 THEN 1 ELSE 0 END AS streak
  FROM runs
),
deltas AS (
  SELECT wallet, pos,
         CASE WHEN won = 1 THEN 10 + CASE WHEN streak >= 5 THEN 10 ELSE 2 * streak END
              ELSE -5 END AS delta
  FROM streaks
),
walks AS (
  SELECT wallet, delta,
         SUM(delta) OVER (PARTITION BY wallet ORDER BY pos ROWS UNBOUNDED PRECEDING) AS s
  FROM deltas
),
scores AS (
  SELECT wallet,
         CAST(SUM(delta) - CASE WHEN MIN(s) < 0 THEN MIN(s) ELSE 0 END AS BIGINT) AS score
  FROM walks GROUP BY wallet
)";

#[derive(Debug, FromQueryResult)]
struct Ranked {
    wallet: String,
    completed: i64,
    score: i64,
    scored: i64,
    allocated: i64,
    total: i64,
}

pub async fn leaderboard(
    state: &AppState,
    sort: MissionSort,
    limit: u64,
    offset: u64,
) -> Result<(Vec<Entry>, u64), ApiError> {
    let db = state.store.db();
    let by = match sort {
        MissionSort::MissionsCompleted => "completed",
        MissionSort::ConvictionScore => "score",
        MissionSort::EpochPerformance => "allocated",
    };
    let limit = limit.min(i64::MAX as u64);
    let offset = offset.min(i64::MAX as u64);
    let backend = db.get_database_backend();
    let bytewise = narrative_store::sql::bytewise(backend);
    // Only constants and numbers are written into the statement.
    let sql = format!(
        "WITH {CONVICTION_SQL},
completed AS (
  SELECT wallet, COUNT(mission_id) AS n FROM mission_completions GROUP BY wallet
),
recent AS (
  SELECT epoch_address FROM echo_distributions
  WHERE mint IS NULL AND status IN ('{CLOSED}', '{ROLLED_OVER}')
  ORDER BY epoch_number DESC LIMIT {HISTORY_EPOCHS}
),
allocated AS (
  SELECT wallet, CAST(COALESCE(SUM(amount), 0) AS BIGINT) AS lamports FROM echo_allocations
  WHERE epoch_address IN (SELECT epoch_address FROM recent) GROUP BY wallet
),
wallets AS (
  SELECT wallet FROM completed UNION SELECT wallet FROM scores UNION SELECT wallet FROM allocated
),
ranked AS (
  SELECT w.wallet AS wallet,
         CAST(COALESCE(c.n, 0) AS BIGINT) AS completed,
         CAST(COALESCE(sc.score, 0) AS BIGINT) AS score,
         CAST(CASE WHEN sc.wallet IS NULL THEN 0 ELSE 1 END AS BIGINT) AS scored,
         CAST(COALESCE(a.lamports, 0) AS BIGINT) AS allocated
  FROM wallets w
  LEFT JOIN completed c ON c.wallet = w.wallet
  LEFT JOIN scores sc ON sc.wallet = w.wallet
  LEFT JOIN allocated a ON a.wallet = w.wallet
)
SELECT wallet, completed, score, scored, allocated, CAST(COUNT(*) OVER () AS BIGINT) AS total
FROM ranked ORDER BY {by} DESC, wallet {bytewise} ASC LIMIT {limit} OFFSET {offset}"
    );
    let rows = Ranked::find_by_statement(Statement::from_string(backend, sql))
        .all(db)
        .await?;
    let total = match rows.first() {
        Some(row) => u64::try_from(row.total).unwrap_or(0),
        // A page past the end: count them alone.
        None => count(db).await?,
    };
    let entries = rows
        .into_iter()
        .map(|row| {
            let score = row.score as f64;
            Entry {
                wallet: row.wallet,
                missions_completed: u64::try_from(row.completed).unwrap_or(0),
                conviction_score: score,
                // A wallet without a resolved backing has the zeroed profile (`ember`).
                conviction_tier: if row.scored == 1 {
                    conviction::Tier::for_score(score).name().into()
                } else {
                    conviction::Tier::Ember.name().into()
                },
                epoch_performance_lamports: u64::try_from(row.allocated).unwrap_or(0),
            }
        })
        .collect();
    Ok((entries, total))
}

#[derive(Debug, FromQueryResult)]
struct Count {
    total: i64,
}

/// How many wallets the leaderboard ranks.
async fn count(db: &impl ConnectionTrait) -> Result<u64, ApiError> {
    let sql = format!(
        "WITH recent AS (
  SELECT epoch_address FROM echo_distributions
  WHERE mint IS NULL AND status IN ('{CLOSED}', '{ROLLED_OVER}')
  ORDER BY epoch_number DESC LIMIT {HISTORY_EPOCHS}
),
wallets AS (
  SELECT wallet FROM mission_completions
  UNION SELECT b.backer FROM backings b JOIN markets m ON m.market_id = b.market_id
    WHERE m.finalized AND NOT m.closed AND m.outcome IS NOT NULL
  UNION SELECT wallet FROM echo_allocations
    WHERE epoch_address IN (SELECT epoch_address FROM recent)
)
SELECT CAST(COUNT(*) AS BIGINT) AS total FROM wallets"
    );
    let counted = Count::find_by_statement(Statement::from_string(db.get_database_backend(), sql))
        .one(db)
        .await?;
    Ok(counted.map_or(0, |c| u64::try_from(c.total).unwrap_or(0)))
}
