//! The shield keeper (`shield_keeper`, one perpetual job, paid by `KEEPER_KEYPAIR`): the steps
//! of a coverage's life that shield_vault leaves to anyone, taken as soon as the ledger's clock
//! allows them, so no backer waits on a stranger to move their money:
//! - `finalize_resolution` once a proposed outcome's 172,800 s timelock has passed;
//! - `forward_seam_share` for a resolved coverage whose seam share still waits in the losing
//!   vault, and `forward_payout` for its treasury's and a partnership's protocol share (as
//!   settlement forwards a market's crucible share: each in a transaction of its own, so a
//!   recipient refusing never holds up a finalisation or another recipient);
//! - `trigger_timeout_refund` for a coverage nobody resolved once its resolution delay after the
//!   period's end has passed, so its backers can take their principal back.
//!
//! The store says which coverages may be due; the ledger decides (each coverage and the clock
//! are read from it first), so a run repeated after a crash or a lost answer does nothing twice.
//! What the keeper changed is read through into the store at once. One coverage whose step
//! fails is logged and tried again on the next run; it does not hold up the others.

use std::sync::Arc;

use anchor_lang::AccountDeserialize;
use anyhow::Context;
use narrative_sdk::crucible_pool::state::AssetPool;
use narrative_sdk::shield_vault::constants::{RESOLUTION_DELAY_SECS, RESOLUTION_TIMELOCK_SECS};
use narrative_sdk::shield_vault::state::{
    Coverage, CoverageStatus, PayoutRecipient, ShieldProgramState, ShieldSide,
};
use narrative_sdk::{pda, Instruction};
use narrative_store::entities::shield_coverages as coverages;
use narrative_store::Store;
use sea_orm::sea_query::Condition;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use solana_keypair::Keypair;

use crate::chain::ledger::{decode_clock, Ledger, LedgerAccount, CLOCK_SYSVAR};
use crate::chain::refresh::read_through;
use crate::chain::send::send_and_confirm;
use crate::clock::SharedClock;
use crate::jobs::shield_keeper::ShieldKeeper;
use crate::jobs::{Handler, JobOutcome, Leased};

/// The longest the keeper sleeps, however far off the next due step it knows of: an outcome
/// an oracle proposes later (due after its 48 h timelock, sooner than the 14-day resolution
/// delays already known) reaches the store without waking the keeper, and is picked up within
/// this.
pub const RECHECK_SECS: i64 = 600;
/// How soon a run that left work undone (a failed step, a full batch) runs again.
const RETRY_SECS: i64 = 60;
/// Coverages of each kind (due active ones, resolved ones with shares waiting) tended per run; the rest wait
/// for the next run, due at once.
const BATCH: u64 = 20;

/// What a coverage needs next, by the ledger's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Finalize,
    ForwardSeamShare {
        loser: ShieldSide,
    },
    ForwardPayout {
        loser: ShieldSide,
        recipient: PayoutRecipient,
    },
    TimeoutRefund,
    /// Nothing yet; something becomes due at this ledger time.
    WaitUntil(i64),
}

/// The steps `coverage` needs at the ledger time `now`, as shield_vault would allow them: at
/// most one while it is active; for a resolved coverage, one for each share still waiting in
/// the losing vault. None when nothing is left for a keeper (claims are the backers').
pub fn next_steps(coverage: &Coverage, now: i64) -> Vec<Step> {
    match coverage.status {
        CoverageStatus::Active => vec![active_step(coverage, now)],
        CoverageStatus::Resolved => {
            let Some(winner) = coverage.outcome else {
                return Vec::new();
            };
            let loser = winner.opposite();
            let payout = |recipient| Step::ForwardPayout { loser, recipient };
            let waiting = [
                (
                    coverage.seam_payout,
                    coverage.seam_forwarded,
                    Step::ForwardSeamShare { loser },
                ),
                (
                    coverage.treasury_payout,
                    coverage.treasury_forwarded,
                    payout(PayoutRecipient::Treasury),
                ),
                (
                    coverage.protocol_payout,
                    coverage.protocol_forwarded,
                    payout(PayoutRecipient::Protocol),
                ),
            ];
            waiting
                .into_iter()
                .filter(|(amount, forwarded, _)| *amount > 0 && !forwarded)
                .map(|(_, _, step)| step)
                .collect()
        }
        CoverageStatus::Refunding => Vec::new(),
    }
}

