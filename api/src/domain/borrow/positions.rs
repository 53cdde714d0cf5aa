//! Open borrows as the ledger shows them now (spec 3.4, 4.7): each position's debt read from
//! its venue's loan account (interest at the venue's rate included) and the loan's health factor,
//! collateral value over debt value at current prices. The lender liquidates, not the service: a
//! position whose loan no longer owes its token was repaid or liquidated at the venue, so its
//! record follows (`closed_outside`) and the wallet is told.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::sync::Arc;

use narrative_store::entities::borrow_positions;
use narrative_store::Store;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, TransactionTrait};
use serde_json::json;

use super::flow::lender_in;
use super::{CRITICAL_HEALTH, URGENT_HEALTH, WARNING_HEALTH};
use crate::chain::ledger::{Ledger, LedgerError};
use crate::chain::venues::{Loan, LoanRead, Venues};
use crate::clock::SharedClock;
use crate::domain::defi::usd_of;
use crate::domain::notifications::{notify, Notice};
use crate::error::ApiError;
use crate::providers::prices::PriceFeed;
use crate::state::AppState;
use crate::values::{NotificationKind, TokenSymbol, VenueId, Wallet};

/// A loan's value at current prices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Health {
    pub collateral_usd: f64,
    pub debt_usd: f64,
}

impl Health {
    pub fn of(loan: &Loan, sol_usd: f64) -> Health {
        let usd = |items: &[(TokenSymbol, u64)]| -> f64 {
            items
                .iter()
                .map(|(token, base)| usd_of(*token, *base, sol_usd))
                .sum()
        };
        Health {
            collateral_usd: usd(&loan.collateral),
            debt_usd: usd(&loan.debts),
        }
    }

    /// Collateral value over debt value (spec 3.4): below 1.0 the lender liquidates.
    pub fn factor(&self) -> f64 {
        if self.debt_usd > 0.0 {
            self.collateral_usd / self.debt_usd
        } else {
            f64::INFINITY
        }
    }
}

/// Spec 3.4's alert levels, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AlertLevel {
    Warning,
    Urgent,
    Critical,
}

impl AlertLevel {
    /// The level a health factor is at, if any: below 1.50, 1.20, 1.05.
    pub fn of(factor: f64) -> Option<AlertLevel> {
        if factor < CRITICAL_HEALTH {
            Some(AlertLevel::Critical)
        } else if factor < URGENT_HEALTH {
            Some(AlertLevel::Urgent)
        } else if factor < WARNING_HEALTH {
            Some(AlertLevel::Warning)
        } else {
            None
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AlertLevel::Warning => "warning",
            AlertLevel::Urgent => "urgent",
            AlertLevel::Critical => "critical",
        }
    }

    pub fn parse(text: &str) -> Option<AlertLevel> {
        [
            AlertLevel::Warning,
            AlertLevel::Urgent,
            AlertLevel::Critical,
        ]
        .into_iter()
        .find(|l| l.as_str() == text)
    }

    pub fn kind(self) -> NotificationKind {
        match self {
            AlertLevel::Warning => NotificationKind::BorrowHealthWarning,
            AlertLevel::Urgent => NotificationKind::BorrowHealthUrgent,
            AlertLevel::Critical => NotificationKind::BorrowHealthCritical,
        }
    }
}

/// An open position now.
#[derive(Debug, Clone)]
pub struct PositionNow {
    pub row: borrow_positions::Model,
    /// The token it borrowed (`row.asset`, parsed).
    pub asset: TokenSymbol,
    /// What its loan owes in its token now, in base units.
    pub owed_base: u64,
    pub owed_usd: f64,
    pub health: Health,
}

impl PositionNow {
    pub fn principal_base(&self) -> u64 {
        u64::try_from(self.row.amount_base).unwrap_or(0)
    }
}

/// What reads loans: the store, the ledger, the venues and the prices (a request's, or the
/// health job's, which has no request).
#[derive(Clone)]
pub struct Loans {
    pub store: Store,
    pub ledger: Arc<dyn Ledger>,
    pub venues: Arc<Venues>,
    pub prices: Arc<dyn PriceFeed>,
    pub clock: SharedClock,
}

impl Loans {
    pub fn of(state: &AppState) -> Loans {
        Loans {
            store: state.store.clone(),
            ledger: state.chain.ledger.clone(),
            venues: state.defi.clone(),
            prices: state.prices.clone(),
            clock: state.clock.clone(),
        }
    }

    /// The wallet's open positions, oldest first.
    pub async fn open_rows(&self, wallet: &str) -> Result<Vec<borrow_positions::Model>, ApiError> {
        Ok(borrow_positions::Entity::find()
            .filter(borrow_positions::Column::Wallet.eq(wallet))
            .filter(borrow_positions::Column::Status.eq("open"))
            .order_by_asc(borrow_positions::Column::CreatedAt)
            .all(self.store.db())
            .await?)
    }

    /// The wallet's open positions as the ledger shows them now; the ones the lender closed
    /// are closed here too (and left out).
    pub async fn open_now(&self, wallet: &Wallet) -> Result<Vec<PositionNow>, ApiError> {
        let rows = self.open_rows(&wallet.to_string()).await?;
        self.now_of(wallet, rows).await
    }

