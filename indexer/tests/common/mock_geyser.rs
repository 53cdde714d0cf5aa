//! A Geyser server for tests, implementing the real service from yellowstone-grpc-proto: it
//! streams a recording from the requested `from_slot`, pings the client first, keeps the stream
//! open afterwards like a live feed, and can cut its first session after N messages.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::BoxStream;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};
use yellowstone_grpc_proto::geyser::geyser_server::{Geyser, GeyserServer};
use yellowstone_grpc_proto::geyser::subscribe_update::UpdateOneof;
use yellowstone_grpc_proto::geyser::*;
use yellowstone_grpc_proto::solana::storage::confirmed_block as proto;

use super::recording::Recording;

/// The recording as stream updates, each with its slot: per step its accounts, its
/// transaction, then the slot's confirmation.
pub fn updates(recording: &Recording) -> Vec<(u64, SubscribeUpdate)> {
    let mut out = Vec::new();
    let wrap = |u: UpdateOneof| SubscribeUpdate {
        filters: vec!["programs".into()],
        update_oneof: Some(u),
        created_at: None,
    };
    for step in &recording.steps {
        for a in &step.accounts {
            out.push((step.slot, wrap(account(a))));
        }
        if let Some(executed) = &step.tx {
            out.push((
                step.slot,
                wrap(transaction(executed, step.slot, step.tx_index)),
            ));
        }
        out.push((
            step.slot,
            wrap(UpdateOneof::Slot(SubscribeUpdateSlot {
                slot: step.slot,
                status: SlotStatus::SlotConfirmed as i32,
                ..Default::default()
            })),
        ));
    }
    out
}

pub fn account(a: &narrative_store::AccountUpdate) -> UpdateOneof {
    UpdateOneof::Account(SubscribeUpdateAccount {
        account: Some(SubscribeUpdateAccountInfo {
            pubkey: a.address.to_bytes().to_vec(),
            lamports: a.lamports,
            owner: a.owner.to_bytes().to_vec(),
            executable: false,
            rent_epoch: u64::MAX,
            data: a.data.clone(),
            write_version: a.write_version,
            txn_signature: None,
        }),
        slot: a.slot,
        is_startup: false,
        ..Default::default()
    })
}

fn transaction(executed: &integration_tests::Executed, slot: u64, index: u64) -> UpdateOneof {
    let tx = &executed.transaction;
    let message = proto::Message {
        header: Some(proto::MessageHeader {
            num_required_signatures: tx.message.header.num_required_signatures.into(),
            num_readonly_signed_accounts: tx.message.header.num_readonly_signed_accounts.into(),
            num_readonly_unsigned_accounts: tx.message.header.num_readonly_unsigned_accounts.into(),
        }),
        account_keys: tx
            .message
            .account_keys
            .iter()
            .map(|k| k.to_bytes().to_vec())
            .collect(),
        recent_blockhash: tx.message.recent_blockhash.to_bytes().to_vec(),
        instructions: tx
            .message
            .instructions
            .iter()
            .map(|ix| proto::CompiledInstruction {
                program_id_index: ix.program_id_index.into(),
                accounts: ix.accounts.clone(),
                data: ix.data.clone(),
            })
            .collect(),
        ..Default::default()
    };
    let inner_instructions = executed
        .inner_instructions
        .iter()
        .enumerate()
        .filter(|(_, list)| !list.is_empty())
        .map(|(index, list)| proto::InnerInstructions {
            index: index as u32,
            instructions: list
                .iter()
                .map(|inner| proto::InnerInstruction {
                    program_id_index: inner.instruction.program_id_index.into(),
                    accounts: inner.instruction.accounts.clone(),
                    data: inner.instruction.data.clone(),
                    stack_height: Some(inner.stack_height.into()),
                })
                .collect(),
        })
        .collect();
    UpdateOneof::Transaction(SubscribeUpdateTransaction {
        transaction: Some(SubscribeUpdateTransactionInfo {
            signature: tx.signatures[0].as_ref().to_vec(),
            is_vote: false,
            transaction: Some(proto::Transaction {
                signatures: tx.signatures.iter().map(|s| s.as_ref().to_vec()).collect(),
                message: Some(message),
            }),
            meta: Some(proto::TransactionStatusMeta {
                err: None,
                inner_instructions,
                ..Default::default()
            }),
            index,
        }),
        slot,
        ..Default::default()
    })
}

#[derive(Default)]
pub struct MockState {
    pub updates: Vec<(u64, SubscribeUpdate)>,
    pub pace: Duration,
    /// Cut the next session after this many updates (once).
    pub cut_after: Mutex<Option<usize>>,
    /// After cutting, refuse every later session, like a server on its way down.
    pub refuse_after_cut: AtomicBool,
    cut_done: AtomicBool,
    pub requests: Mutex<Vec<SubscribeRequest>>,
    pub pings_answered: AtomicUsize,
    pub sessions: AtomicUsize,
}

#[derive(Clone, Default)]
pub struct MockGeyser(pub Arc<MockState>);

impl MockGeyser {
    pub fn new(updates: Vec<(u64, SubscribeUpdate)>, pace: Duration) -> Self {
        MockGeyser(Arc::new(MockState {
            updates,
            pace,
            ..Default::default()
        }))
    }

    /// The first request of each session (the subscription itself).
    pub fn subscriptions(&self) -> Vec<SubscribeRequest> {
        self.0
            .requests
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.ping.is_none())
            .cloned()
            .collect()
    }
}