/// An active coverage's step: finalising its proposed outcome or refunding it, when due.
fn active_step(coverage: &Coverage, now: i64) -> Step {
    let (due, step) = match coverage.outcome {
        Some(_) => (
            coverage
                .outcome_proposed_at
                .saturating_add(RESOLUTION_TIMELOCK_SECS),
            Step::Finalize,
        ),
        None => (
            coverage.period_end.saturating_add(RESOLUTION_DELAY_SECS),
            Step::TimeoutRefund,
        ),
    };
    if now >= due {
        step
    } else {
        Step::WaitUntil(due)
    }
}

fn decode<T: AccountDeserialize>(account: &Option<LedgerAccount>) -> Option<T> {
    T::try_deserialize(&mut account.as_ref()?.data.as_slice()).ok()
}

pub struct ShieldTender {
    pub store: Store,
    pub ledger: Arc<dyn Ledger>,
    /// `KEEPER_KEYPAIR`: pays the fees; every step is open to anyone.
    pub keeper: Option<Arc<Keypair>>,
    pub clock: SharedClock,
}

#[async_trait::async_trait]
impl Handler<ShieldKeeper> for ShieldTender {
    async fn run(&self, _: Leased<ShieldKeeper>) -> anyhow::Result<JobOutcome> {
        let keeper = self
            .keeper
            .as_ref()
            .context("the shield keeper needs KEEPER_KEYPAIR")?;
        self.tend(keeper).await
    }
}

impl ShieldTender {
    async fn tend(&self, keeper: &Keypair) -> anyhow::Result<JobOutcome> {
        let now = self.clock.now();
        let (candidates, full_batch) = self.candidates(now).await?;
        let ledger = self.ledger.as_ref();
        let mut addresses = vec![CLOCK_SYSVAR, pda::shield::program_state()];
        addresses.extend(candidates.iter().map(pda::shield::coverage));
        let (_, accounts) = ledger.accounts(&addresses).await?;
        let clock = decode_clock(&accounts[0])?;
        let ledger_now = clock.unix_timestamp;
        // Due times are the ledger's; the job is rescheduled on the worker's clock.
        let at = |ledger_due: i64| now + (ledger_due - ledger_now).max(0);
        let Some(program) = decode::<ShieldProgramState>(&accounts[1]) else {
            tracing::warn!("shield keeper: shield_vault is not initialised");
            return Ok(JobOutcome::Later(now + RECHECK_SECS));
        };

        let recheck = now + RECHECK_SECS;
        let mut next = self
            .next_due(now)
            .await?
            .map_or(recheck, |due| due.min(recheck));
        let mut failed = false;
        let mut took_a_step = false;
        for (protocol_id, account) in candidates.iter().zip(&accounts[2..]) {
            let Some(coverage) = decode::<Coverage>(account) else {
                tracing::warn!(
                    protocol_id = hex::encode(protocol_id),
                    "shield keeper: coverage not readable on the ledger"
                );
                continue;
            };
            for step in next_steps(&coverage, ledger_now) {
                let instruction = match step {
                    Step::WaitUntil(due) => {
                        next = next.min(at(due));
                        continue;
                    }
                    Step::Finalize => narrative_sdk::shield::finalize_resolution(protocol_id),
                    Step::TimeoutRefund => {
                        narrative_sdk::shield::trigger_timeout_refund(protocol_id)
                    }
                    Step::ForwardPayout { loser, recipient } => {
                        let wallet = match recipient {
                            PayoutRecipient::Treasury => program.treasury,
                            PayoutRecipient::Protocol => coverage.protocol_wallet,
                        };
                        narrative_sdk::shield::forward_payout(protocol_id, loser, recipient, wallet)
                    }
                    Step::ForwardSeamShare { loser } => {
                        match self.forward(protocol_id, loser).await {
                            Ok(instruction) => instruction,
                            Err(error) => {
                                tracing::warn!(protocol_id = hex::encode(protocol_id), error = %format!("{error:#}"), "shield keeper: crucible_pool not readable");
                                failed = true;
                                continue;
                            }
                        }
                    }
                };
                match send_and_confirm(ledger, keeper, &[instruction]).await {
                    Ok(signature) => {
                        tracing::info!(protocol_id = hex::encode(protocol_id), ?step, %signature, "shield keeper: step taken");
                        let mut changed = vec![pda::shield::coverage(protocol_id)];
                        if matches!(step, Step::ForwardSeamShare { .. }) {
                            changed.push(pda::crucible::sol_asset_pool());
                        }
                        read_through(&self.store, ledger, &changed).await?;
                        // A finalised coverage may have shares to forward next.
                        next = now;
                        took_a_step = true;
                    }
                    Err(error) => {
                        tracing::warn!(protocol_id = hex::encode(protocol_id), ?step, error = %format!("{error:#}"), "shield keeper: step failed");
                        failed = true;
                    }
                }
            }
        }
        // More may be due beyond a full batch; but only a run that moved something looks again
        // at once, so a batch the ledger's (lagging) clock holds back cannot spin.
        if full_batch && took_a_step {
            next = now;
        } else if failed {
            next = next.min(now + RETRY_SECS).max(now + 1);
        }
        Ok(JobOutcome::Later(next))
    }

