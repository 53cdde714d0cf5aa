//! Retention of the tables anonymous calls grow: each run deletes what is past its period, and
//! the job runs again an hour later. The periods:
//!
//! - prepared transactions never confirmed: [`UNCONFIRMED_PREPARED_SECS`] (1 day) after they
//!   were prepared. Their blockhash lapsed within minutes, so none of them can still land, but
//!   one may have landed with its confirm never sent (a closed tab); confirmed ones are the
//!   record of what landed and stay. The moves into outside venues (DeFi deposits and
//!   withdrawals, borrows, repays, p0) stay [`UNCONFIRMED_VENUE_MOVE_SECS`] (30 days): no
//!   indexer sees those programs, so the confirm is the only way such a move that landed is
//!   recorded (the backings of our own programs are indexed from the ledger either way).
//!   Market creations stay as long: the creation fee was paid before the prepare, and only the
//!   confirm moves a creation on to review or open (a Classic market that landed would
//!   otherwise wait unreviewable, its fee spent). A narrative's prepare-mint stays while its
//!   mint can still be published (before the market's deadline): it may have landed with its
//!   publish refused (moderation, the daily cap), and publish reads it to retry.
//! - prepare-mints ([`forget_unlanded_mints`]): a day after the prepare, the ledger is asked
//!   whether the narrative's market exists. One that does is marked `landed` and kept for
//!   publish; one that does not can never land (its blockhash lapsed within minutes), and its
//!   mint and prepared transaction are deleted. While the node does not answer, nothing is.
//!   Unpublished mints go [`UNCONFIRMED_VENUE_MOVE_SECS`] after their market's deadline
//!   (publish refuses them from the deadline on, `deadline_passed`, for that month).
//! - the shield probe log: [`PROBE_LOG_SECS`] (30 days), far past the gate's ten-minute window.
//!   The newest row always stays, so its id (which lifted blocks are fenced by) keeps rising.
//! - shield partner applications: [`PARTNER_APPLICATION_SECS`] (90 days) for an operator to
//!   read them.
//! - finished jobs (`done`, `cancelled`): [`FINISHED_JOB_SECS`] (14 days) after they finished,
//!   except settlements, whose row is the narrative's settlement progress. `dead` jobs wait for
//!   an operator and stay.
//! - used wallet signatures: once the issued-at window refuses them anyway
//!   (`wallet_proof::forget_expired`).

use std::sync::Arc;

use narrative_store::entities::{
    jobs, narrative_mints, prepared_transactions, shield_partner_applications, shield_probe_log,
};
use narrative_store::Store;
use sea_orm::sea_query::{Expr, Query};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Select,
};

use crate::chain::ledger::Ledger;
use crate::chain::mints::markets_created;
use crate::chain::MoneyFlow;
use crate::clock::{SharedClock, DAY_SECS};
use crate::domain::borrow::flow::BorrowFlow;
use crate::domain::borrow::repay::RepayFlow;
use crate::domain::defi::deposit::DefiDeposit;
use crate::domain::defi::withdrawal::DefiWithdrawal;
use crate::domain::markets::creation::MarketCreation;
use crate::domain::p0::deposit::P0Deposit;
use crate::domain::p0::withdraw::P0Withdraw;
use crate::domain::wallet_proof;
use crate::jobs::retention::Retention;
use crate::jobs::settle_narrative::SettleNarrative;
use crate::jobs::{Handler, JobKind, JobOutcome, Leased};
use crate::values::NarrativeId;

pub const UNCONFIRMED_PREPARED_SECS: i64 = DAY_SECS;
pub const UNCONFIRMED_VENUE_MOVE_SECS: i64 = 30 * DAY_SECS;
/// The prepared kinds whose confirm is the only record of a move that landed (for a market
/// creation: the only way its creation moves on to review or open; the market itself is
/// indexed).
const VENUE_MOVES: [&str; 7] = [
    MarketCreation::KIND,
    DefiDeposit::KIND,
    DefiWithdrawal::KIND,
    BorrowFlow::KIND,
    RepayFlow::KIND,
    P0Deposit::KIND,
    P0Withdraw::KIND,
];
pub const PROBE_LOG_SECS: i64 = 30 * DAY_SECS;
pub const PARTNER_APPLICATION_SECS: i64 = 90 * DAY_SECS;
pub const FINISHED_JOB_SECS: i64 = 14 * DAY_SECS;
/// How often the job runs.
pub const EVERY_SECS: i64 = 3_600;
/// Prepare-mints one ledger read asks about (`getMultipleAccounts` reads 100).
const MINTS_PER_READ: u64 = 100;
/// Reads one run makes at most: 20,000 prepare-mints an hour, more than the keys one address
/// may hold can prepare.
const MINT_READS_PER_RUN: usize = 200;
/// A prepare-mint's status once its market is seen on the ledger.
pub const MINT_LANDED: &str = "landed";

