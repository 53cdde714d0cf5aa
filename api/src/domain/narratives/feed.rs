//! Narrative reads (spec 4.1): the public feed with its filters, the hero list, the filter
//! counts and the single read with its pre-market gate (spec 3.1). `sol_backed` and `backers`
//! come from each narrative's indexed market: SOL backed on both sides, and distinct wallets.

use std::collections::{BTreeMap, HashMap, HashSet};

use narrative_store::entities::{backings, markets, narratives};
use narrative_store::indexed;
use sea_orm::{ColumnTrait, Condition, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{enum_value, sol, Category, NarrativeId, OracleStatus, Wallet};

/// `filter=new`: created within this many seconds.
const NEW_WITHIN_SECS: i64 = 72 * 3_600;
/// Rows a filter that ranks in memory (trending, most backed, hero) looks at, at most.
pub const RANKING_WINDOW: u64 = 5_000;
/// Narratives in the hero list.
const HERO_SIZE: usize = 5;

enum_value!(
    /// The feed's `filter`.
    FeedFilter,
    "feed_filter",
    "`all` (default), `new` (last 72 h), `trending` (most SOL backed), `backed` (what `wallet` backed; `wallet` required).",
    [All => "all", New => "new", Trending => "trending", Backed => "backed"]
);

enum_value!(
    /// The feed's `sort`.
    FeedSort,
    "feed_sort",
    "`newest` (default; `most_backed` for `trending`), `oldest`, `deadline`, `most_backed`.",
    [Newest => "newest", Oldest => "oldest", Deadline => "deadline", MostBacked => "most_backed"]
);

pub struct FeedQuery {
    pub filter: FeedFilter,
    pub category: Option<Category>,
    pub sub_category: Option<String>,
    pub asset_tag: Option<String>,
    /// A deadline tag (`SHORT`, `LONG`), any case.
    pub duration: Option<String>,
    pub sort: Option<FeedSort>,
    pub wallet: Option<Wallet>,
    pub limit: u64,
}

/// A narrative with its market's indexed totals.
pub struct NarrativeView {
    pub narrative: narratives::Model,
    pub sol_backed: f64,
    pub backers: i64,
}

/// The indexed totals of narratives' markets: SOL backed, and distinct backing wallets.
struct Totals {
    markets: HashMap<String, markets::Model>,
    backers: HashMap<String, i64>,
}

impl Totals {
    async fn of(state: &AppState, rows: &[narratives::Model]) -> Result<Totals, ApiError> {
        let ids: Vec<String> = rows.iter().map(|n| n.market_id.clone()).collect();
        let db = state.store.db();
        Ok(Totals {
            markets: indexed::markets_by_id(db, ids.clone()).await?,
            backers: indexed::distinct_backers(db, ids, None).await?,
        })
    }

    fn view(&self, narrative: narratives::Model) -> NarrativeView {
        NarrativeView {
            sol_backed: self
                .markets
                .get(&narrative.market_id)
                .map_or(0.0, |m| sol(m.yes_total.saturating_add(m.no_total))),
            backers: self.backers.get(&narrative.market_id).copied().unwrap_or(0),
            narrative,
        }
    }
}

fn active() -> Condition {
    Condition::all().add(narratives::Column::OracleStatus.is_in(OracleStatus::eligible_names()))
}

/// Keeps the `limit` views with the most SOL backed; ties keep their order (newest first).
fn most_backed(mut views: Vec<NarrativeView>, limit: usize) -> Vec<NarrativeView> {
    views.sort_by(|a, b| b.sol_backed.total_cmp(&a.sol_backed));
    views.truncate(limit);
    views
}

pub async fn feed(state: &AppState, query: FeedQuery) -> Result<Vec<NarrativeView>, ApiError> {
    let db = state.store.db();
    let mut condition = active();
    if let Some(category) = query.category {
        condition = condition.add(narratives::Column::Category.eq(category.as_str()));
    }
    if let Some(sub) = query
        .sub_category
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        condition = condition.add(narratives::Column::SubCategory.eq(sub));
    }
    if let Some(tag) = query
        .asset_tag
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        condition = condition.add(narratives::Column::AssetTag.eq(tag));
    }
    if let Some(tag) = query
        .duration
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        condition = condition.add(narratives::Column::DeadlineTag.eq(tag.to_ascii_uppercase()));
    }
    match query.filter {
        FeedFilter::All | FeedFilter::Trending => {}
        FeedFilter::New => {
            condition =
                condition.add(narratives::Column::CreatedAt.gte(state.now() - NEW_WITHIN_SECS));
        }
        FeedFilter::Backed => {
            let owner = query
                .wallet
                .ok_or_else(|| ApiError::validation("wallet required when filter=backed"))?;
            let backed: HashSet<String> = backings::Entity::find()
                .filter(backings::Column::Backer.eq(owner.to_string()))
                .all(db)
                .await?
                .into_iter()
                .map(|b| b.market_id)
                .collect();
            condition = condition.add(narratives::Column::MarketId.is_in(backed));
        }
    }
    let sort = query
        .sort
        .unwrap_or(if query.filter == FeedFilter::Trending {
            FeedSort::MostBacked
        } else {
            FeedSort::Newest
        });
    let select = narratives::Entity::find().filter(condition);
    let select = match sort {
        FeedSort::Newest | FeedSort::MostBacked => {
            select.order_by_desc(narratives::Column::CreatedAt)
        }
        FeedSort::Oldest => select.order_by_asc(narratives::Column::CreatedAt),
        FeedSort::Deadline => select.order_by_asc(narratives::Column::DeadlineAt),
    }
    .order_by_asc(narratives::Column::Id);
    // Backing totals live in the index, so ranking by them happens here over a bounded window.
    let by_backing = sort == FeedSort::MostBacked;
    let rows = select
        .limit(if by_backing {
            RANKING_WINDOW
        } else {
            query.limit
        })
        .all(db)
        .await?;
    let totals = Totals::of(state, &rows).await?;
    let views: Vec<NarrativeView> = rows.into_iter().map(|n| totals.view(n)).collect();
    Ok(if by_backing {
        most_backed(views, query.limit as usize)
    } else {
        views
    })
}

