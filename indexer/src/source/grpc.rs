//! Yellowstone gRPC: accounts owned by the programs and the transactions that touch them, at
//! `confirmed`, answering the server's pings, reconnecting with backoff and resuming `from_slot`
//! at the committed checkpoint.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{anyhow, Context};
use futures::{SinkExt, StreamExt};
use narrative_sdk::Pubkey;
use narrative_store::AccountUpdate;
use tokio::sync::mpsc;
use tracing::{info, warn};
use yellowstone_grpc_client::GeyserGrpcClient;
use yellowstone_grpc_proto::geyser::subscribe_update::UpdateOneof;
use yellowstone_grpc_proto::geyser::{
    CommitmentLevel, SubscribeRequest, SubscribeRequestFilterAccounts, SubscribeRequestFilterSlots,
    SubscribeRequestFilterTransactions, SubscribeRequestPing, SubscribeUpdateAccount,
    SubscribeUpdateTransaction,
};

use crate::metrics::Metrics;
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
    pub programs: Vec<Pubkey>,
    pub metrics: Metrics,
    pub backoff: Backoff,
}

impl GrpcSource {
    pub fn new(
        endpoint: String,
        x_token: Option<String>,
        programs: Vec<Pubkey>,
        metrics: Metrics,
    ) -> Self {
        GrpcSource {
            endpoint,
            x_token,
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

    /// One connection: subscribe and forward until the stream ends or fails. `Ok(true)` when
    /// at least one update came through (the backoff then starts over).
    async fn session(
        &self,
        from_slot: Option<u64>,
        out: &mpsc::Sender<Envelope>,
    ) -> anyhow::Result<bool> {
        let mut client = GeyserGrpcClient::build_from_shared(self.endpoint.clone())?
            .x_token(self.x_token.clone())?
            .connect_timeout(Duration::from_secs(10))
            .max_decoding_message_size(64 * 1024 * 1024)
            .connect()
            .await
            .context("connecting")?;
        let (mut sink, mut stream) = client
            .subscribe_with_request(Some(self.request(from_slot)))
            .await
            .context("subscribing")?;
        info!(endpoint = %self.endpoint, ?from_slot, "subscribed");
        let mut received = false;
        loop {
            let next = tokio::time::timeout(IDLE_TIMEOUT, stream.next())
                .await
                .map_err(|_| anyhow!("no message for {IDLE_TIMEOUT:?}"))?;
            let Some(update) = next else {
                return Ok(received);
            };
            let update = update.context("stream")?;
            let message = match update.update_oneof {
                Some(UpdateOneof::Account(account)) => {
                    Some(SourceMessage::Account(account_update(account)?))
                }
                Some(UpdateOneof::Transaction(tx)) => {
                    transaction_update(tx)?.map(SourceMessage::Transaction)
                }
                Some(UpdateOneof::Slot(slot)) => Some(SourceMessage::Tip(slot.slot)),
                Some(UpdateOneof::Ping(_)) => {
                    // Unanswered pings get the stream closed by some providers.
                    sink.send(SubscribeRequest {
                        ping: Some(SubscribeRequestPing { id: 1 }),
                        ..Default::default()
                    })
                    .await
                    .context("answering ping")?;
                    None
                }
                _ => None,
            };
            if let Some(message) = message {
                received = true;
                if out.send(Envelope::now(message)).await.is_err() {
                    return Ok(received);
                }
            }
        }
    }
}

impl Source for GrpcSource {
    async fn run(mut self, resume: ResumePoint, out: mpsc::Sender<Envelope>) -> anyhow::Result<()> {
        loop {
            match self.session(resume.get(), &out).await {
                Ok(true) => self.backoff.reset(),
                Ok(false) => {}
                Err(error) => warn!(error = format!("{error:#}"), "grpc session ended"),
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
