//! Yellowstone gRPC: accounts owned by the programs and the transactions that touch them, at
//! `confirmed`, answering the server's pings, reconnecting with backoff and resuming `from_slot`
//! at the committed checkpoint.
//!
//! A stream only carries what happens while it is open, so two cases go through a JSON-RPC
//! reconciliation (see [`reconcile`](crate::source::reconcile)) while the stream runs:
//! - **bootstrap:** no checkpoint yet, so the accounts that already exist are snapshotted and
//!   the programs' history backfilled;
//! - **gap fill:** the checkpoint is older than the oldest slot the server can replay (it says
//!   so through `SubscribeReplayInfo`, or it refuses the `from_slot`), so the stream starts live
//!   and the accounts and transactions since the checkpoint come from JSON-RPC.
//!
//! Until the reconciliation has been handed over, everything is sent held: the checkpoint stays
//! at its last durable value and a crash starts the reconciliation over.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use futures::{SinkExt, StreamExt};
use narrative_sdk::Pubkey;
use narrative_store::AccountUpdate;
use tokio::sync::mpsc;
use tonic::{Code, Status};
use tracing::{info, warn};
use yellowstone_grpc_client::{GeyserGrpcClient, GeyserGrpcClientError, SubscribeRequestSink};
use yellowstone_grpc_proto::geyser::subscribe_update::UpdateOneof;
use yellowstone_grpc_proto::geyser::{
    CommitmentLevel, SubscribeRequest, SubscribeRequestFilterAccounts, SubscribeRequestFilterSlots,
    SubscribeRequestFilterTransactions, SubscribeRequestPing, SubscribeUpdate,
    SubscribeUpdateAccount, SubscribeUpdateTransaction,
};

use crate::metrics::Metrics;
use crate::redact::Redactor;
use crate::source::reconcile::{reconcile, Reconcile};
use crate::source::{
    Backoff, Envelope, InnerInstruction, ResumePoint, Source, SourceMessage, TransactionUpdate,
};

/// A session that sees nothing, not even a ping (servers ping about every 10 s), for this long
/// is considered dead and reconnected.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Clone)]
pub struct GrpcSource {
    pub endpoint: String,
    pub x_token: Option<String>,
    /// JSON-RPC endpoint for the bootstrap snapshot and gap fills.
    pub rpc_url: String,
    pub programs: Vec<Pubkey>,
    pub metrics: Metrics,
    pub backoff: Backoff,
    /// Both URLs out of what is logged: providers put their keys in them.
    redactor: Arc<Redactor>,
}

/// How a session starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// Replay from the checkpoint: the server still has it.
    Resume(u64),
    /// Start live and reconcile what the stream cannot replay.
    Reconcile(Reconcile),
}

/// How a session ended, when it did not fail outright.
enum Ended {
    /// The stream closed (or the pipeline did); `true` when updates came through.
    Closed(bool),
    /// The server refused to replay from the checkpoint; it said its oldest slot if known.
    ReplayRefused { oldest: Option<u64> },
}

type Reconciling<'a> = Pin<Box<dyn Future<Output = anyhow::Result<Option<u64>>> + Send + 'a>>;

impl GrpcSource {
    pub fn new(
        endpoint: String,
        x_token: Option<String>,
        rpc_url: String,
        programs: Vec<Pubkey>,
        metrics: Metrics,
    ) -> Self {
        GrpcSource {
            redactor: Arc::new(Redactor::for_urls(&[&endpoint, &rpc_url])),
            endpoint,
            x_token,
            rpc_url,
            programs,
            metrics,
            backoff: Backoff::new(Duration::from_millis(200), Duration::from_secs(30)),
        }
    }

