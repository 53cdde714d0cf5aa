//! The Echo Pool keeper (`echo_keeper`, one perpetual job): crucible_pool's keeper key closes
//! each SOL epoch once it is due on the ledger's clock, posting the root of the distribution
//! computed from the index (`distribution`), and rolls over what wallets left unclaimed once an
//! epoch's claim window has passed.
//!
//! Every step is safe to repeat. A distribution is stored, with every allocation and its proof,
//! before its root is sent, and reused by every later attempt, so a retry posts the same root
//! and the proofs always match it. Every run first reconciles what was stored with the chain: a
//! root that landed while its answer was lost is booked as closed; an epoch the admin vetoed or
//! someone else rolled over is booked so. The bookkeeping of a close (its times, the
//! notifications, the ruffler's draw) is one transaction guarded by a conditional update, so it
//! happens once.

use std::sync::Arc;

use anchor_lang::AccountDeserialize;
use anyhow::{ensure, Context};
use narrative_sdk::crucible_pool::instructions::CloseEpochArgs;
use narrative_sdk::crucible_pool::state::{AssetPool, CrucibleState, Epoch, EpochStatus};
use narrative_sdk::crucible_pool::SOL_MINT;
use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::{echo_allocations, echo_distributions};
use narrative_store::Store;
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder,
};
use serde_json::json;
use solana_keypair::Keypair;
use solana_signer::Signer;

use super::distribution::{self, OpenEpoch};
use super::ruffler;
use crate::chain::ledger::{decode_clock, Ledger, LedgerAccount, CLOCK_SYSVAR};
use crate::chain::refresh::read_through;
use crate::chain::send::send_and_confirm;
use crate::clock::{iso, SharedClock};
use crate::domain::notifications::{notices, notify};
use crate::jobs::echo_keeper::EchoKeeper;
use crate::jobs::{Handler, JobOutcome, Leased};

/// How soon a keeper that found nothing to tend (crucible_pool not initialised) looks again,
/// and the longest it sleeps however far off the next close or rollover is: the admin's
/// `update_settings` can shorten the epoch or the claim window once its timelock is over, and
/// nothing wakes the keeper when it lands.
pub const RECHECK_SECS: i64 = 600;

/// Distribution statuses.
pub const COMPUTED: &str = "computed";
pub const CLOSED: &str = "closed";
pub const ROLLED_OVER: &str = "rolled_over";
pub const VETOED: &str = "vetoed";
/// A root on chain that is not the one stored (never expected: the keeper key is the only one
/// that posts roots); its stored allocations cannot be claimed.
pub const SUPERSEDED: &str = "superseded";

fn decode<T: AccountDeserialize>(account: &Option<LedgerAccount>) -> Option<T> {
    T::try_deserialize(&mut account.as_ref()?.data.as_slice()).ok()
}

fn parse_root(text: &str) -> anyhow::Result<[u8; 32]> {
    let mut root = [0u8; 32];
    hex::decode_to_slice(text, &mut root).context("a stored Merkle root is not 32 bytes of hex")?;
    Ok(root)
}

pub struct Keeper {
    pub store: Store,
    pub ledger: Arc<dyn Ledger>,
    /// `KEEPER_KEYPAIR`.
    pub keeper: Option<Arc<Keypair>>,
    pub clock: SharedClock,
}

#[async_trait::async_trait]
impl Handler<EchoKeeper> for Keeper {
    async fn run(&self, _: Leased<EchoKeeper>) -> anyhow::Result<JobOutcome> {
        let keeper = self
            .keeper
            .as_ref()
            .context("the Echo Pool keeper needs KEEPER_KEYPAIR")?;
        self.tend(keeper).await
    }
}

