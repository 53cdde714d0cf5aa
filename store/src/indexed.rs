//! Reads of the indexed markets that the api shares across its areas (the indexer writes them).

use std::collections::HashMap;

use crate::entities::{backings, markets};
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
/// counts once), leaving out `except` (a creator's own stake); markets without any are absent.
pub async fn distinct_backers(
    db: &impl ConnectionTrait,
    market_ids: impl IntoIterator<Item = String>,
    except: Option<&str>,
) -> Result<HashMap<String, i64>, DbErr> {
    let mut query = backings::Entity::find()
        .select_only()
        .column(backings::Column::MarketId)
        .column_as(
            Expr::col(backings::Column::Backer).count_distinct(),
            "backers",
        )
        .filter(backings::Column::MarketId.is_in(market_ids))
        .filter(backings::Column::Closed.eq(false))
        .group_by(backings::Column::MarketId);
    if let Some(wallet) = except {
        query = query.filter(backings::Column::Backer.ne(wallet));
    }
    Ok(query
        .into_tuple::<(String, i64)>()
        .all(db)
        .await?
        .into_iter()
        .collect())
}
