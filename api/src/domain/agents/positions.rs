//! An agent's positions and history (spec 2.7) from its wallet's indexed backings, and the
//! leaderboard by realised PnL.

use std::collections::HashMap;

use narrative_store::entities::{agents, backings, markets, narratives};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};

use crate::error::ApiError;
use crate::state::AppState;
use crate::values::sol;

/// Spec 8: agent history size.
pub const HISTORY_SIZE: usize = 100;

/// Spec 2.7's agent position.
pub struct Position {
    pub backing: backings::Model,
    pub narrative: Option<narratives::Model>,
    /// The market variant: `yield` or `classic` (`unknown` before it is indexed).
    pub yield_type: String,
    pub usd_equivalent: f64,
}

/// `wallet`'s backings, newest first (open ones only when `open_only`), with their narratives.
pub async fn positions(
    state: &AppState,
    wallet: &str,
    open_only: bool,
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
    let stories = narrative_store::indexed::narratives_by_market(db, market_ids).await?;
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

/// Agents ranked by realised PnL (ties by id), a page of them.
pub async fn leaderboard(
    state: &AppState,
    limit: u64,
    offset: u64,
) -> Result<Vec<Standing>, ApiError> {
    let db = state.store.db();
    let all = agents::Entity::find().all(db).await?;
    let wallets: Vec<String> = all.iter().map(|a| a.wallet_address.clone()).collect();
    // (backings, staked, realised) per wallet.
    let mut totals: HashMap<String, (u64, i64, i64)> = HashMap::new();
    for b in backings::Entity::find()
        .filter(backings::Column::Backer.is_in(wallets))
        .all(db)
        .await?
    {
        let t = totals.entry(b.backer).or_default();
        t.0 += 1;
        t.1 = t.1.saturating_add(b.amount);
        if b.claimed {
            t.2 = t.2.saturating_add(b.payout.saturating_sub(b.amount));
        }
    }
    let mut standings: Vec<Standing> = all
        .into_iter()
        .map(|agent| {
            let (total_backings, volume, pnl) = totals
                .get(&agent.wallet_address)
                .copied()
                .unwrap_or_default();
            Standing {
                agent,
                total_backings,
                volume,
                pnl,
            }
        })
        .collect();
    standings.sort_by(|a, b| b.pnl.cmp(&a.pnl).then_with(|| a.agent.id.cmp(&b.agent.id)));
    Ok(standings
        .into_iter()
        .skip(offset as usize)
        .take(limit as usize)
        .collect())
}
