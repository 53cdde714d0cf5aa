//! Settlement of a resolved narrative on chain, as a durable job (`settle_narrative`): the
//! service's oracle key signs `submit_oracle_resolution` with the agent's verdict, and once the
//! payout hold has passed on the ledger's clock with no dispute open, it sends
//! `finalize_resolution`, then `forward_crucible_share` for a Yield market's forfeit and
//! `forward_dispute_bond` for a dispute bond forfeit to the treasury (each a separate
//! transaction: a recipient refusing its share must not stop the finalisation, nor the other
//! share). A dispute the admin leaves unruled past the market's resolution delay is lapsed
//! (`lapse_dispute`) so the proposed outcome can finalise. Every run first reads
//! the chain, so a run repeated after a crash or a lost answer does nothing twice: a vote
//! already cast is not sent again, a finalized market whose shares have left ends the job.
//! Waiting (the hold, a dispute, other oracles) reschedules the job without counting as a
//! failure; a transaction that fails is retried with backoff.

use std::sync::Arc;

use anchor_lang::AccountDeserialize;
use anyhow::Context;
use narrative_sdk::binary::CrucibleTarget;
use narrative_sdk::binary_vault::state::{lapses_at, Config, Dispute, DisputeStatus, Market, Side};
use narrative_sdk::crucible_pool::state::AssetPool;
use narrative_sdk::{pda, Instruction, Pubkey};
use narrative_store::Store;
use solana_keypair::Keypair;
use solana_signer::Signer;

use crate::chain::ledger::{decode_clock, Ledger, LedgerAccount, CLOCK_SYSVAR};
use crate::chain::send::send_and_confirm;
use crate::clock::SharedClock;
use crate::jobs::refresh_accounts::RefreshAccounts;
use crate::jobs::settle_narrative::SettleNarrative;
use crate::jobs::{Handler, JobOutcome, Leased};

/// How often a market waiting for other oracles or a dispute ruling is looked at again.
const RECHECK_SECS: i64 = 600;

fn decode<T: AccountDeserialize>(account: &Option<LedgerAccount>, what: &str) -> anyhow::Result<T> {
    let account = account
        .as_ref()
        .with_context(|| format!("{what} not on the ledger"))?;
    T::try_deserialize(&mut account.data.as_slice()).with_context(|| format!("decoding {what}"))
}

/// Runs `settle_narrative` with the service's oracle key (`ORACLE_KEYPAIR`).
pub struct Settler {
    pub store: Store,
    pub ledger: Arc<dyn Ledger>,
    pub oracle: Option<Arc<Keypair>>,
    pub clock: SharedClock,
}

#[async_trait::async_trait]
impl Handler<SettleNarrative> for Settler {
    async fn run(&self, job: Leased<SettleNarrative>) -> anyhow::Result<JobOutcome> {
        let oracle = self
            .oracle
            .as_ref()
            .context("settlement needs ORACLE_KEYPAIR")?;
        self.settle(oracle, &job.job).await
    }
}

