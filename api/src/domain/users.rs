//! A user's records (spec 4.15): the wallet's backings from the index, newest first, paged, with
//! its total, what it backed in all, and each backing's market and narrative.

use narrative_sdk::binary_vault::constants::ORACLE_STATUS_REFUND;
use narrative_store::entities::{backings, markets, narratives};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::error::ApiError;
use crate::state::AppState;
use crate::values::Wallet;

/// Spec 8: transaction history pages hold 50 by default and 200 at most.
pub const DEFAULT_PAGE_SIZE: i64 = 50;
pub const MAX_PAGE_SIZE: i64 = 200;

pub struct Backing {
    pub backing: backings::Model,
    pub market: Option<markets::Model>,
    pub narrative: Option<narratives::Model>,
}

impl Backing {
    /// `open`, `won`, `lost` or `refunded`, from the indexed market.
    pub fn status(&self) -> &'static str {
        match &self.market {
            Some(m) if m.oracle_status == i32::from(ORACLE_STATUS_REFUND) => "refunded",
            Some(m) if m.finalized => match &m.outcome {
                Some(outcome) if *outcome == self.backing.side => "won",
                Some(_) => "lost",
                None => "refunded",
            },
            _ => "open",
        }
    }
}

pub struct Page {
    pub backings: Vec<Backing>,
    pub total: u64,
    pub total_backed_lamports: i64,
}

/// Page `page` (from 1) of `size` of the wallet's backings, most recently backed first.
pub async fn backings(
    state: &AppState,
    wallet: &Wallet,
    page: u64,
    size: u64,
) -> Result<Page, ApiError> {
    let db = state.store.db();
    let mine = backings::Entity::find()
        .filter(backings::Column::Backer.eq(wallet.to_string()))
        .filter(backings::Column::Closed.eq(false));
    let total = mine.clone().count(db).await?;
    let total_backed_lamports: Option<i64> = mine
        .clone()
        .select_only()
        .column_as(
            narrative_store::sql::sum_bigint(backings::Column::Amount),
            "backed",
        )
        .into_tuple()
        .one(db)
        .await?
        .flatten();
    let rows = mine
        .order_by_desc(backings::Column::LastBackedAt)
        .order_by_asc(backings::Column::Address)
        .limit(size)
        // Within what the database binds (a signed 64-bit value): a page past every row is
        // empty, not an error.
        .offset(
            page.saturating_sub(1)
                .saturating_mul(size)
                .min(i64::MAX as u64),
        )
        .all(db)
        .await?;
    let market_ids: Vec<String> = rows.iter().map(|b| b.market_id.clone()).collect();
    let market_of = narrative_store::indexed::markets_by_id(db, market_ids.clone()).await?;
    let narrative_of =
        narrative_store::indexed::visible_narratives_by_market(db, market_ids).await?;
    let backings = rows
        .into_iter()
        .map(|backing| Backing {
            market: market_of.get(&backing.market_id).cloned(),
            narrative: narrative_of.get(&backing.market_id).cloned(),
            backing,
        })
        .collect();
    Ok(Page {
        backings,
        total,
        total_backed_lamports: total_backed_lamports.unwrap_or(0),
    })
}
