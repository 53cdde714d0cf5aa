//! Reads of the indexed markets that the api shares across its areas (the indexer writes them).

use std::collections::HashMap;

use crate::entities::{backings, market_backer_counts, markets};
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QuerySelect};

/// The live (not closed) indexed markets among `market_ids` (64 hex characters each), by id.
pub async fn markets_by_id(
    db: &impl ConnectionTrait,
    market_ids: impl IntoIterator<Item = String>,
) -> Result<HashMap<String, markets::Model>, DbErr> {
    Ok(markets::Entity::find()
        .filter(markets::Column::MarketId.is_in(market_ids))
        .filter(markets::Column::Closed.eq(false))
        .all(db)
        .await?
        .into_iter()
        .map(|m| (m.market_id.clone(), m))
        .collect())
}

/// Distinct wallets holding a live backing in each of `market_ids` (a wallet on both sides
/// counts once), as the triggers on `backings` keep them in `market_backer_counts`; markets
/// without any are absent.
pub async fn distinct_backers(
    db: &impl ConnectionTrait,
    market_ids: impl IntoIterator<Item = String>,
) -> Result<HashMap<String, i64>, DbErr> {
    Ok(market_backer_counts::Entity::find()
        .select_only()
        .column(market_backer_counts::Column::MarketId)
        .column(market_backer_counts::Column::Backers)
        .filter(market_backer_counts::Column::MarketId.is_in(market_ids))
        .filter(market_backer_counts::Column::Backers.gt(0))
        .into_tuple::<(String, i64)>()
        .all(db)
        .await?
        .into_iter()
        .collect())
}

/// A backing in a finalized market that has an outcome, with that result.
#[derive(Debug, Clone, PartialEq, Eq, sea_orm::FromQueryResult)]
pub struct ResolvedBacking {
    pub backer: String,
    pub market_id: String,
    /// `yes` or `no`.
    pub side: String,
    pub amount: i64,
    /// The side that won.
    pub outcome: String,
    pub finalized_at: i64,
    /// Null for a SOL market.
    pub mint: Option<String>,
    /// The narrative's category, when the market is a narrative's.
    pub category: Option<String>,
}

impl ResolvedBacking {
    pub fn correct(&self) -> bool {
        self.side == self.outcome
    }
}

/// Which resolved backings to read.
#[derive(Debug, Clone, Default)]
pub struct ResolvedFilter {
    /// These backers only (every wallet when `None`).
    pub backers: Option<Vec<String>>,
    /// Markets finalized in `[start, end)` only.
    pub finalized_between: Option<(i64, i64)>,
}

/// Every backing in a finalized market with an outcome that `filter` selects, with the
/// narrative's category when the market is one: one query. Ordered as results happened
/// (finalization time, then market, then side), so a wallet's streaks read in order.
pub async fn resolved_backings(
    db: &impl ConnectionTrait,
    filter: ResolvedFilter,
) -> Result<Vec<ResolvedBacking>, DbErr> {
    use sea_orm::sea_query::{Alias, Order, Query};
    use sea_orm::FromQueryResult;

    use crate::entities::narratives;
    let (b, m, n) = (backings::Entity, markets::Entity, narratives::Entity);
    let mut query = Query::select();
    query
        .column((b, backings::Column::Backer))
        .column((b, backings::Column::MarketId))
        .column((b, backings::Column::Side))
        .column((b, backings::Column::Amount))
        .expr_as(
            Expr::col((m, markets::Column::Outcome)),
            Alias::new("outcome"),
        )
        .column((m, markets::Column::FinalizedAt))
        .column((m, markets::Column::Mint))
        .expr_as(
            Expr::col((n, narratives::Column::Category)),
            Alias::new("category"),
        )
        .from(b)
        .inner_join(
            m,
            Expr::col((m, markets::Column::MarketId)).equals((b, backings::Column::MarketId)),
        )
        .left_join(
            n,
            Expr::col((n, narratives::Column::MarketId)).equals((b, backings::Column::MarketId)),
        )
        .and_where(Expr::col((m, markets::Column::Finalized)).eq(true))
        .and_where(Expr::col((m, markets::Column::Closed)).eq(false))
        .and_where(Expr::col((m, markets::Column::Outcome)).is_not_null())
        .order_by((m, markets::Column::FinalizedAt), Order::Asc)
        .order_by((b, backings::Column::MarketId), Order::Asc)
        .order_by((b, backings::Column::Side), Order::Asc)
        .order_by((b, backings::Column::Backer), Order::Asc);
    if let Some(backers) = filter.backers {
        query.and_where(Expr::col((b, backings::Column::Backer)).is_in(backers));
    }
    if let Some((start, end)) = filter.finalized_between {
        query
            .and_where(Expr::col((m, markets::Column::FinalizedAt)).gte(start))
            .and_where(Expr::col((m, markets::Column::FinalizedAt)).lt(end));
    }
    let statement = db.get_database_backend().build(&query);
    ResolvedBacking::find_by_statement(statement).all(db).await
}