    /// Coverages the store says may need a step at `now` (the ledger has the last word): active
    /// ones whose timelock or resolution delay is over, resolved ones with a share still waiting.
    /// Also says whether a batch was full (more may be due).
    async fn candidates(&self, now: i64) -> anyhow::Result<(Vec<[u8; 32]>, bool)> {
        let mut full_batch = false;
        let timelock_over = Condition::all()
            .add(coverages::Column::Outcome.is_not_null())
            .add(coverages::Column::OutcomeProposedAt.lte(now - RESOLUTION_TIMELOCK_SECS));
        let delay_over = Condition::all()
            .add(coverages::Column::Outcome.is_null())
            .add(coverages::Column::PeriodEnd.lte(now - RESOLUTION_DELAY_SECS));
        let active_due = Condition::all()
            .add(coverages::Column::Status.eq("active"))
            .add(Condition::any().add(timelock_over).add(delay_over));
        let waiting = |payout: coverages::Column, forwarded: coverages::Column| {
            Condition::all().add(payout.gt(0)).add(forwarded.eq(false))
        };
        let shares_waiting = Condition::all()
            .add(coverages::Column::Status.eq("resolved"))
            .add(
                Condition::any()
                    .add(waiting(
                        coverages::Column::SeamPayout,
                        coverages::Column::SeamForwarded,
                    ))
                    .add(waiting(
                        coverages::Column::TreasuryPayout,
                        coverages::Column::TreasuryForwarded,
                    ))
                    .add(waiting(
                        coverages::Column::ProtocolPayout,
                        coverages::Column::ProtocolForwarded,
                    )),
            );
        // Two batches, so shares their recipients keep refusing can never crowd out the
        // finalisations and refunds (nor the other way round).
        let mut rows = Vec::new();
        for due in [active_due, shares_waiting] {
            let batch: Vec<String> = coverages::Entity::find()
                .select_only()
                .column(coverages::Column::ProtocolId)
                .filter(coverages::Column::Closed.eq(false))
                .filter(due)
                .order_by_asc(coverages::Column::PeriodEnd)
                .limit(BATCH)
                .into_tuple()
                .all(self.store.db())
                .await?;
            full_batch |= batch.len() as u64 == BATCH;
            rows.extend(batch);
        }
        rows.iter()
            .map(|id| {
                let mut bytes = [0u8; 32];
                hex::decode_to_slice(id, &mut bytes)
                    .with_context(|| format!("stored protocol id {id} is not 32 bytes of hex"))?;
                Ok(bytes)
            })
            .collect::<anyhow::Result<_>>()
            .map(|ids| (ids, full_batch))
    }

    /// The soonest time after `now` (worker's clock) at which an active coverage in the store
    /// becomes due, if any.
    async fn next_due(&self, now: i64) -> anyhow::Result<Option<i64>> {
        let active = || {
            coverages::Entity::find()
                .filter(coverages::Column::Closed.eq(false))
                .filter(coverages::Column::Status.eq("active"))
        };
        let proposed: Option<Option<i64>> = active()
            .select_only()
            .column_as(coverages::Column::OutcomeProposedAt.min(), "at")
            .filter(coverages::Column::Outcome.is_not_null())
            .into_tuple()
            .one(self.store.db())
            .await?;
        let period_end: Option<Option<i64>> = active()
            .select_only()
            .column_as(coverages::Column::PeriodEnd.min(), "at")
            .filter(coverages::Column::Outcome.is_null())
            .into_tuple()
            .one(self.store.db())
            .await?;
        let dues = [
            proposed.flatten().map(|at| at + RESOLUTION_TIMELOCK_SECS),
            period_end.flatten().map(|at| at + RESOLUTION_DELAY_SECS),
        ];
        Ok(dues.into_iter().flatten().map(|due| due.max(now)).min())
    }