impl Keeper {
    async fn tend(&self, keeper: &Keypair) -> anyhow::Result<JobOutcome> {
        let now = self.clock.now();
        let ledger = self.ledger.as_ref();
        let settings = read_through(
            &self.store,
            ledger,
            &[pda::crucible::state(), pda::crucible::sol_asset_pool()],
        )
        .await?;
        let (Some(state), Some(pool)) = (
            decode::<CrucibleState>(&settings[0]),
            decode::<AssetPool>(&settings[1]),
        ) else {
            tracing::warn!("echo keeper: crucible_pool or its SOL pool is not initialised");
            return Ok(JobOutcome::Later(now + RECHECK_SECS));
        };
        ensure!(
            state.keeper == keeper.pubkey(),
            "KEEPER_KEYPAIR ({}) is not crucible_pool's keeper ({})",
            keeper.pubkey(),
            state.keeper
        );
        let (_, clock) = ledger.accounts(&[CLOCK_SYSVAR]).await?;
        let clock = decode_clock(&clock[0])?;
        let ledger_now = clock.unix_timestamp;
        // Due times are the ledger's; the job is rescheduled on the worker's clock.
        let at = |ledger_due: i64| now + (ledger_due - ledger_now).max(0);

        self.reconcile(ledger_now).await?;
        let next_rollover = self.roll_over_expired(keeper, &pool, ledger_now).await?;

        let epoch_address = pda::crucible::epoch(&SOL_MINT, pool.current_epoch);
        let read = read_through(&self.store, ledger, &[epoch_address]).await?;
        let epoch: Epoch = decode(&read[0]).context("the open epoch is not on the ledger")?;
        let due = epoch.started_at.saturating_add(state.epoch_duration_secs);
        if ledger_now < due {
            let next = next_rollover.map_or(due, |r| r.min(due));
            return Ok(JobOutcome::Later(at(next).min(now + RECHECK_SECS)));
        }
        let open = OpenEpoch {
            address: epoch_address,
            number: pool.current_epoch,
            started_at: epoch.started_at,
            available: epoch.deposited.saturating_add(epoch.rolled_in),
            duration_secs: state.epoch_duration_secs,
            claim_window_secs: state.claim_window_secs,
        };
        let stored = self.distribution(&open, ledger_now).await?;
        let close = narrative_sdk::crucible::close_epoch(
            keeper.pubkey(),
            SOL_MINT,
            open.number,
            CloseEpochArgs {
                conviction_pool: stored.conviction_pool as u64,
                creator_pool: stored.creator_pool as u64,
                merkle_root: parse_root(&stored.merkle_root)?,
            },
        );
        let signature = send_and_confirm(ledger, keeper, &[close])
            .await
            .context("close_epoch")?;
        tracing::info!(epoch = open.number, %signature, "echo keeper: epoch closed");
        self.book_close(&stored, Some(signature.to_string()))
            .await?;
        // Look again at once: a rollover or the next epoch may be due already.
        Ok(JobOutcome::Later(now))
    }

    /// The stored distribution of `epoch`, or the one computed at the ledger's `now` and stored
    /// with every allocation and proof before any root is sent.
    async fn distribution(
        &self,
        epoch: &OpenEpoch,
        now: i64,
    ) -> anyhow::Result<echo_distributions::Model> {
        let db = self.store.db();
        let key = epoch.address.to_string();
        if let Some(stored) = echo_distributions::Entity::find_by_id(key.clone())
            .one(db)
            .await?
        {
            return Ok(stored);
        }
        let computed = distribution::compute(db, epoch, now).await?;
        let leaves = distribution::leaves(&computed.split);
        let entries: Vec<(Pubkey, u64)> = leaves.iter().map(|(w, s)| (*w, s.total())).collect();
        let tree = narrative_sdk::merkle::Distribution::new(&epoch.address, &entries);
        let conviction_pool: u64 = leaves.iter().map(|(_, s)| s.conviction).sum();
        let creator_pool: u64 = leaves.iter().map(|(_, s)| s.creator).sum();
        let computed_at = self.clock.now();
        let txn = self.store.begin_write().await?;
        let inserted = echo_distributions::Entity::insert(echo_distributions::ActiveModel {
            epoch_address: Set(key.clone()),
            mint: Set(None),
            epoch_number: Set(epoch.number as i64),
            window_start: Set(computed.window_start),
            window_end: Set(computed.window_end),
            available: Set(epoch.available as i64),
            conviction_pool: Set(conviction_pool as i64),
            creator_pool: Set(creator_pool as i64),
            merkle_root: Set(narrative_sdk::decode::hex32(&tree.root())),
            status: Set(COMPUTED.into()),
            computed_at: Set(computed_at),
            closed_at: Set(None),
            close_signature: Set(None),
            claimable_at: Set(None),
            claim_deadline: Set(None),
            rolled_over_at: Set(None),
        })
        .on_conflict(
            OnConflict::column(echo_distributions::Column::EpochAddress)
                .do_nothing()
                .to_owned(),
        )
        .exec_without_returning(&txn)
        .await?;
        if inserted == 1 {
            for (wallet, share) in &leaves {
                let (_, proof) = tree
                    .proof(wallet)
                    .context("a wallet of the split has no leaf")?;
                let proof: Vec<String> = proof.iter().map(narrative_sdk::decode::hex32).collect();
                echo_allocations::Entity::insert(echo_allocations::ActiveModel {
                    epoch_address: Set(key.clone()),
                    wallet: Set(wallet.to_string()),
                    epoch_number: Set(epoch.number as i64),
                    conviction_amount: Set(share.conviction as i64),
                    creator_amount: Set(share.creator as i64),
                    amount: Set(share.total() as i64),
                    proof: Set(json!(proof)),
                    detail: Set(computed.detail(&wallet.to_string())),
                })
                .exec_without_returning(&txn)
                .await?;
            }
        }
        txn.commit().await?;
        echo_distributions::Entity::find_by_id(key)
            .one(db)
            .await?
            .context("a stored distribution vanished")
    }