/// The five active narratives with the most SOL backed (ties: newest first).
pub async fn hero(state: &AppState) -> Result<Vec<NarrativeView>, ApiError> {
    let rows = narratives::Entity::find()
        .filter(active())
        .order_by_desc(narratives::Column::CreatedAt)
        .order_by_asc(narratives::Column::Id)
        .limit(RANKING_WINDOW)
        .all(state.store.db())
        .await?;
    let totals = Totals::of(state, &rows).await?;
    Ok(most_backed(
        rows.into_iter().map(|n| totals.view(n)).collect(),
        HERO_SIZE,
    ))
}

/// How many active narratives each filter value would list.
pub struct FilterCounts {
    pub total_active: u64,
    pub categories: BTreeMap<String, u64>,
    pub durations: BTreeMap<String, u64>,
    pub sub_categories: BTreeMap<String, u64>,
}

pub async fn filter_counts(state: &AppState) -> Result<FilterCounts, ApiError> {
    let rows: Vec<(String, Option<String>, String)> = narratives::Entity::find()
        .select_only()
        .column(narratives::Column::Category)
        .column(narratives::Column::SubCategory)
        .column(narratives::Column::DeadlineTag)
        .filter(active())
        .into_tuple()
        .all(state.store.db())
        .await?;
    let mut counts = FilterCounts {
        total_active: rows.len() as u64,
        categories: BTreeMap::new(),
        durations: BTreeMap::new(),
        sub_categories: BTreeMap::new(),
    };
    for (category, sub_category, tag) in rows {
        *counts.categories.entry(category).or_default() += 1;
        *counts.durations.entry(tag).or_default() += 1;
        if let Some(sub) = sub_category {
            *counts.sub_categories.entry(sub).or_default() += 1;
        }
    }
    Ok(counts)
}

/// One narrative; 404 when there is none.
pub async fn get(state: &AppState, id: NarrativeId) -> Result<narratives::Model, ApiError> {
    narratives::Entity::find_by_id(id.to_string())
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::not_found("narrative"))
}

/// When a pre-market narrative opens for backing (spec 3.1); `None` once it is open.
pub fn opens_at(narrative: &narratives::Model, now: i64) -> Option<i64> {
    narrative.opens_at.filter(|at| *at > now)
}

/// One narrative with its totals.
pub async fn single(state: &AppState, id: NarrativeId) -> Result<NarrativeView, ApiError> {
    let row = get(state, id).await?;
    let totals = Totals::of(state, std::slice::from_ref(&row)).await?;
    Ok(totals.view(row))
}