impl Settler {
    async fn settle(&self, oracle: &Keypair, job: &SettleNarrative) -> anyhow::Result<JobOutcome> {
        let ledger = self.ledger.as_ref();
        let market_id = job.market_id.market_id();
        let side = if job.outcome { Side::Yes } else { Side::No };
        let market_address = pda::binary::market(&market_id);
        let (_, accounts) = ledger
            .accounts(&[
                market_address,
                pda::binary::oracle_vote(&market_id, &oracle.pubkey()),
                CLOCK_SYSVAR,
                pda::binary::dispute(&market_id),
            ])
            .await?;
        let market: Market = decode(&accounts[0], "the market")?;
        if market.finalized {
            // Each payout in a transaction of its own, and each tried whatever the other did:
            // crucible_pool refusing its share must not keep the treasury's bond, nor a
            // treasury that cannot be credited the crucible's share.
            let mut forwards = Vec::new();
            if market.crucible_amount > 0 && !market.crucible_forwarded {
                let forward = async {
                    let forward = forward_instruction(ledger, &market_id, &market).await?;
                    send_and_confirm(ledger, oracle, &[forward]).await?;
                    self.refresh(market_address).await
                };
                forwards.push(forward.await.context("forward the crucible share"));
            }
            if accounts[3].is_some() {
                let dispute: Dispute = decode(&accounts[3], "the dispute")?;
                if dispute.status.outcome_stood() && !dispute.bond_forwarded {
                    let forward = async {
                        let (_, config) = ledger.accounts(&[pda::binary::config()]).await?;
                        let config: Config = decode(&config[0], "the binary config")?;
                        let forward = narrative_sdk::binary::forward_dispute_bond(
                            &market_id,
                            config.treasury,
                        );
                        send_and_confirm(ledger, oracle, &[forward]).await?;
                        self.refresh(pda::binary::dispute(&market_id)).await
                    };
                    forwards.push(forward.await.context("forward the forfeit dispute bond"));
                }
            }
            forwards.into_iter().collect::<anyhow::Result<Vec<()>>>()?;
            return Ok(JobOutcome::Done);
        }
        let now = self.clock.now();
        let clock = decode_clock(&accounts[2])?;
        // The service is one oracle of the set: when the others proposed an outcome first, its
        // vote would be refused (binary_vault takes votes only until an outcome is proposed),
        // and the job goes straight on to the hold, the dispute and finalising.
        if accounts[1].is_none() && market.outcome.is_none() {
            // binary_vault takes votes from the market's deadline on: a verdict given before
            // it (spec 3.2 lets an open narrative be resolved) waits for it on the ledger's
            // clock, rather than spending the job's attempts on refused votes.
            if clock.unix_timestamp < market.deadline {
                return Ok(JobOutcome::Later(
                    now + (market.deadline - clock.unix_timestamp),
                ));
            }
            let vote = narrative_sdk::binary::submit_oracle_resolution(
                oracle.pubkey(),
                &market_id,
                side,
                job.confidence_bps,
            );
            send_and_confirm(ledger, oracle, &[vote])
                .await
                .context("oracle vote")?;
            // The store shows the vote (and a proposed outcome) without waiting for the indexer.
            self.refresh(market_address).await?;
            // Look again at once: the vote may have completed the threshold.
            return Ok(JobOutcome::Later(now));
        }
        if market.outcome.is_none() {
            // Other oracles have yet to reach the threshold.
            return Ok(JobOutcome::Later(now + RECHECK_SECS));
        }
        let hold_ends = market.hold_ends_at().context("hold end overflows")?;
        if clock.unix_timestamp < hold_ends {
            return Ok(JobOutcome::Later(now + (hold_ends - clock.unix_timestamp)));
        }
        if accounts[3].is_some() {
            let dispute: Dispute = decode(&accounts[3], "the dispute")?;
            if dispute.status == DisputeStatus::Open {
                // The admin rules; if it has not by the market's resolution delay after the
                // hold's end (as binary_vault counts it), the dispute lapses (the outcome
                // stands) and settlement goes on.
                let lapses_at = lapses_at(
                    dispute.opened_at,
                    hold_ends,
                    market.max_resolution_delay_secs,
                )
                .context("lapse time overflows")?;
                if clock.unix_timestamp < lapses_at {
                    let wait = (lapses_at - clock.unix_timestamp).min(RECHECK_SECS);
                    return Ok(JobOutcome::Later(now + wait));
                }
                let lapse = narrative_sdk::binary::lapse_dispute(&market_id);
                send_and_confirm(ledger, oracle, &[lapse])
                    .await
                    .context("lapse the unruled dispute")?;
                self.refresh(market_address).await?;
                return Ok(JobOutcome::Later(now));
            }
        }
        let finalize = narrative_sdk::binary::finalize_resolution(&market_id);
        send_and_confirm(ledger, oracle, &[finalize])
            .await
            .context("finalize")?;
        self.refresh(market_address).await?;
        // Look again at once: a Yield market's crucible share is forwarded next.
        Ok(JobOutcome::Later(now))
    }

    /// Reads `address` (a market or its dispute) into the store without waiting for the indexer.
    async fn refresh(&self, address: Pubkey) -> anyhow::Result<()> {
        let now = self.clock.now();
        crate::jobs::enqueue(
            self.store.db(),
            &RefreshAccounts {
                addresses: vec![address],
            },
            now,
            now,
        )
        .await?;
        Ok(())
    }
}

/// The instruction that forwards `market`'s crucible share into crucible_pool's current epoch.
async fn forward_instruction(
    ledger: &dyn Ledger,
    market_id: &[u8; 32],
    market: &Market,
) -> anyhow::Result<Instruction> {
    let pool_mint = if market.is_sol() {
        narrative_sdk::crucible_pool::SOL_MINT
    } else {
        market.mint
    };
    let (_, pool) = ledger
        .accounts(&[pda::crucible::asset_pool(&pool_mint)])
        .await?;
    let pool: AssetPool = decode(&pool[0], "the crucible asset pool")?;
    let target = CrucibleTarget {
        mint: pool_mint,
        current_epoch: pool.current_epoch,
    };
    Ok(if market.is_sol() {
        narrative_sdk::binary::forward_crucible_share(market_id, &target)
    } else {
        narrative_sdk::binary::forward_crucible_share_spl(market_id, &target)
    })
}