    /// Books a root that is on chain: the epoch's times, the allocations' notifications, the
    /// ruffler's tickets and draw. Once: only the update that moves the distribution from
    /// `computed` does anything.
    async fn book_close(
        &self,
        stored: &echo_distributions::Model,
        signature: Option<String>,
    ) -> anyhow::Result<()> {
        let epoch_address: Pubkey = stored.epoch_address.parse()?;
        let number = stored.epoch_number as u64;
        let read = read_through(
            &self.store,
            self.ledger.as_ref(),
            &[
                epoch_address,
                pda::crucible::epoch(&SOL_MINT, number + 1),
                pda::crucible::sol_asset_pool(),
            ],
        )
        .await?;
        let epoch: Epoch = decode(&read[0]).context("the closed epoch is not on the ledger")?;
        let now = self.clock.now();
        let txn = self.store.begin_write().await?;
        let booked = echo_distributions::Entity::update_many()
            .col_expr(echo_distributions::Column::Status, Expr::value(CLOSED))
            .col_expr(
                echo_distributions::Column::ClosedAt,
                Expr::value(Some(epoch.closed_at)),
            )
            .col_expr(
                echo_distributions::Column::CloseSignature,
                Expr::value(signature),
            )
            .col_expr(
                echo_distributions::Column::ClaimableAt,
                Expr::value(Some(epoch.claimable_at)),
            )
            .col_expr(
                echo_distributions::Column::ClaimDeadline,
                Expr::value(Some(epoch.claim_deadline)),
            )
            .filter(echo_distributions::Column::EpochAddress.eq(stored.epoch_address.as_str()))
            .filter(echo_distributions::Column::Status.eq(COMPUTED))
            .exec(&txn)
            .await?;
        if booked.rows_affected == 1 {
            let allocations = echo_allocations::Entity::find()
                .filter(echo_allocations::Column::EpochAddress.eq(stored.epoch_address.as_str()))
                .order_by_asc(echo_allocations::Column::Wallet)
                .all(&txn)
                .await?;
            let claimable = iso(epoch.claimable_at);
            for allocation in &allocations {
                let wallet = allocation.wallet.as_str();
                notify(
                    &txn,
                    notices::epoch_ended(
                        wallet,
                        number,
                        &stored.epoch_address,
                        allocation.amount as u64,
                        &claimable,
                    ),
                    now,
                )
                .await?;
                if allocation.creator_amount > 0 {
                    notify(
                        &txn,
                        notices::creator_royalty(
                            wallet,
                            number,
                            &stored.epoch_address,
                            allocation.creator_amount as u64,
                        ),
                        now,
                    )
                    .await?;
                }
                if allocation.conviction_amount > 0 {
                    ruffler::win_ticket(
                        &txn,
                        wallet,
                        number,
                        format!("echo:{number}:{wallet}"),
                        now,
                    )
                    .await?;
                }
            }
            ruffler::draw(
                &txn,
                number,
                &epoch_address,
                &parse_root(&stored.merkle_root)?,
                now,
            )
            .await?;
        }
        txn.commit().await?;
        Ok(())
    }