    /// The subscription: program-owned accounts, successful non-vote transactions that mention
    /// a program, confirmed slots (for the lag metric), replayed from `from_slot`.
    pub fn request(&self, from_slot: Option<u64>) -> SubscribeRequest {
        let programs: Vec<String> = self.programs.iter().map(|p| p.to_string()).collect();
        SubscribeRequest {
            accounts: HashMap::from([(
                "programs".to_owned(),
                SubscribeRequestFilterAccounts {
                    owner: programs.clone(),
                    ..Default::default()
                },
            )]),
            transactions: HashMap::from([(
                "programs".to_owned(),
                SubscribeRequestFilterTransactions {
                    vote: Some(false),
                    failed: Some(false),
                    account_include: programs,
                    ..Default::default()
                },
            )]),
            slots: HashMap::from([(
                "tip".to_owned(),
                SubscribeRequestFilterSlots {
                    filter_by_commitment: Some(true),
                    ..Default::default()
                },
            )]),
            commitment: Some(CommitmentLevel::Confirmed as i32),
            from_slot,
            ..Default::default()
        }
    }

    /// Whether this session can replay from the checkpoint, from what the server says it keeps.
    /// A server without `SubscribeReplayInfo` is asked to replay, and a refusal is caught then.
    fn plan(&self, checkpoint: Option<u64>, first_available: Option<u64>, refused: bool) -> Plan {
        let Some(checkpoint) = checkpoint else {
            return Plan::Reconcile(Reconcile::Bootstrap);
        };
        match first_available {
            Some(first) if first > checkpoint => {
                self.metrics.gap_slots.set((first - checkpoint) as i64);
                Plan::Reconcile(Reconcile::Gap { since: checkpoint })
            }
            _ if refused => Plan::Reconcile(Reconcile::Gap { since: checkpoint }),
            _ => Plan::Resume(checkpoint),
        }
    }

