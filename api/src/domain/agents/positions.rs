//! An agent's positions and history (spec 2.7) from its wallet's indexed backings, and the
//! leaderboard by realised PnL.

use std::collections::HashMap;

use narrative_store::entities::{agents, backings, markets, narratives};
use sea_orm::{
    ColumnTrait, EntityTrait, FromQueryResult, QueryFilter, QueryOrder, QuerySelect, Statement,
};

use crate::error::ApiError;
use crate::state::AppState;
use crate::values::sol;

/// Spec 8: agent history size.
pub const HISTORY_SIZE: u64 = 100;

/// The most open positions a portfolio answers, newest first: the spec gives no cap, and any
/// agent may name any wallet (a whale's, with thousands of backings), so an uncapped read's
/// cost would be the named wallet's to choose.
pub const PORTFOLIO_SIZE: u64 = 500;

/// Spec 2.7's agent position.
pub struct Position {
    pub backing: backings::Model,
    pub narrative: Option<narratives::Model>,
    /// The market variant: `yield` or `classic` (`unknown` before it is indexed).
    pub yield_type: String,
    pub usd_equivalent: f64,
}

/// `wallet`'s `most` newest backings (open ones only when `open_only`), with their narratives.
pub async fn positions(
    state: &AppState,
    wallet: &str,
    open_only: bool,
    most: u64,
) -> Result<Vec<Position>, ApiError> {
    let db = state.store.db();
    let mut query = backings::Entity::find().filter(backings::Column::Backer.eq(wallet));
    if open_only {
        query = query
            .filter(backings::Column::Claimed.eq(false))
            .filter(backings::Column::Closed.eq(false));
    }
    let held = query
        .order_by_desc(backings::Column::LastBackedAt)
        .order_by_asc(backings::Column::Address)
        .limit(most)
        .all(db)
        .await?;
    let market_ids: Vec<String> = held.iter().map(|b| b.market_id.clone()).collect();
    let variants: HashMap<String, String> = markets::Entity::find()
        .filter(markets::Column::MarketId.is_in(market_ids.clone()))
        .all(db)
        .await?
        .into_iter()
        .map(|m| (m.market_id, m.variant))
        .collect();
    let stories = narrative_store::indexed::visible_narratives_by_market(db, market_ids).await?;
    let price = state.prices.sol_usd().await.unwrap_or_else(|error| {
        tracing::warn!(error = %format!("{error:#}"), "price feed unavailable; usd_equivalent is 0");
        0.0
    });
    Ok(held
        .into_iter()
        .map(|b| Position {
            narrative: stories.get(&b.market_id).cloned(),
            yield_type: variants
                .get(&b.market_id)
                .cloned()
                .unwrap_or_else(|| "unknown".into()),
            usd_equivalent: (sol(b.amount) * price * 100.0).round() / 100.0,
            backing: b,
        })
        .collect())
}

/// A leaderboard entry (spec 2.7).
pub struct Standing {
    pub agent: agents::Model,
    pub total_backings: u64,
    /// Lamports staked.
    pub volume: i64,
    /// Realised: payouts of claimed backings minus what they staked.
    pub pnl: i64,
}

/// Agents ranked by realised PnL (ties by id), a page of them: aggregated and paged in one SQL
/// statement, so the cost does not grow with the agents that are not on the page. Only agents
/// whose wallet was proven at registration rank: a wallet merely named is a label, and would
/// otherwise wear another trader's record.
pub async fn leaderboard(
    state: &AppState,
    limit: u64,
    offset: u64,
) -> Result<Vec<Standing>, ApiError> {
    let db = state.store.db();
    let backend = db.get_database_backend();
    let bytewise = narrative_store::sql::bytewise(backend);
    let (limit, offset) = (limit.min(i64::MAX as u64), offset.min(i64::MAX as u64));
    // Only numbers are written into the statement.
    let sql = format!(
        "SELECT a.id AS id,
       CAST(COUNT(b.address) AS BIGINT) AS total_backings,
       CAST(COALESCE(SUM(b.amount), 0) AS BIGINT) AS volume,
       CAST(COALESCE(SUM(CASE WHEN b.claimed THEN b.payout - b.amount ELSE 0 END), 0) AS BIGINT)
         AS pnl
FROM agents a LEFT JOIN backings b ON b.backer = a.wallet_address
WHERE a.wallet_proven
GROUP BY a.id
ORDER BY pnl DESC, a.id {bytewise} ASC LIMIT {limit} OFFSET {offset}"
    );
    let rows = Ranked::find_by_statement(Statement::from_string(backend, sql))
        .all(db)
        .await?;
    // The page's agents, read whole.
    let mut agents: HashMap<String, agents::Model> = agents::Entity::find()
        .filter(agents::Column::Id.is_in(rows.iter().map(|row| row.id.clone())))
        .all(db)
        .await?
        .into_iter()
        .map(|agent| (agent.id.clone(), agent))
        .collect();
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            Some(Standing {
                agent: agents.remove(&row.id)?,
                total_backings: u64::try_from(row.total_backings).unwrap_or(0),
                volume: row.volume,
                pnl: row.pnl,
            })
        })
        .collect())
}

#[derive(FromQueryResult)]
struct Ranked {
    id: String,
    total_backings: i64,
    volume: i64,
    pnl: i64,
}
