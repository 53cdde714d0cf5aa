//! The agent feed (spec 2.2, 4.10): up to 50 narratives that can still be resolved, newest
//! first, with their backing totals and challenges from the index; about 60 per minute per key.

use std::collections::HashMap;

use narrative_store::entities::{disputes, narratives};
use narrative_store::indexed;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::domain::keys::Caller;
use crate::domain::quota;
use crate::error::ApiError;
use crate::limits::AGENT_FEED;
use crate::state::AppState;
use crate::values::{sol, OracleStatus};

/// Agent feed size (spec 8).
pub const FEED_SIZE: u64 = 50;

pub struct FeedItem {
    pub narrative: narratives::Model,
    pub total_backed_sol: f64,
    pub backer_count: i64,
    pub challenge_count: i64,
}

pub async fn feed(state: &AppState, caller: &Caller) -> Result<Vec<FeedItem>, ApiError> {
    quota::rate(state, &AGENT_FEED, &caller.key_id).await?;
    let db = state.store.db();
    let rows = narratives::Entity::find()
        .filter(narratives::Column::OracleStatus.is_in(OracleStatus::eligible_names()))
        .filter(crate::domain::narratives::feed::visible())
        .order_by_desc(narratives::Column::CreatedAt)
        .order_by_asc(narratives::Column::Id)
        .limit(FEED_SIZE)
        .all(db)
        .await?;
    let market_ids: Vec<String> = rows.iter().map(|n| n.market_id.clone()).collect();
    let totals = indexed::markets_by_id(db, market_ids.clone()).await?;
    let backers = indexed::distinct_backers(db, market_ids.clone()).await?;
    let mut challenges: HashMap<String, i64> = HashMap::new();
    for dispute in disputes::Entity::find()
        .filter(disputes::Column::MarketId.is_in(market_ids))
        .all(db)
        .await?
    {
        *challenges.entry(dispute.market_id).or_default() += 1;
    }
    Ok(rows
        .into_iter()
        .map(|n| FeedItem {
            total_backed_sol: totals
                .get(&n.market_id)
                .map_or(0.0, |m| sol(m.yes_total.saturating_add(m.no_total))),
            backer_count: backers.get(&n.market_id).copied().unwrap_or(0),
            challenge_count: challenges.get(&n.market_id).copied().unwrap_or(0),
            narrative: n,
        })
        .collect())
}
