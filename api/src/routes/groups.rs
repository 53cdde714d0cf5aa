//! Narrative groups (spec 2.4, 4.2) with live aggregates: `total_volume_usd` is the SOL backed in
//! the members' indexed markets at the current SOL/USD price, `total_backers` the distinct
//! wallets backing any member.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use narrative_store::entities::{
    backings, markets, narrative_group_members, narrative_groups, narratives,
};
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use crate::error::{ApiError, ApiResult};
use crate::routes::Tag;
use crate::state::AppState;
use crate::time::{iso, now};
use crate::validate::{clamp, sol};

pub struct GroupsApi {
    pub state: Arc<AppState>,
}

#[derive(Object)]
pub struct GroupMember {
    pub id: String,
    pub title: String,
    pub is_pre_market: bool,
    pub opens_at: Option<String>,
    pub pre_market_source: Option<String>,
}

/// Spec 2.4.
#[derive(Object)]
pub struct Group {
    pub id: String,
    pub title: String,
    pub featured: bool,
    pub total_volume_usd: f64,
    pub total_backers: u64,
    pub narratives: Vec<GroupMember>,
}

#[derive(Object)]
pub struct GroupList {
    pub groups: Vec<Group>,
}

#[derive(Object)]
pub struct GroupWrapped {
    pub group: Group,
}

impl GroupsApi {
    /// The groups with their members and aggregates.
    async fn assemble(&self, groups: Vec<narrative_groups::Model>) -> Result<Vec<Group>, ApiError> {
        let db = self.state.store.db();
        let ids: Vec<String> = groups.iter().map(|g| g.id.clone()).collect();
        let members = narrative_group_members::Entity::find()
            .filter(narrative_group_members::Column::GroupId.is_in(ids))
            .order_by_asc(narrative_group_members::Column::Position)
            .all(db)
            .await?;
        let narrative_ids: Vec<String> = members.iter().map(|m| m.narrative_id.clone()).collect();
        let rows: HashMap<String, narratives::Model> = narratives::Entity::find()
            .filter(narratives::Column::Id.is_in(narrative_ids))
            .all(db)
            .await?
            .into_iter()
            .map(|n| (n.id.clone(), n))
            .collect();
        let market_ids: Vec<String> = rows.values().map(|n| n.market_id.clone()).collect();
        let volume: HashMap<String, i64> = markets::Entity::find()
            .filter(markets::Column::MarketId.is_in(market_ids.clone()))
            .filter(markets::Column::Closed.eq(false))
            .all(db)
            .await?
            .into_iter()
            .map(|m| (m.market_id, m.yes_total.saturating_add(m.no_total)))
            .collect();
        let mut backers: HashMap<String, HashSet<String>> = HashMap::new();
        for b in backings::Entity::find()
            .filter(backings::Column::MarketId.is_in(market_ids))
            .all(db)
            .await?
        {
            backers.entry(b.market_id).or_default().insert(b.backer);
        }
        let price = if groups.is_empty() {
            0.0
        } else {
            self.state.prices.sol_usd().await.map_err(|error| {
                tracing::warn!(error = %format!("{error:#}"), "price feed unavailable");
                ApiError::coded(
                    poem::http::StatusCode::SERVICE_UNAVAILABLE,
                    "price_unavailable",
                    "the SOL/USD price could not be read; retry shortly",
                )
            })?
        };
        let now = now();
        Ok(groups
            .into_iter()
            .map(|g| {
                let (mut lamports, mut wallets) = (0i64, HashSet::new());
                let narratives = members
                    .iter()
                    .filter(|m| m.group_id == g.id)
                    .filter_map(|m| {
                        let n = rows.get(&m.narrative_id)?;
                        lamports =
                            lamports.saturating_add(volume.get(&n.market_id).copied().unwrap_or(0));
                        wallets.extend(backers.get(&n.market_id).into_iter().flatten().cloned());
                        let opens_at = n.opens_at.filter(|at| *at > now);
                        Some(GroupMember {
                            id: n.id.clone(),
                            title: n.title.clone(),
                            is_pre_market: opens_at.is_some(),
                            opens_at: opens_at.map(iso),
                            pre_market_source: m.pre_market_source.clone(),
                        })
                    })
                    .collect();
                Group {
                    id: g.id,
                    title: g.title,
                    featured: g.featured,
                    total_volume_usd: (sol(lamports) * price * 100.0).round() / 100.0,
                    total_backers: wallets.len() as u64,
                    narratives,
                }
            })
            .collect())
    }
}

#[OpenApi(prefix_path = "/narrative-groups", tag = "Tag::Narratives")]
impl GroupsApi {
    /// Groups, featured first then newest: `featured` keeps only featured ones, `min_volume`
    /// (USD) and `min_backers` drop smaller ones, `limit` defaults to 20 (1–100).
    #[oai(path = "/", method = "get")]
    async fn list(
        &self,
        featured: Query<Option<bool>>,
        limit: Query<Option<i64>>,
        min_volume: Query<Option<f64>>,
        min_backers: Query<Option<i64>>,
    ) -> ApiResult<Json<GroupList>> {
        let limit = clamp(limit.0, 20, 1, 100) as usize;
        let mut query = narrative_groups::Entity::find();
        if featured.0 == Some(true) {
            query = query.filter(narrative_groups::Column::Featured.eq(true));
        }
        let groups = query
            .order_by_desc(narrative_groups::Column::Featured)
            .order_by_desc(narrative_groups::Column::CreatedAt)
            .order_by_asc(narrative_groups::Column::Id)
            .all(self.state.store.db())
            .await
            .map_err(ApiError::from)?;
        let min_volume = min_volume.0.unwrap_or(0.0);
        let min_backers = min_backers.0.unwrap_or(0).max(0) as u64;
        let mut groups: Vec<Group> = self
            .assemble(groups)
            .await?
            .into_iter()
            .filter(|g| g.total_volume_usd >= min_volume && g.total_backers >= min_backers)
            .collect();
        groups.truncate(limit);
        Ok(Json(GroupList { groups }))
    }

    /// One group, wrapped in `group`.
    #[oai(path = "/:id", method = "get")]
    async fn single(&self, id: Path<String>) -> ApiResult<Json<GroupWrapped>> {
        let group = narrative_groups::Entity::find_by_id(id.0.trim().to_owned())
            .one(self.state.store.db())
            .await
            .map_err(ApiError::from)?
            .ok_or_else(|| ApiError::not_found("narrative group"))?;
        let group = self
            .assemble(vec![group])
            .await?
            .pop()
            .expect("one group in, one out");
        Ok(Json(GroupWrapped { group }))
    }
}