fn ping() -> SubscribeUpdate {
    SubscribeUpdate {
        filters: vec![],
        update_oneof: Some(UpdateOneof::Ping(SubscribeUpdatePing {})),
        created_at: None,
    }
}

#[tonic::async_trait]
impl Geyser for MockGeyser {
    type SubscribeStream = ReceiverStream<Result<SubscribeUpdate, Status>>;
    type SubscribeDeshredStream = BoxStream<'static, Result<SubscribeUpdateDeshred, Status>>;
    type SubscribeGossipStream = BoxStream<'static, Result<SubscribeUpdateGossip, Status>>;

    async fn subscribe(
        &self,
        request: Request<Streaming<SubscribeRequest>>,
    ) -> Result<Response<Self::SubscribeStream>, Status> {
        let mut incoming = request.into_inner();
        let first = incoming
            .message()
            .await?
            .ok_or_else(|| Status::invalid_argument("no subscription"))?;
        let state = self.0.clone();
        state.sessions.fetch_add(1, Ordering::SeqCst);
        state.requests.lock().unwrap().push(first.clone());
        if state.refuse_after_cut.load(Ordering::SeqCst) && state.cut_done.load(Ordering::SeqCst) {
            return Err(Status::unavailable("shutting down"));
        }
        let reader = state.clone();
        tokio::spawn(async move {
            while let Ok(Some(request)) = incoming.message().await {
                if request.ping.is_some() {
                    reader.pings_answered.fetch_add(1, Ordering::SeqCst);
                }
                reader.requests.lock().unwrap().push(request);
            }
        });
        let (tx, rx) = mpsc::channel(256);
        let from = first.from_slot;
        tokio::spawn(async move {
            if tx.send(Ok(ping())).await.is_err() {
                return;
            }
            let cut = state.cut_after.lock().unwrap().take();
            let replay = state
                .updates
                .iter()
                .filter(|(slot, _)| from.is_none_or(|f| *slot >= f));
            for (sent, (_, update)) in replay.enumerate() {
                if Some(sent) == cut {
                    state.cut_done.store(true, Ordering::SeqCst);
                    let _ = tx.send(Err(Status::unavailable("stream cut"))).await;
                    return;
                }
                if !state.pace.is_zero() {
                    tokio::time::sleep(state.pace).await;
                }
                if tx.send(Ok(update.clone())).await.is_err() {
                    return;
                }
            }
            // A live feed stays open until the client leaves.
            tx.closed().await;
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn subscribe_deshred(
        &self,
        _: Request<Streaming<SubscribeDeshredRequest>>,
    ) -> Result<Response<Self::SubscribeDeshredStream>, Status> {
        Err(Status::unimplemented("subscribe_deshred"))
    }
    async fn subscribe_gossip(
        &self,
        _: Request<SubscribeGossipRequest>,
    ) -> Result<Response<Self::SubscribeGossipStream>, Status> {
        Err(Status::unimplemented("subscribe_gossip"))
    }
    async fn subscribe_replay_info(
        &self,
        _: Request<SubscribeReplayInfoRequest>,
    ) -> Result<Response<SubscribeReplayInfoResponse>, Status> {
        Err(Status::unimplemented("subscribe_replay_info"))
    }
    async fn ping(&self, _: Request<PingRequest>) -> Result<Response<PongResponse>, Status> {
        Err(Status::unimplemented("ping"))
    }
    async fn get_latest_blockhash(
        &self,
        _: Request<GetLatestBlockhashRequest>,
    ) -> Result<Response<GetLatestBlockhashResponse>, Status> {
        Err(Status::unimplemented("get_latest_blockhash"))
    }
    async fn get_block_height(
        &self,
        _: Request<GetBlockHeightRequest>,
    ) -> Result<Response<GetBlockHeightResponse>, Status> {
        Err(Status::unimplemented("get_block_height"))
    }
    async fn get_slot(
        &self,
        _: Request<GetSlotRequest>,
    ) -> Result<Response<GetSlotResponse>, Status> {
        Err(Status::unimplemented("get_slot"))
    }
    async fn is_blockhash_valid(
        &self,
        _: Request<IsBlockhashValidRequest>,
    ) -> Result<Response<IsBlockhashValidResponse>, Status> {
        Err(Status::unimplemented("is_blockhash_valid"))
    }
    async fn get_version(
        &self,
        _: Request<GetVersionRequest>,
    ) -> Result<Response<GetVersionResponse>, Status> {
        Err(Status::unimplemented("get_version"))
    }
}

/// A running mock server; stopped when dropped.
pub struct Server {
    pub url: String,
    pub addr: SocketAddr,
    handle: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// Serves `mock` on `addr` (an ephemeral port by default).
pub async fn start(mock: MockGeyser, addr: Option<SocketAddr>) -> Server {
    let listener =
        tokio::net::TcpListener::bind(addr.unwrap_or_else(|| "127.0.0.1:0".parse().unwrap()))
            .await
            .expect("bind mock geyser");
    let addr = listener.local_addr().unwrap();
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    let handle = tokio::spawn(async move {
        let _ = tonic::transport::Server::builder()
            .add_service(GeyserServer::new(mock))
            .serve_with_incoming(incoming)
            .await;
    });
    Server {
        url: format!("http://{addr}"),
        addr,
        handle,
    }
}
