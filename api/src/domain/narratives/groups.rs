//! Narrative groups (spec 2.4, 4.2) with live aggregates: `total_volume_usd` is the SOL backed
//! in the members' indexed markets at the current SOL/USD price, `total_backers` the distinct
//! wallets backing any member.

use std::collections::HashMap;

use narrative_store::entities::{markets, narrative_group_members, narrative_groups, narratives};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::domain::narratives::feed::opens_at;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::sol;

pub struct Member {
    pub narrative: narratives::Model,
    pub opens_at: Option<i64>,
    pub pre_market_source: Option<String>,
}

pub struct Group {
    pub group: narrative_groups::Model,
    pub members: Vec<Member>,
    pub total_volume_usd: f64,
    pub total_backers: u64,
}

pub struct GroupFilter {
    pub featured_only: bool,
    pub min_volume_usd: f64,
    pub min_backers: u64,
    pub limit: usize,
}

/// Groups, featured first then newest, without those below the filter's minimums.
/// When `groups` as answered change without a write: a member that opens, or the SOL/USD price
/// (read at most a price-cache lifetime ago) that values them.
pub fn next_change(groups: &[Group], now: i64) -> Option<i64> {
    let opening = groups
        .iter()
        .flat_map(|g| &g.members)
        .filter_map(|m| m.opens_at)
        .min();
    let repriced = (!groups.is_empty()).then_some(now + crate::providers::prices::CACHE_SECS);
    opening.into_iter().chain(repriced).min()
}

pub async fn list(state: &AppState, filter: GroupFilter) -> Result<Vec<Group>, ApiError> {
    let mut query = narrative_groups::Entity::find();
    if filter.featured_only {
        query = query.filter(narrative_groups::Column::Featured.eq(true));
    }
    let mut query = query
        .order_by_desc(narrative_groups::Column::Featured)
        .order_by_desc(narrative_groups::Column::CreatedAt)
        .order_by_asc(narrative_groups::Column::Id);
    // Without minimums every group listed is answered: only `limit` of them are assembled.
    if filter.min_volume_usd <= 0.0 && filter.min_backers == 0 {
        query = query.limit(filter.limit as u64);
    }
    let groups = query.all(state.store.db()).await?;
    let mut groups: Vec<Group> = assemble(state, groups)
        .await?
        .into_iter()
        .filter(|g| {
            g.total_volume_usd >= filter.min_volume_usd && g.total_backers >= filter.min_backers
        })
        .collect();
    groups.truncate(filter.limit);
    Ok(groups)
}

/// One group; 404 when there is none.
pub async fn get(state: &AppState, id: &str) -> Result<Group, ApiError> {
    let group = narrative_groups::Entity::find_by_id(id.to_owned())
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::not_found("narrative group"))?;
    assemble(state, vec![group])
        .await?
        .pop()
        .ok_or_else(|| ApiError::internal("one group in, none out"))
}

/// The groups with their members and aggregates.
async fn assemble(
    state: &AppState,
    groups: Vec<narrative_groups::Model>,
) -> Result<Vec<Group>, ApiError> {
    let db = state.store.db();
    let ids: Vec<String> = groups.iter().map(|g| g.id.clone()).collect();
    let members = narrative_group_members::Entity::find()
        .filter(narrative_group_members::Column::GroupId.is_in(ids))
        .order_by_asc(narrative_group_members::Column::Position)
        .all(db)
        .await?;
    let narrative_ids: Vec<String> = members.iter().map(|m| m.narrative_id.clone()).collect();
    let rows: HashMap<String, narratives::Model> = narratives::Entity::find()
        .filter(narratives::Column::Id.is_in(narrative_ids))
        .filter(crate::domain::narratives::feed::visible())
        .all(db)
        .await?
        .into_iter()
        .map(|n| (n.id.clone(), n))
        .collect();
    let market_ids: Vec<String> = rows.values().map(|n| n.market_id.clone()).collect();
    let volume: HashMap<String, i64> = markets::Entity::find()
        .filter(markets::Column::MarketId.is_in(market_ids))
        .filter(markets::Column::Closed.eq(false))
        .all(db)
        .await?
        .into_iter()
        .map(|m| (m.market_id, m.yes_total.saturating_add(m.no_total)))
        .collect();
    let backers = narrative_store::indexed::distinct_backers_by_group(
        db,
        groups.iter().map(|g| g.id.clone()).collect(),
    )
    .await?;
    let price = if groups.is_empty() {
        0.0
    } else {
        state.prices.sol_usd().await.map_err(|error| {
            tracing::warn!(error = %format!("{error:#}"), "price feed unavailable");
            ApiError::unavailable(
                "price_unavailable",
                "the SOL/USD price could not be read; retry shortly",
            )
        })?
    };
    let now = state.now();
    Ok(groups
        .into_iter()
        .map(|group| {
            let mut lamports = 0i64;
            let members = members
                .iter()
                .filter(|m| m.group_id == group.id)
                .filter_map(|m| {
                    let n = rows.get(&m.narrative_id)?;
                    lamports =
                        lamports.saturating_add(volume.get(&n.market_id).copied().unwrap_or(0));
                    Some(Member {
                        opens_at: opens_at(n, now),
                        narrative: n.clone(),
                        pre_market_source: m.pre_market_source.clone(),
                    })
                })
                .collect();
            Group {
                total_backers: backers.get(&group.id).copied().unwrap_or(0),
                group,
                members,
                total_volume_usd: (sol(lamports) * price * 100.0).round() / 100.0,
            }
        })
        .collect())
}
