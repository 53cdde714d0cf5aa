//! Narrative reads (spec 4.1): the public feed with its filters, the hero list, the filter
//! counts and the single read with its pre-market gate (spec 3.1). `sol_backed` and `backers`
//! come from each narrative's indexed market: SOL backed on both sides, and distinct wallets
//! (the batch writer's count). Each read is one query: the narratives joined with their markets
//! and backer counts, filtered, ordered and cut in the database.

use std::collections::BTreeMap;

use narrative_store::entities::{backings, market_backer_counts, markets, narratives};
use sea_orm::sea_query::{Expr, ExprTrait, Func, Query};
use sea_orm::{
    ColumnTrait, Condition, EntityTrait, FromQueryResult, JoinType, QueryFilter, QueryOrder,
    QuerySelect, Select,
};

use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{enum_value, sol, Category, NarrativeId, OracleStatus, Wallet};

/// `filter=new`: created within this many seconds.
const NEW_WITHIN_SECS: i64 = 72 * 3_600;
/// Narratives in the hero list.
const HERO_SIZE: u64 = 5;

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

/// A narrative as the joined query reads it.
#[derive(Debug, FromQueryResult)]
struct Row {
    #[sea_orm(nested)]
    narrative: narratives::Model,
    backed: i64,
    backers: i64,
}

impl From<Row> for NarrativeView {
    fn from(row: Row) -> Self {
        NarrativeView {
            narrative: row.narrative,
            sol_backed: sol(row.backed),
            backers: row.backers,
        }
    }
}

/// Lamports backed on the narrative's market, 0 without one.
fn backed() -> Expr {
    Func::coalesce([
        Expr::col((markets::Entity, markets::Column::YesTotal))
            .add(Expr::col((markets::Entity, markets::Column::NoTotal))),
        Expr::val(0i64),
    ])
    .into()
}

/// `select` joined with each narrative's market and its backer count, read as views.
fn with_totals(select: Select<narratives::Entity>) -> sea_orm::Selector<sea_orm::SelectModel<Row>> {
    select
        .join(
            JoinType::LeftJoin,
            narratives::Entity::belongs_to(markets::Entity)
                .from(narratives::Column::MarketId)
                .to(markets::Column::MarketId)
                .into(),
        )
        .join(
            JoinType::LeftJoin,
            narratives::Entity::belongs_to(market_backer_counts::Entity)
                .from(narratives::Column::MarketId)
                .to(market_backer_counts::Column::MarketId)
                .into(),
        )
        .column_as(backed(), "backed")
        .column_as(
            Expr::from(Func::coalesce([
                Expr::col((
                    market_backer_counts::Entity,
                    market_backer_counts::Column::Backers,
                )),
                Expr::val(0i64),
            ])),
            "backers",
        )
        .into_model::<Row>()
}

/// The `status` of a narrative an operator hid: no public read shows it.
pub use narrative_store::entities::narratives::HIDDEN;

/// Not hidden by an operator.
pub fn visible() -> Condition {
    Condition::all().add(narratives::Column::Status.ne(HIDDEN))
}

fn active() -> Condition {
    visible().add(narratives::Column::OracleStatus.is_in(OracleStatus::eligible_names()))
}

/// What the feed lists, and when that changes without a write (the oldest of a `new` list
/// stops being new), if it does.
pub struct Feed {
    pub views: Vec<NarrativeView>,
    pub fresh_until: Option<i64>,
}

pub async fn feed(state: &AppState, query: FeedQuery) -> Result<Feed, ApiError> {
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
            condition = condition.add(
                narratives::Column::MarketId.in_subquery(
                    Query::select()
                        .column(backings::Column::MarketId)
                        .from(backings::Entity)
                        .and_where(backings::Column::Backer.eq(owner.to_string()))
                        .to_owned(),
                ),
            );
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
        FeedSort::Newest => select.order_by_desc(narratives::Column::CreatedAt),
        FeedSort::Oldest => select.order_by_asc(narratives::Column::CreatedAt),
        FeedSort::Deadline => select.order_by_asc(narratives::Column::DeadlineAt),
        // Ties newest first.
        FeedSort::MostBacked => select
            .order_by_desc(backed())
            .order_by_desc(narratives::Column::CreatedAt),
    }
    .order_by_asc(narratives::Column::Id)
    .limit(query.limit);
    let views: Vec<NarrativeView> = with_totals(select)
        .all(db)
        .await?
        .into_iter()
        .map(NarrativeView::from)
        .collect();
    let fresh_until = (query.filter == FeedFilter::New)
        .then(|| {
            views
                .iter()
                .map(|v| v.narrative.created_at + NEW_WITHIN_SECS)
                .min()
        })
        .flatten();
    Ok(Feed { views, fresh_until })
}

/// The five active narratives with the most SOL backed (ties: newest first).
pub async fn hero(state: &AppState) -> Result<Vec<NarrativeView>, ApiError> {
    let select = narratives::Entity::find()
        .filter(active())
        .order_by_desc(backed())
        .order_by_desc(narratives::Column::CreatedAt)
        .order_by_asc(narratives::Column::Id)
        .limit(HERO_SIZE);
    Ok(with_totals(select)
        .all(state.store.db())
        .await?
        .into_iter()
        .map(NarrativeView::from)
        .collect())
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

/// One narrative; 404 when there is none or an operator hid it.
pub async fn get(state: &AppState, id: NarrativeId) -> Result<narratives::Model, ApiError> {
    narratives::Entity::find_by_id(id.to_string())
        .filter(visible())
        .one(state.store.db())
        .await?
        .ok_or_else(|| ApiError::not_found("narrative"))
}

/// When a pre-market narrative opens for backing (spec 3.1); `None` once it is open.
pub fn opens_at(narrative: &narratives::Model, now: i64) -> Option<i64> {
    narrative.opens_at.filter(|at| *at > now)
}

/// One narrative with its totals; 404 when there is none or it is hidden.
pub async fn single(state: &AppState, id: NarrativeId) -> Result<NarrativeView, ApiError> {
    let select = narratives::Entity::find_by_id(id.to_string()).filter(visible());
    with_totals(select)
        .one(state.store.db())
        .await?
        .map(NarrativeView::from)
        .ok_or_else(|| ApiError::not_found("narrative"))
}