    /// `rows` (open positions of `wallet`) as the ledger shows them now.
    pub async fn now_of(
        &self,
        wallet: &Wallet,
        rows: Vec<borrow_positions::Model>,
    ) -> Result<Vec<PositionNow>, ApiError> {
        if rows.is_empty() {
            return Ok(vec![]);
        }
        let sol_usd = self.prices.sol_usd().await.map_err(|e| {
            ApiError::provider_unavailable("price_unavailable", "the price source", &e)
        })?;
        let mut loans: BTreeMap<VenueId, LoanRead> = BTreeMap::new();
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let protocol: VenueId = row.protocol.parse().map_err(ApiError::internal)?;
            let asset: TokenSymbol = row.asset.parse().map_err(ApiError::internal)?;
            if let Entry::Vacant(slot) = loans.entry(protocol) {
                let (venue, _) = lender_in(&self.venues, protocol, asset)?;
                let loan = venue
                    .lender()
                    .expect("checked by `lender_in`")
                    .loan(self.ledger.as_ref(), &wallet.pubkey())
                    .await?;
                slot.insert(loan);
            }
            let read = &loans[&protocol];
            let loan = read.loan.as_ref();
            let owed_base = loan.map_or(0, |l| l.owed(asset));
            let Some(loan) = loan.filter(|_| owed_base > 0) else {
                ensure_read_after_landing(&row, read.slot)?;
                self.close_outside(&row).await?;
                continue;
            };
            out.push(PositionNow {
                owed_usd: usd_of(asset, owed_base, sol_usd),
                health: Health::of(loan, sol_usd),
                owed_base,
                asset,
                row,
            });
        }
        Ok(out)
    }

    /// Records that the lender closed `row` (repaid or liquidated at the venue) and tells the
    /// wallet, once.
    async fn close_outside(&self, row: &borrow_positions::Model) -> Result<(), ApiError> {
        let now = self.clock.now();
        let txn = self.store.db().begin().await?;
        let closed = borrow_positions::Entity::update_many()
            .col_expr(
                borrow_positions::Column::Status,
                Expr::value("closed_outside"),
            )
            .col_expr(borrow_positions::Column::ClosedAt, Expr::value(now))
            .filter(borrow_positions::Column::Id.eq(row.id.as_str()))
            .filter(borrow_positions::Column::Status.eq("open"))
            .exec(&txn)
            .await?;
        if closed.rows_affected == 1 {
            notify(
                &txn,
                Notice {
                    wallet: row.wallet.clone(),
                    kind: NotificationKind::BorrowPositionClosed,
                    title: format!("Your {} borrow at {} is closed", row.asset, row.protocol),
                    body: format!(
                        "The lender shows no {} owed on this borrow any more: it was repaid or \
                         liquidated at {}.",
                        row.asset, row.protocol
                    ),
                    data: json!({"position_id": row.id, "protocol": row.protocol, "asset": row.asset}),
                    event: row.id.clone(),
                },
                now,
            )
            .await?;
        }
        txn.commit().await?;
        tracing::info!(position = %row.id, "borrow closed at the venue");
        Ok(())
    }
}

/// A loan read that shows no debt closes `row` only when it is no older than the borrow: a node
/// behind the slot the borrow landed in (one of several behind a load balancer) has not seen
/// the loan yet, and its read is a 503 to retry, not a repayment.
fn ensure_read_after_landing(
    row: &borrow_positions::Model,
    read_slot: u64,
) -> Result<(), LedgerError> {
    match row.landed_slot {
        Some(landed) if i64::try_from(read_slot).is_ok_and(|read| read < landed) => {
            Err(LedgerError::Unavailable(format!(
                "the node read slot {read_slot}, before borrow {} landed in slot {landed}",
                row.id
            )))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_fall_at_the_spec_thresholds() {
        assert_eq!(AlertLevel::of(1.5), None);
        assert_eq!(AlertLevel::of(1.4999), Some(AlertLevel::Warning));
        assert_eq!(AlertLevel::of(1.2), Some(AlertLevel::Warning));
        assert_eq!(AlertLevel::of(1.19), Some(AlertLevel::Urgent));
        assert_eq!(AlertLevel::of(1.05), Some(AlertLevel::Urgent));
        assert_eq!(AlertLevel::of(1.04), Some(AlertLevel::Critical));
        assert!(AlertLevel::Critical > AlertLevel::Warning);
        assert_eq!(AlertLevel::parse("urgent"), Some(AlertLevel::Urgent));
    }

    #[test]
    fn health_values_both_sides_at_the_price() {
        let loan = Loan {
            account: Default::default(),
            collateral: vec![(TokenSymbol::Sol, 10_000_000_000)],
            debts: vec![(TokenSymbol::Usdc, 750_000_000)],
        };
        let health = Health::of(&loan, 150.0);
        assert_eq!(health.collateral_usd, 1_500.0);
        assert_eq!(health.debt_usd, 750.0);
        assert_eq!(health.factor(), 2.0);
        assert_eq!(Health::of(&loan, 90.0).factor(), 1.2);
    }
}