/// Rows each rule deleted in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Deleted {
    pub prepared_transactions: u64,
    pub probe_log: u64,
    pub partner_applications: u64,
    pub jobs: u64,
    pub wallet_signatures: u64,
    /// Unpublished prepare-mints a month past their market's deadline.
    pub narrative_mints: u64,
}

/// What [`forget_unlanded_mints`] found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MintsChecked {
    /// Marked landed: their market is on the ledger.
    pub landed: u64,
    /// Deleted with their prepared transactions: their market never was.
    pub forgotten: u64,
}

/// Asks the ledger about every prepare-mint still `prepared` a day after it was made (oldest
/// first, [`MINTS_PER_READ`] a read, at most [`MINT_READS_PER_RUN`] reads): those whose market
/// exists are marked [`MINT_LANDED`], the others deleted with their prepared transactions, one
/// write transaction a read. A ledger error ends the run with what was done so far.
pub async fn forget_unlanded_mints(
    store: &Store,
    ledger: &dyn Ledger,
    now: i64,
) -> anyhow::Result<MintsChecked> {
    let db = store.db();
    let mut checked = MintsChecked::default();
    for _ in 0..MINT_READS_PER_RUN {
        let mints = unlanded_mints_due(now).all(db).await?;
        if mints.is_empty() {
            break;
        }
        let market_ids = mints
            .iter()
            .map(|m| {
                let id: NarrativeId = m.narrative_id.parse().map_err(anyhow::Error::msg)?;
                Ok(id.market_id())
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let created = markets_created(ledger, &market_ids).await?;
        let (landed, unlanded): (Vec<_>, Vec<_>) =
            mints.iter().zip(created).partition(|(_, created)| *created);
        let landed: Vec<&str> = landed
            .iter()
            .map(|(m, _)| m.narrative_id.as_str())
            .collect();
        let (narratives, prepared): (Vec<&str>, Vec<&str>) = unlanded
            .iter()
            .map(|(m, _)| (m.narrative_id.as_str(), m.prepared_id.as_str()))
            .unzip();
        let txn = store.begin_write().await?;
        if !landed.is_empty() {
            narrative_mints::Entity::update_many()
                .col_expr(narrative_mints::Column::Status, Expr::value(MINT_LANDED))
                .filter(narrative_mints::Column::NarrativeId.is_in(landed.iter().copied()))
                .filter(narrative_mints::Column::Status.eq("prepared"))
                .exec(&txn)
                .await?;
        }
        if !narratives.is_empty() {
            narrative_mints::Entity::delete_many()
                .filter(narrative_mints::Column::NarrativeId.is_in(narratives.iter().copied()))
                .filter(narrative_mints::Column::Status.eq("prepared"))
                .exec(&txn)
                .await?;
            prepared_transactions::Entity::delete_many()
                .filter(prepared_transactions::Column::Id.is_in(prepared.iter().copied()))
                .filter(prepared_transactions::Column::Status.eq("prepared"))
                .exec(&txn)
                .await?;
        }
        txn.commit().await?;
        checked.landed += landed.len() as u64;
        checked.forgotten += narratives.len() as u64;
    }
    Ok(checked)
}

/// The oldest prepare-mints [`forget_unlanded_mints`] asks the ledger about at `now`: still
/// `prepared` a day after they were made, [`MINTS_PER_READ`] of them, in the order of
/// `idx_narrative_mints_status_created` (public so a test can read the query's plan).
pub fn unlanded_mints_due(now: i64) -> Select<narrative_mints::Entity> {
    narrative_mints::Entity::find()
        .filter(narrative_mints::Column::Status.eq("prepared"))
        .filter(narrative_mints::Column::CreatedAt.lt(now - UNCONFIRMED_PREPARED_SECS))
        .order_by_asc(narrative_mints::Column::CreatedAt)
        .order_by_asc(narrative_mints::Column::NarrativeId)
        .limit(MINTS_PER_READ)
}

/// Deletes what is past its period at `now`.
pub async fn apply(db: &impl ConnectionTrait, now: i64) -> Result<Deleted, DbErr> {
    let publishable = Query::select()
        .column(narrative_mints::Column::PreparedId)
        .from(narrative_mints::Entity)
        .and_where(narrative_mints::Column::Status.is_in(["prepared", MINT_LANDED]))
        .and_where(narrative_mints::Column::DeadlineAt.gt(now))
        .to_owned();
    let past_their_period = Condition::any()
        .add(
            Condition::all()
                .add(prepared_transactions::Column::Kind.is_not_in(VENUE_MOVES))
                .add(prepared_transactions::Column::CreatedAt.lt(now - UNCONFIRMED_PREPARED_SECS)),
        )
        .add(prepared_transactions::Column::CreatedAt.lt(now - UNCONFIRMED_VENUE_MOVE_SECS));
    let prepared_transactions = prepared_transactions::Entity::delete_many()
        .filter(prepared_transactions::Column::Status.eq("prepared"))
        .filter(past_their_period)
        .filter(prepared_transactions::Column::Id.not_in_subquery(publishable))
        .exec(db)
        .await?
        .rows_affected;
    let newest_probe: Option<i64> = shield_probe_log::Entity::find()
        .select_only()
        .column_as(shield_probe_log::Column::Id.max(), "newest")
        .into_tuple()
        .one(db)
        .await?
        .flatten();
    let probe_log = match newest_probe {
        None => 0,
        Some(newest) => {
            shield_probe_log::Entity::delete_many()
                .filter(shield_probe_log::Column::CreatedAt.lt(now - PROBE_LOG_SECS))
                .filter(shield_probe_log::Column::Id.lt(newest))
                .exec(db)
                .await?
                .rows_affected
        }
    };
    let partner_applications = shield_partner_applications::Entity::delete_many()
        .filter(shield_partner_applications::Column::CreatedAt.lt(now - PARTNER_APPLICATION_SECS))
        .exec(db)
        .await?
        .rows_affected;
    let jobs = jobs::Entity::delete_many()
        .filter(jobs::Column::Status.is_in(["done", "cancelled"]))
        .filter(jobs::Column::UpdatedAt.lt(now - FINISHED_JOB_SECS))
        .filter(jobs::Column::Kind.ne(SettleNarrative::NAME))
        .filter(jobs::Column::Singleton.is_null())
        .exec(db)
        .await?
        .rows_affected;
    let wallet_signatures = wallet_proof::forget_expired(db, now).await?;
    let narrative_mints = narrative_mints::Entity::delete_many()
        .filter(narrative_mints::Column::Status.is_in(["prepared", MINT_LANDED]))
        .filter(narrative_mints::Column::DeadlineAt.lt(now - UNCONFIRMED_VENUE_MOVE_SECS))
        .exec(db)
        .await?
        .rows_affected;
    Ok(Deleted {
        prepared_transactions,
        probe_log,
        partner_applications,
        jobs,
        wallet_signatures,
        narrative_mints,
    })
}

/// Runs [`apply`] every [`EVERY_SECS`].
pub struct Retainer {
    pub store: Store,
    pub ledger: Arc<dyn Ledger>,
    pub clock: SharedClock,
}

#[async_trait::async_trait]
impl Handler<Retention> for Retainer {
    async fn run(&self, _: Leased<Retention>) -> anyhow::Result<JobOutcome> {
        let now = self.clock.now();
        // The rest of retention does not wait for the node: the mints are asked about again
        // next run.
        match forget_unlanded_mints(&self.store, self.ledger.as_ref(), now).await {
            Ok(checked) if checked != MintsChecked::default() => {
                tracing::info!(?checked, "retention: prepare-mints checked on the ledger");
            }
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(error = %format!("{error:#}"), "retention: prepare-mints not checked");
            }
        }
        let deleted = apply(self.store.db(), now).await?;
        if deleted != Deleted::default() {
            tracing::info!(?deleted, "retention: old rows deleted");
        }
        Ok(JobOutcome::Later(now + EVERY_SECS))
    }
}
