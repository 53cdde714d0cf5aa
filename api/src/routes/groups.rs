//! Narrative groups (spec 2.4, 4.2) with their live aggregates.

use std::sync::Arc;

use poem_openapi::param::{Path, Query};
use poem_openapi::payload::{Json, Response};
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::narratives::groups::{self, GroupFilter};
use crate::error::{refusals, Answer};
use crate::http::cache::fresh_until;
use crate::routes::Tag;
use crate::state::AppState;
use crate::values::clamp;

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

impl From<groups::Group> for Group {
    fn from(g: groups::Group) -> Self {
        Group {
            id: g.group.id,
            title: g.group.title,
            featured: g.group.featured,
            total_volume_usd: g.total_volume_usd,
            total_backers: g.total_backers,
            narratives: g
                .members
                .into_iter()
                .map(|m| GroupMember {
                    id: m.narrative.id,
                    title: m.narrative.title,
                    is_pre_market: m.opens_at.is_some(),
                    opens_at: m.opens_at.map(iso),
                    pre_market_source: m.pre_market_source,
                })
                .collect(),
        }
    }
}

#[derive(Object)]
pub struct GroupList {
    pub groups: Vec<Group>,
}

#[derive(Object)]
pub struct GroupWrapped {
    pub group: Group,
}

refusals! {
    ListRefusals: [400, 503];
    SingleRefusals: [404, 503];
}

#[OpenApi(prefix_path = "/narrative-groups", tag = "Tag::Narratives")]
impl GroupsApi {
    /// Groups, featured first then newest: `featured` keeps only featured ones, `min_volume`
    /// (USD) and `min_backers` drop smaller ones, `limit` defaults to 20 (clamped to 1–100).
    #[oai(path = "/", method = "get")]
    async fn list(
        &self,
        featured: Query<Option<bool>>,
        limit: Query<Option<i64>>,
        min_volume: Query<Option<f64>>,
        min_backers: Query<Option<i64>>,
    ) -> Answer<Response<Json<GroupList>>, ListRefusals> {
        let groups = groups::list(
            &self.state,
            GroupFilter {
                featured_only: featured.0 == Some(true),
                min_volume_usd: min_volume.0.unwrap_or(0.0),
                min_backers: min_backers.0.unwrap_or(0).max(0) as u64,
                limit: clamp(limit.0, 20, 1, 100) as usize,
            },
        )
        .await?;
        let changes = groups::next_change(&groups, self.state.now());
        Ok(fresh_until(
            Json(GroupList {
                groups: groups.into_iter().map(Group::from).collect(),
            }),
            changes,
        ))
    }

    /// One group, wrapped in `group`.
    #[oai(path = "/:id", method = "get")]
    async fn single(
        &self,
        id: Path<String>,
    ) -> Answer<Response<Json<GroupWrapped>>, SingleRefusals> {
        let group = groups::get(&self.state, id.0.trim()).await?;
        let changes = groups::next_change(std::slice::from_ref(&group), self.state.now());
        Ok(fresh_until(
            Json(GroupWrapped {
                group: group.into(),
            }),
            changes,
        ))
    }
}