/// The wallets holding a live backing in each of `market_ids` (either side).
pub async fn backers_by_market(
    db: &impl ConnectionTrait,
    market_ids: impl IntoIterator<Item = String>,
) -> Result<HashMap<String, std::collections::BTreeSet<String>>, DbErr> {
    let rows: Vec<(String, String)> = backings::Entity::find()
        .select_only()
        .column(backings::Column::MarketId)
        .column(backings::Column::Backer)
        .filter(backings::Column::MarketId.is_in(market_ids))
        .filter(backings::Column::Closed.eq(false))
        .into_tuple()
        .all(db)
        .await?;
    let mut by_market: HashMap<String, std::collections::BTreeSet<String>> = HashMap::new();
    for (market, backer) in rows {
        by_market.entry(market).or_default().insert(backer);
    }
    Ok(by_market)
}

/// The narratives whose markets are among `market_ids`, by market id, but those an operator
/// hid: what a public read may name beside a wallet's backings.
pub async fn visible_narratives_by_market(
    db: &impl ConnectionTrait,
    market_ids: impl IntoIterator<Item = String>,
) -> Result<HashMap<String, crate::entities::narratives::Model>, DbErr> {
    use crate::entities::narratives;
    Ok(narratives::Entity::find()
        .filter(narratives::Column::MarketId.is_in(market_ids))
        .filter(narratives::Column::Status.ne(narratives::HIDDEN))
        .all(db)
        .await?
        .into_iter()
        .map(|n| (n.market_id.clone(), n))
        .collect())
}

/// How many distinct wallets back the visible member narratives' markets of each of
/// `group_ids` (any backing, either side), counted by the database: a group listing would
/// otherwise load every backing of every member market.
pub async fn distinct_backers_by_group(
    db: &impl ConnectionTrait,
    group_ids: Vec<String>,
) -> Result<HashMap<String, u64>, DbErr> {
    use crate::entities::{narrative_group_members as members, narratives};
    use sea_orm::sea_query::{Alias, Func, Query};
    use sea_orm::FromQueryResult;

    #[derive(FromQueryResult)]
    struct Counted {
        group_id: String,
        backers: i64,
    }
    if group_ids.is_empty() {
        return Ok(HashMap::new());
    }
    let query = Query::select()
        .column((members::Entity, members::Column::GroupId))
        .expr_as(
            Func::count_distinct(Expr::col((backings::Entity, backings::Column::Backer))),
            Alias::new("backers"),
        )
        .from(members::Entity)
        .inner_join(
            narratives::Entity,
            Expr::col((narratives::Entity, narratives::Column::Id))
                .equals((members::Entity, members::Column::NarrativeId)),
        )
        .inner_join(
            backings::Entity,
            Expr::col((backings::Entity, backings::Column::MarketId))
                .equals((narratives::Entity, narratives::Column::MarketId)),
        )
        .and_where(Expr::col((members::Entity, members::Column::GroupId)).is_in(group_ids))
        .and_where(
            Expr::col((narratives::Entity, narratives::Column::Status)).ne(narratives::HIDDEN),
        )
        .group_by_col((members::Entity, members::Column::GroupId))
        .to_owned();
    let statement = db.get_database_backend().build(&query);
    Ok(Counted::find_by_statement(statement)
        .all(db)
        .await?
        .into_iter()
        .map(|c| (c.group_id, u64::try_from(c.backers).unwrap_or(0)))
        .collect())
}