    /// One connection: plan, subscribe and forward until the stream ends or fails, running the
    /// reconciliation the plan asks for beside the stream.
    async fn session(
        &self,
        checkpoint: Option<u64>,
        refused: bool,
        out: &mpsc::Sender<Envelope>,
    ) -> anyhow::Result<Ended> {
        let mut client = GeyserGrpcClient::build_from_shared(self.endpoint.clone())?
            .x_token(self.x_token.clone())?
            .connect_timeout(Duration::from_secs(10))
            .max_decoding_message_size(64 * 1024 * 1024)
            .connect()
            .await
            .context("connecting")?;
        let first_available = match client.subscribe_replay_info().await {
            Ok(info) => info.first_available,
            // Older servers and some providers do not implement it.
            Err(GeyserGrpcClientError::TonicStatus(status))
                if status.code() == Code::Unimplemented =>
            {
                None
            }
            Err(error) => return Err(error).context("asking which slots can be replayed"),
        };
        let plan = self.plan(checkpoint, first_available, refused);
        let from_slot = match plan {
            Plan::Resume(slot) => Some(slot),
            Plan::Reconcile(_) => None,
        };
        let subscribed = client
            .subscribe_with_request(Some(self.request(from_slot)))
            .await;
        let (mut sink, mut stream) = match subscribed {
            Ok(subscribed) => subscribed,
            Err(GeyserGrpcClientError::TonicStatus(status)) if from_slot.is_some() => {
                if let Some(oldest) = replay_refusal(&status) {
                    return Ok(Ended::ReplayRefused { oldest });
                }
                return Err(anyhow!(status).context("subscribing"));
            }
            Err(error) => return Err(error).context("subscribing"),
        };
        info!(endpoint = %self.redactor.shown(), ?plan, "subscribed");
        // Started once the stream is live (its first message), so it covers the reconciliation.
        let mut to_reconcile = match plan {
            Plan::Reconcile(what) => Some(what),
            Plan::Resume(_) => None,
        };
        let mut reconciling: Option<(Reconcile, Reconciling<'_>)> = None;
        let mut retry = Backoff::new(Duration::from_millis(200), Duration::from_secs(30));
        // The newest slot streamed while reconciling (held, so not yet a checkpoint).
        let mut held_up_to: Option<u64> = None;
        let mut received = false;
        loop {
            tokio::select! {
                finished = async { reconciling.as_mut().expect("guarded").1.as_mut().await },
                    if reconciling.is_some() =>
                {
                    let (what, _) = reconciling.take().expect("guarded");
                    let snapshot_slot = match finished {
                        Ok(Some(slot)) => slot,
                        Ok(None) => return Ok(Ended::Closed(received)),
                        // The stream is fine; only JSON-RPC failed. Keep streaming (held) and
                        // try again, rather than dropping a healthy subscription.
                        Err(error) => {
                            let delay = retry.next_delay();
                            warn!(error = self.redactor.error(&error), ?what, retry_in_ms = delay.as_millis() as u64, "reconciliation failed");
                            let again = async move {
                                tokio::time::sleep(delay).await;
                                reconcile(&self.rpc_url, &self.programs, what, out).await
                            };
                            reconciling = Some((what, Box::pin(again)));
                            continue;
                        }
                    };
                    // Everything sent so far is covered up to here; this commits after it.
                    let checkpoint = held_up_to.map_or(snapshot_slot, |s| s.max(snapshot_slot));
                    if out.send(Envelope::now(SourceMessage::Complete(checkpoint))).await.is_err() {
                        return Ok(Ended::Closed(received));
                    }
                    match what {
                        Reconcile::Bootstrap => self.metrics.bootstraps.inc(),
                        Reconcile::Gap { .. } => self.metrics.gap_fills.inc(),
                    }
                    info!(?what, checkpoint, "reconciled; the checkpoint follows the stream again");
                }
                next = tokio::time::timeout(IDLE_TIMEOUT, stream.next()) => {
                    let next = next.map_err(|_| anyhow!("no message for {IDLE_TIMEOUT:?}"))?;
                    let Some(update) = next else {
                        return Ok(Ended::Closed(received));
                    };
                    let update = match update {
                        Ok(update) => update,
                        Err(status) => {
                            if from_slot.is_some() && !received {
                                if let Some(oldest) = replay_refusal(&status) {
                                    return Ok(Ended::ReplayRefused { oldest });
                                }
                            }
                            return Err(anyhow!(status).context("stream"));
                        }
                    };
                    if let Some(what) = to_reconcile.take() {
                        let reconciled = reconcile(&self.rpc_url, &self.programs, what, out);
                        reconciling = Some((what, Box::pin(reconciled)));
                    }
                    let Some(message) = message_of(update, &mut sink).await? else {
                        continue;
                    };
                    received = true;
                    let envelope = if to_reconcile.is_some() || reconciling.is_some() {
                        if let Some(slot) = message.data_slot() {
                            held_up_to = Some(held_up_to.map_or(slot, |h| h.max(slot)));
                        }
                        Envelope::held(message)
                    } else {
                        Envelope::now(message)
                    };
                    if out.send(envelope).await.is_err() {
                        return Ok(Ended::Closed(received));
                    }
                }
            }
        }
    }
}

/// What a stream update carries for the pipeline, if anything; pings are answered here
/// (unanswered pings get the stream closed by some providers).
async fn message_of(
    update: SubscribeUpdate,
    sink: &mut SubscribeRequestSink,
) -> anyhow::Result<Option<SourceMessage>> {
    Ok(match update.update_oneof {
        Some(UpdateOneof::Account(account)) => {
            Some(SourceMessage::Account(account_update(account)?))
        }
        Some(UpdateOneof::Transaction(tx)) => {
            transaction_update(tx)?.map(SourceMessage::Transaction)
        }
        Some(UpdateOneof::Slot(slot)) => Some(SourceMessage::Tip(slot.slot)),
        Some(UpdateOneof::Ping(_)) => {
            sink.send(SubscribeRequest {
                ping: Some(SubscribeRequestPing { id: 1 }),
                ..Default::default()
            })
            .await
            .context("answering ping")?;
            None
        }
        _ => None,
    })
}

/// Whether `status` is a server refusing to replay from the requested slot, and the oldest
/// slot it said it still has. Yellowstone answers `InvalidArgument` with "broadcast from N is
/// not available, last available: M".
fn replay_refusal(status: &Status) -> Option<Option<u64>> {
    let message = status.message();
    if status.code() != Code::InvalidArgument
        || !(message.contains("not available") || message.contains("from_slot"))
    {
        return None;
    }
    let oldest = message
        .rsplit_once("last available:")
        .and_then(|(_, tail)| tail.trim().split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|digits| digits.parse().ok());
    Some(oldest)
}

impl Source for GrpcSource {
    async fn run(mut self, resume: ResumePoint, out: mpsc::Sender<Envelope>) -> anyhow::Result<()> {
        // The checkpoint the server last refused to replay from: the next session fills the gap.
        let mut refused_at: Option<u64> = None;
        loop {
            let checkpoint = resume.get();
            let refused = refused_at.is_some() && refused_at == checkpoint;
            match self.session(checkpoint, refused, &out).await {
                Ok(Ended::Closed(true)) => self.backoff.reset(),
                Ok(Ended::Closed(false)) => {}
                Ok(Ended::ReplayRefused { oldest }) => {
                    warn!(
                        ?checkpoint,
                        ?oldest,
                        "the server cannot replay from the checkpoint; filling the gap"
                    );
                    // 0 when the server did not say which slot it still has.
                    let gap = oldest
                        .zip(checkpoint)
                        .map_or(0, |(o, c)| o.saturating_sub(c));
                    self.metrics.gap_slots.set(gap as i64);
                    refused_at = checkpoint;
                    // Not an outage: go straight to the gap fill.
                    self.backoff.reset();
                }
                Err(error) => warn!(error = self.redactor.error(&error), "grpc session ended"),
            }
            if out.is_closed() {
                return Ok(());
            }
            self.metrics.reconnects.inc();
            let delay = self.backoff.next_delay();
            tokio::time::sleep(delay).await;
        }
    }
}

fn pubkey(bytes: &[u8], what: &str) -> anyhow::Result<Pubkey> {
    Pubkey::try_from(bytes).map_err(|_| anyhow!("{what} is {} bytes, not 32", bytes.len()))
}

fn account_update(update: SubscribeUpdateAccount) -> anyhow::Result<AccountUpdate> {
    let info = update.account.context("account update without account")?;
    Ok(AccountUpdate {
        address: pubkey(&info.pubkey, "account pubkey")?,
        owner: pubkey(&info.owner, "account owner")?,
        lamports: info.lamports,
        data: info.data,
        slot: update.slot,
        write_version: info.write_version,
    })
}

/// The transaction's inner instructions with their program ids, for event decoding; `None` for
/// a failed transaction (its events never happened).
fn transaction_update(
    update: SubscribeUpdateTransaction,
) -> anyhow::Result<Option<TransactionUpdate>> {
    let info = update
        .transaction
        .context("transaction update without transaction")?;
    let meta = info.meta.context("transaction without meta")?;
    if meta.err.is_some() {
        return Ok(None);
    }
    let message = info
        .transaction
        .and_then(|t| t.message)
        .context("transaction without message")?;
    // Indexes point into the static keys, then the loaded writable, then the loaded readonly.
    let keys: Vec<&Vec<u8>> = message
        .account_keys
        .iter()
        .chain(&meta.loaded_writable_addresses)
        .chain(&meta.loaded_readonly_addresses)
        .collect();
    let mut inner = Vec::new();
    for group in meta.inner_instructions {
        for (position, ix) in group.instructions.into_iter().enumerate() {
            let key = keys
                .get(ix.program_id_index as usize)
                .context("inner instruction program index out of range")?;
            inner.push(InnerInstruction {
                instruction_index: group.index,
                inner_index: position as u32,
                program: pubkey(key, "program id")?,
                data: ix.data,
            });
        }
    }
    Ok(Some(TransactionUpdate {
        signature: bs58::encode(&info.signature).into_string(),
        slot: update.slot,
        tx_index: info.index,
        inner,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_replay_is_told_from_other_errors() {
        let yellowstone =
            Status::invalid_argument("broadcast from 1012 is not available, last available: 1021");
        assert_eq!(replay_refusal(&yellowstone), Some(Some(1021)));
        let terse = Status::invalid_argument("from_slot is too old");
        assert_eq!(replay_refusal(&terse), Some(None));
        // Not a refusal: another bad argument, or the server going down.
        assert_eq!(
            replay_refusal(&Status::invalid_argument("bad filter")),
            None
        );
        assert_eq!(
            replay_refusal(&Status::unavailable("broadcast from 1 is not available")),
            None
        );
    }
}
