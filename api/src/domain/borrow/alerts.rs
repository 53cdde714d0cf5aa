//! Health alerts (spec 3.4, 6.2): the `borrow_health` job looks at the price every
//! [`PRICE_CHECK_SECS`] and re-reads every open borrow's loan when [`CHECK_SECS`] have passed
//! since the last reading or the price moved by [`PRICE_MOVE_BPS`] or more. A position whose
//! health factor falls to a worse level than the one last alerted (warning < 1.50, urgent
//! < 1.20, critical < 1.05) alerts its wallet once, in the feed and by Web Push (a notification
//! type per level, so the wallet's preferences choose); while the level holds nothing repeats,
//! and a recovery re-arms the levels it left. A borrow the lender closed is closed here
//! (`Loans::now_of`).

use std::collections::BTreeMap;

use narrative_store::entities::borrow_positions;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, TransactionTrait};
use serde_json::json;
use tokio::sync::Mutex;

use super::positions::{AlertLevel, Loans, PositionNow};
use crate::domain::notifications::{notify, Notice};
use crate::error::ApiError;
use crate::jobs::borrow_health::BorrowHealth;
use crate::jobs::{Handler, JobOutcome, Leased};
use crate::values::Wallet;

/// How often every open borrow is re-read at the latest.
pub const CHECK_SECS: i64 = 300;
/// How often the price is looked at.
pub const PRICE_CHECK_SECS: i64 = 60;
/// A price move that triggers a reading before [`CHECK_SECS`]: 1 %.
pub const PRICE_MOVE_BPS: f64 = 100.0;

/// The job's handler; it remembers the price and time of its last reading (a restarted
/// process reads at once).
pub struct HealthWatch {
    pub loans: Loans,
    last: Mutex<Option<(f64, i64)>>,
}

/// What a reading did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    pub positions: u64,
    pub alerts: u64,
    /// Wallets whose loans could not be read (tried again at the next reading).
    pub failed: u64,
}

impl HealthWatch {
    pub fn new(loans: Loans) -> HealthWatch {
        HealthWatch {
            loans,
            last: Mutex::new(None),
        }
    }

    /// Whether a reading is due at `now` with the price at `price`.
    fn due(last: Option<(f64, i64)>, price: f64, now: i64) -> bool {
        match last {
            None => true,
            Some((then, at)) => {
                now - at >= CHECK_SECS || ((price - then) / then).abs() * 10_000.0 >= PRICE_MOVE_BPS
            }
        }
    }

    /// Reads every open borrow's loan and alerts where a level was crossed downward.
    pub async fn read_all(&self) -> Result<Reading, ApiError> {
        let rows = borrow_positions::Entity::find()
            .filter(borrow_positions::Column::Status.eq("open"))
            .order_by_asc(borrow_positions::Column::Wallet)
            .order_by_asc(borrow_positions::Column::CreatedAt)
            .all(self.loans.store.db())
            .await?;
        let mut by_wallet: BTreeMap<String, Vec<borrow_positions::Model>> = BTreeMap::new();
        for row in rows {
            by_wallet.entry(row.wallet.clone()).or_default().push(row);
        }
        let mut reading = Reading::default();
        for (wallet, rows) in by_wallet {
            let Ok(wallet) = wallet.parse::<Wallet>() else {
                continue;
            };
            match self.loans.now_of(&wallet, rows).await {
                Ok(open) => {
                    for position in open {
                        reading.positions += 1;
                        reading.alerts += u64::from(self.follow(&position).await?);
                    }
                }
                Err(error) => {
                    tracing::warn!(%wallet, code = error.code(), "borrow health: loans unreadable");
                    reading.failed += 1;
                }
            }
        }
        Ok(reading)
    }

    /// Records `position`'s health and alerts its wallet when it fell to a worse level than
    /// the one last alerted; whether it alerted.
    async fn follow(&self, position: &PositionNow) -> Result<bool, ApiError> {
        let now = self.loans.clock.now();
        let factor = position.health.factor();
        let level = AlertLevel::of(factor);
        let alerted = position
            .row
            .alert_level
            .as_deref()
            .and_then(AlertLevel::parse);
        let alert = level.filter(|l| alerted.is_none_or(|a| *l > a));
        let txn = self.loans.store.db().begin().await?;
        borrow_positions::Entity::update_many()
            .col_expr(
                borrow_positions::Column::LastHealth,
                Expr::value(factor.is_finite().then_some(factor)),
            )
            .col_expr(borrow_positions::Column::HealthCheckedAt, Expr::value(now))
            .col_expr(
                borrow_positions::Column::AlertLevel,
                Expr::value(level.map(|l| l.as_str().to_owned())),
            )
            .filter(borrow_positions::Column::Id.eq(position.row.id.as_str()))
            .filter(borrow_positions::Column::Status.eq("open"))
            .exec(&txn)
            .await?;
        if let Some(level) = alert {
            notify(&txn, notice(position, level, factor, now), now).await?;
        }
        txn.commit().await?;
        Ok(alert.is_some())
    }
}

fn notice(position: &PositionNow, level: AlertLevel, factor: f64, now: i64) -> Notice {
    let row = &position.row;
    let threshold = match level {
        AlertLevel::Warning => super::WARNING_HEALTH,
        AlertLevel::Urgent => super::URGENT_HEALTH,
        AlertLevel::Critical => super::CRITICAL_HEALTH,
    };
    Notice {
        wallet: row.wallet.clone(),
        kind: level.kind(),
        title: format!("Borrow health {factor:.2}: {}", level.as_str()),
        body: format!(
            "Your {} borrow at {} has a health factor of {factor:.2}, below {threshold:.2}. \
             Below 1.00 the lender liquidates it: repay or add collateral.",
            row.asset, row.protocol
        ),
        data: json!({
            "position_id": row.id,
            "protocol": row.protocol,
            "asset": row.asset,
            "health_factor": factor,
            "level": level.as_str(),
        }),
        // One per crossing: a later fall to the same level is another event.
        event: format!("{}:{}:{now}", row.id, level.as_str()),
    }
}

#[async_trait::async_trait]
impl Handler<BorrowHealth> for HealthWatch {
    async fn run(&self, _: Leased<BorrowHealth>) -> anyhow::Result<JobOutcome> {
        let now = self.loans.clock.now();
        let next = now + PRICE_CHECK_SECS;
        let price = match self.loans.prices.sol_usd().await {
            Ok(price) => price,
            Err(error) => {
                tracing::warn!(error = %format!("{error:#}"), "borrow health: no price");
                return Ok(JobOutcome::Later(next));
            }
        };
        let mut last = self.last.lock().await;
        if Self::due(*last, price, now) {
            let reading = self
                .read_all()
                .await
                .map_err(|e| anyhow::anyhow!("borrow health: {}", e.code()))?;
            if reading != Reading::default() {
                tracing::info!(?reading, "borrow health read");
            }
            *last = Some((price, now));
        }
        Ok(JobOutcome::Later(next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_is_due_on_the_interval_or_a_one_percent_move() {
        assert!(HealthWatch::due(None, 150.0, 0));
        let last = Some((150.0, 1_000));
        assert!(!HealthWatch::due(last, 150.0, 1_000 + CHECK_SECS - 1));
        assert!(HealthWatch::due(last, 150.0, 1_000 + CHECK_SECS));
        assert!(!HealthWatch::due(last, 151.0, 1_060), "0.67 %");
        assert!(HealthWatch::due(last, 148.5, 1_060), "1 % down");
        assert!(HealthWatch::due(last, 151.5, 1_060), "1 % up");
    }
}