    /// `forward_seam_share` into crucible_pool's current SOL epoch, as read from the ledger.
    async fn forward(
        &self,
        protocol_id: &[u8; 32],
        loser: ShieldSide,
    ) -> anyhow::Result<Instruction> {
        let (_, pool) = self
            .ledger
            .accounts(&[pda::crucible::sol_asset_pool()])
            .await?;
        let pool: AssetPool =
            decode(&pool[0]).context("crucible_pool's SOL pool is not on the ledger")?;
        Ok(narrative_sdk::shield::forward_seam_share(
            protocol_id,
            loser,
            pool.current_epoch,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use narrative_sdk::shield_vault::state::CoverageVersion;

    /// A coverage from its serialised zero bytes (every field at its zero), with the fields a
    /// step depends on set by `with`.
    fn coverage(with: impl FnOnce(&mut Coverage)) -> Coverage {
        use anchor_lang::AnchorDeserialize;
        let mut bytes = vec![CoverageVersion::CURRENT.get()];
        bytes.resize(1 + <Coverage as anchor_lang::Space>::INIT_SPACE, 0);
        let mut coverage = Coverage::deserialize(&mut bytes.as_slice()).expect("zeroed coverage");
        with(&mut coverage);
        coverage
    }

    const PERIOD_END: i64 = 1_800_000_000;

    #[test]
    fn a_proposed_outcome_finalises_exactly_when_its_timelock_is_over() {
        let proposed = coverage(|c| {
            c.outcome = Some(ShieldSide::Exploit);
            c.outcome_proposed_at = PERIOD_END;
        });
        let due = PERIOD_END + RESOLUTION_TIMELOCK_SECS;
        assert_eq!(next_steps(&proposed, due - 1), [Step::WaitUntil(due)]);
        assert_eq!(next_steps(&proposed, due), [Step::Finalize]);
    }

    #[test]
    fn an_unresolved_coverage_refunds_exactly_when_its_delay_is_over() {
        let silent = coverage(|c| c.period_end = PERIOD_END);
        let due = PERIOD_END + RESOLUTION_DELAY_SECS;
        assert_eq!(next_steps(&silent, due - 1), [Step::WaitUntil(due)]);
        assert_eq!(next_steps(&silent, due), [Step::TimeoutRefund]);
    }

    /// A partnership's exploit outcome: all three shares wait in the (SAFE) losing vault.
    fn exploit_won(with: impl FnOnce(&mut Coverage)) -> Coverage {
        coverage(|c| {
            c.status = CoverageStatus::Resolved;
            c.outcome = Some(ShieldSide::Exploit);
            c.seam_payout = 30_000_000;
            c.treasury_payout = 50_000_000;
            c.protocol_payout = 100_000_000;
            with(c);
        })
    }

    #[test]
    fn each_waiting_share_is_forwarded_from_the_losing_side_once() {
        let loser = ShieldSide::Safe;
        let treasury = Step::ForwardPayout {
            loser,
            recipient: PayoutRecipient::Treasury,
        };
        let protocol = Step::ForwardPayout {
            loser,
            recipient: PayoutRecipient::Protocol,
        };
        let seam = Step::ForwardSeamShare { loser };
        assert_eq!(
            next_steps(&exploit_won(|_| {}), 0),
            [seam, treasury, protocol]
        );
        // Each share is its own step: one its recipient refuses leaves the others due.
        let seam_left = exploit_won(|c| c.seam_forwarded = true);
        assert_eq!(next_steps(&seam_left, 0), [treasury, protocol]);
        let treasury_left = exploit_won(|c| {
            c.seam_forwarded = true;
            c.protocol_forwarded = true;
        });
        assert_eq!(next_steps(&treasury_left, 0), [treasury]);
        let all_left = exploit_won(|c| {
            c.seam_forwarded = true;
            c.treasury_forwarded = true;
            c.protocol_forwarded = true;
        });
        assert_eq!(next_steps(&all_left, 0), []);
        // A community shield has no protocol share.
        let community = exploit_won(|c| c.protocol_payout = 0);
        assert_eq!(next_steps(&community, 0), [seam, treasury]);
        let safe_won = coverage(|c| {
            c.status = CoverageStatus::Resolved;
            c.outcome = Some(ShieldSide::Safe);
        });
        assert_eq!(next_steps(&safe_won, 0), [], "no shares on a safe outcome");
        let refunding = coverage(|c| c.status = CoverageStatus::Refunding);
        assert_eq!(next_steps(&refunding, i64::MAX), []);
    }
}