    /// Brings stored distributions in line with the chain: a root that landed unseen is booked,
    /// a vetoed root or an epoch someone else rolled over is marked.
    async fn reconcile(&self, ledger_now: i64) -> anyhow::Result<()> {
        let db = self.store.db();
        let pending = echo_distributions::Entity::find()
            .filter(echo_distributions::Column::Mint.is_null())
            .filter(echo_distributions::Column::Status.is_in([COMPUTED, CLOSED]))
            .order_by_asc(echo_distributions::Column::EpochNumber)
            .all(db)
            .await?;
        if pending.is_empty() {
            return Ok(());
        }
        let addresses: Vec<Pubkey> = pending
            .iter()
            .map(|d| d.epoch_address.parse())
            .collect::<Result<_, _>>()?;
        let (_, accounts) = self.ledger.accounts(&addresses).await?;
        for (stored, account) in pending.iter().zip(&accounts) {
            let Some(epoch) = decode::<Epoch>(account) else {
                continue;
            };
            let same_root = narrative_sdk::decode::hex32(&epoch.merkle_root) == stored.merkle_root;
            match (stored.status.as_str(), epoch.status) {
                (_, EpochStatus::Open) => {}
                (COMPUTED, _) if !same_root => {
                    tracing::error!(
                        epoch = stored.epoch_number,
                        "echo keeper: the epoch closed with a root that is not the stored one"
                    );
                    self.mark(stored, SUPERSEDED, None).await?;
                }
                (COMPUTED, EpochStatus::Closed) => self.book_close(stored, None).await?,
                // Closed and rolled over while this keeper did not look. After the claim window
                // (anyone may roll over a lapsed epoch) it was claimable first: booked, then
                // expired. Before it, the root was vetoed: nothing was claimable, nobody is told.
                (COMPUTED, EpochStatus::RolledOver) if ledger_now > epoch.claim_deadline => {
                    self.book_close(stored, None).await?;
                    self.mark(stored, ROLLED_OVER, Some(ledger_now)).await?;
                }
                (COMPUTED, EpochStatus::RolledOver) => {
                    self.mark(stored, VETOED, Some(ledger_now)).await?;
                }
                (_, EpochStatus::RolledOver) => {
                    // A veto happens before claims open; a rollover after the claim window.
                    let expired = stored
                        .claim_deadline
                        .is_some_and(|deadline| ledger_now > deadline);
                    let status = if expired { ROLLED_OVER } else { VETOED };
                    self.mark(stored, status, Some(ledger_now)).await?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Rolls over every closed epoch whose claim window has passed; the ledger time of the next
    /// one due, if any.
    async fn roll_over_expired(
        &self,
        keeper: &Keypair,
        pool: &AssetPool,
        ledger_now: i64,
    ) -> anyhow::Result<Option<i64>> {
        let db = self.store.db();
        let closed = echo_distributions::Entity::find()
            .filter(echo_distributions::Column::Mint.is_null())
            .filter(echo_distributions::Column::Status.eq(CLOSED))
            .order_by_asc(echo_distributions::Column::EpochNumber)
            .all(db)
            .await?;
        let mut next = None;
        for stored in closed {
            let Some(deadline) = stored.claim_deadline else {
                continue;
            };
            if ledger_now <= deadline {
                next = Some(next.map_or(deadline + 1, |n: i64| n.min(deadline + 1)));
                continue;
            }
            let expired = stored.epoch_number as u64;
            let rollover = narrative_sdk::crucible::rollover(SOL_MINT, expired, pool.current_epoch);
            send_and_confirm(self.ledger.as_ref(), keeper, &[rollover])
                .await
                .context("rollover")?;
            read_through(
                &self.store,
                self.ledger.as_ref(),
                &[
                    stored.epoch_address.parse()?,
                    pda::crucible::epoch(&SOL_MINT, pool.current_epoch),
                ],
            )
            .await?;
            self.mark(&stored, ROLLED_OVER, Some(ledger_now)).await?;
            tracing::info!(
                epoch = expired,
                "echo keeper: unclaimed remainder rolled over"
            );
        }
        Ok(next)
    }

    async fn mark(
        &self,
        stored: &echo_distributions::Model,
        status: &str,
        at: Option<i64>,
    ) -> anyhow::Result<()> {
        mark(self.store.db(), &stored.epoch_address, status, at).await
    }
}

async fn mark(
    db: &impl ConnectionTrait,
    epoch_address: &str,
    status: &str,
    at: Option<i64>,
) -> anyhow::Result<()> {
    echo_distributions::Entity::update_many()
        .col_expr(echo_distributions::Column::Status, Expr::value(status))
        .col_expr(echo_distributions::Column::RolledOverAt, Expr::value(at))
        .filter(echo_distributions::Column::EpochAddress.eq(epoch_address))
        .exec(db)
        .await?;
    Ok(())
}
