//! A wallet's eruption state (spec 4.3 names the route, not its shape): its streak of correct
//! backings and its burst of activity. The rules (also in docs/decisions.md):
//!
//! - **Streak**: the conviction profile's current and longest streak and streak multiplier, and
//!   the next milestone ([`MILESTONES`]; reaching one is a `streak_milestone` notification).
//! - **Burst**: backings the wallet made in the last 24 hours (indexed `MarketBacked` events, by
//!   the ledger's time); [`BURST_BACKINGS`] or more is an active burst.
//! - **State**: `erupting` from a streak of [`ERUPTION_STREAK`], `warming` with any streak or an
//!   active burst, `dormant` otherwise.

use narrative_sdk::decode::{decode_event, BinaryEvent, ProgramEvent};
use narrative_store::entities::program_events;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use crate::domain::profiles::conviction::{self, Score};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::Wallet;

/// Streaks that are milestones.
pub const MILESTONES: [u32; 5] = [3, 5, 10, 25, 50];
/// A streak this long erupts.
pub const ERUPTION_STREAK: u32 = 5;
/// The burst window.
pub const BURST_WINDOW_SECS: i64 = 86_400;
/// Backings within the window that make a burst.
pub const BURST_BACKINGS: u64 = 3;
/// How many of the wallet's latest backings are looked at for the burst (more than a burst
/// needs; a wallet backing more often than this a day is bursting anyway).
const BURST_SCAN: u64 = 500;

/// The first milestone above `streak`.
pub fn next_milestone(streak: u32) -> Option<u32> {
    MILESTONES.into_iter().find(|m| *m > streak)
}

pub struct Eruption {
    pub score: Score,
    pub next_milestone: Option<u32>,
    pub burst_backings: u64,
    pub burst_lamports: u64,
    pub last_backed_at: Option<i64>,
}

impl Eruption {
    pub fn burst_active(&self) -> bool {
        self.burst_backings >= BURST_BACKINGS
    }

    pub fn state(&self) -> &'static str {
        if self.score.current_streak >= ERUPTION_STREAK {
            "erupting"
        } else if self.score.current_streak > 0 || self.burst_active() {
            "warming"
        } else {
            "dormant"
        }
    }
}

pub async fn eruption(state: &AppState, wallet: &Wallet) -> Result<Eruption, ApiError> {
    let db = state.store.db();
    let score = conviction::wallet_score(db, wallet).await?;
    let events = program_events::Entity::find()
        .filter(program_events::Column::Program.eq("binary_vault"))
        .filter(program_events::Column::Name.eq("MarketBacked"))
        .filter(program_events::Column::Actor.eq(wallet.to_string()))
        .order_by_desc(program_events::Column::Id)
        .limit(BURST_SCAN)
        .all(db)
        .await?;
    let since = state.now() - BURST_WINDOW_SECS;
    let (mut burst_backings, mut burst_lamports, mut last_backed_at) = (0u64, 0u64, None);
    for event in events {
        let Some(ProgramEvent::Binary(BinaryEvent::MarketBacked(e))) =
            decode_event(&narrative_sdk::ids::BINARY_VAULT, &event.data)
        else {
            continue;
        };
        last_backed_at = last_backed_at.max(Some(e.timestamp));
        if e.timestamp >= since {
            burst_backings += 1;
            burst_lamports = burst_lamports.saturating_add(e.amount);
        }
    }
    Ok(Eruption {
        next_milestone: next_milestone(score.current_streak),
        score,
        burst_backings,
        burst_lamports,
        last_backed_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milestones_come_in_order() {
        assert_eq!(next_milestone(0), Some(3));
        assert_eq!(next_milestone(3), Some(5));
        assert_eq!(next_milestone(9), Some(10));
        assert_eq!(next_milestone(50), None);
    }
}
