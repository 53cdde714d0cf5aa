//! A Geyser server for tests, implementing the real service from yellowstone-grpc-proto over a
//! chain that produces blocks as the test says: a subscription without `from_slot` streams from
//! the chain's head on (like a real server, nothing that happened before), one with `from_slot`
//! replays from there if it is inside the replay window, and is refused the way Yellowstone
//! refuses it otherwise. `SubscribeReplayInfo` says the oldest replayable slot (or is
//! unimplemented, like older servers). It pings the client first, keeps the stream open like a
//! live feed, and can cut a session after N messages. A block is streamed once the chain has
//! produced it, so tests pace the stream by producing blocks, not by time.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::stream::BoxStream;
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};
use yellowstone_grpc_proto::geyser::geyser_server::{Geyser, GeyserServer};
use yellowstone_grpc_proto::geyser::subscribe_update::UpdateOneof;
use yellowstone_grpc_proto::geyser::*;
use yellowstone_grpc_proto::solana::storage::confirmed_block as proto;

use super::recording::Recording;

/// One block of the chain: its slot and what a subscriber gets for it.
#[derive(Clone)]
pub struct Block {
    pub slot: u64,
    pub updates: Vec<SubscribeUpdate>,
}

fn wrap(u: UpdateOneof) -> SubscribeUpdate {
    SubscribeUpdate {
        filters: vec!["programs".into()],
        update_oneof: Some(u),
        created_at: None,
    }
}

/// The recording as blocks, one per step: its accounts, its transaction, then the slot's
/// confirmation.
pub fn blocks(recording: &Recording) -> Vec<Block> {
    recording
        .steps
        .iter()
        .map(|step| {
            let mut updates: Vec<SubscribeUpdate> =
                step.accounts.iter().map(|a| wrap(account(a))).collect();
            if let Some(executed) = &step.tx {
                updates.push(wrap(transaction(executed, step.slot, step.tx_index)));
            }
            updates.push(wrap(UpdateOneof::Slot(SubscribeUpdateSlot {
                slot: step.slot,
                status: SlotStatus::SlotConfirmed as i32,
                ..Default::default()
            })));
            Block {
                slot: step.slot,
                updates,
            }
        })
        .collect()
}

/// Updates made up by a test, a block each.
pub fn blocks_of(updates: Vec<(u64, SubscribeUpdate)>) -> Vec<Block> {
    updates
        .into_iter()
        .map(|(slot, update)| Block {
            slot,
            updates: vec![update],
        })
        .collect()
}

/// Every message of `blocks`, with its slot, in stream order.
pub fn messages(blocks: &[Block]) -> Vec<(u64, &SubscribeUpdate)> {
    blocks
        .iter()
        .flat_map(|b| b.updates.iter().map(move |u| (b.slot, u)))
        .collect()
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

pub struct MockState {
    pub blocks: Arc<Vec<Block>>,
    /// Blocks the chain has produced (shared by every server on this chain).
    head: Arc<watch::Sender<usize>>,
    /// Slots a `from_slot` may lie behind the head; `None`: the whole history.
    pub window: Option<u64>,
    /// Whether `SubscribeReplayInfo` is answered.
    pub replay_info: bool,
    /// Cut the next session after this many messages (once).
    pub cut_after: Mutex<Option<usize>>,
    /// After cutting, refuse every later session, like a server on its way down.
    pub refuse_after_cut: AtomicBool,
    cut_done: AtomicBool,
    pub requests: Mutex<Vec<SubscribeRequest>>,
    pub pings_answered: AtomicUsize,
    pub sessions: AtomicUsize,
    /// Subscriptions refused for a `from_slot` outside the window.
    pub refused: AtomicUsize,
    /// Set while no server serves this state: open sessions end, like connections reset.
    down: watch::Sender<bool>,
}

impl MockState {
    /// Default settings and fresh counters, on the chain of `blocks` at `head`.
    fn on(blocks: Arc<Vec<Block>>, head: Arc<watch::Sender<usize>>) -> MockState {
        MockState {
            blocks,
            head,
            window: None,
            replay_info: true,
            cut_after: Mutex::new(None),
            refuse_after_cut: AtomicBool::new(false),
            cut_done: AtomicBool::new(false),
            requests: Mutex::new(Vec::new()),
            pings_answered: AtomicUsize::new(0),
            sessions: AtomicUsize::new(0),
            refused: AtomicUsize::new(0),
            down: watch::channel(false).0,
        }
    }
}

#[derive(Clone)]
pub struct MockGeyser(pub Arc<MockState>);

impl MockGeyser {
    /// A chain of `blocks` that has produced `head` of them.
    pub fn new(blocks: Vec<Block>, head: usize) -> Self {
        MockGeyser(Arc::new(MockState::on(
            Arc::new(blocks),
            Arc::new(watch::channel(head).0),
        )))
    }

    /// Another server (fresh counters, same settings) on the same chain.
    pub fn sharing(&self) -> Self {
        let s = &self.0;
        MockGeyser(Arc::new(MockState {
            window: s.window,
            replay_info: s.replay_info,
            ..MockState::on(s.blocks.clone(), s.head.clone())
        }))
    }

    /// Changes settings before the server starts.
    pub fn with(mut self, configure: impl FnOnce(&mut MockState)) -> Self {
        configure(Arc::get_mut(&mut self.0).expect("configured before it is shared"));
        self
    }

    pub fn head(&self) -> usize {
        *self.0.head.borrow()
    }

    /// The chain produces blocks up to `head` (never backwards).
    pub fn advance_to(&self, head: usize) {
        let head = head.min(self.0.blocks.len());
        self.0.head.send_modify(|h| *h = (*h).max(head));
    }

    /// The oldest slot a subscription may replay from.
    pub fn first_available(&self) -> Option<u64> {
        first_available(&self.0)
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

fn first_available(state: &MockState) -> Option<u64> {
    let window = state.window?;
    let head = *state.head.borrow();
    let head_slot = match head {
        0 => state.blocks.first()?.slot.saturating_sub(1),
        n => state.blocks[n - 1].slot,
    };
    Some(head_slot.saturating_sub(window))
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
        // Like Yellowstone, the refusal comes as the stream's first item.
        let refusal = match (from, first_available(&state)) {
            (Some(from), Some(oldest)) if from < oldest => Some(Status::invalid_argument(format!(
                "broadcast from {from} is not available, last available: {oldest}"
            ))),
            _ => None,
        };
        let start = match from {
            Some(from) => state.blocks.iter().take_while(|b| b.slot < from).count(),
            None => *state.head.borrow(),
        };
        tokio::spawn(async move {
            if tx.send(Ok(ping())).await.is_err() {
                return;
            }
            if let Some(refusal) = refusal {
                state.refused.fetch_add(1, Ordering::SeqCst);
                let _ = tx.send(Err(refusal)).await;
                return;
            }
            let cut = state.cut_after.lock().unwrap().take();
            let mut down = state.down.subscribe();
            let stream = async {
                let mut head = state.head.subscribe();
                let mut sent = 0usize;
                for index in start..state.blocks.len() {
                    // A block is streamed once the chain has produced it.
                    if head.wait_for(|h| *h > index).await.is_err() {
                        return;
                    }
                    for update in &state.blocks[index].updates {
                        if Some(sent) == cut {
                            state.cut_done.store(true, Ordering::SeqCst);
                            let _ = tx.send(Err(Status::unavailable("stream cut"))).await;
                            return;
                        }
                        if tx.send(Ok(update.clone())).await.is_err() {
                            return;
                        }
                        sent += 1;
                    }
                }
                // A live feed stays open until the client leaves.
                tx.closed().await;
            };
            tokio::select! {
                _ = stream => {}
                _ = async { down.wait_for(|down| *down).await.is_ok() } => {
                    let _ = tx.send(Err(Status::unavailable("server going down"))).await;
                }
            }
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
        if !self.0.replay_info {
            return Err(Status::unimplemented("subscribe_replay_info"));
        }
        Ok(Response::new(SubscribeReplayInfoResponse {
            first_available: first_available(&self.0),
        }))
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

/// A running mock server; stopped when dropped, ending its open sessions.
pub struct Server {
    pub url: String,
    pub addr: SocketAddr,
    handle: tokio::task::JoinHandle<()>,
    mock: MockGeyser,
}

impl Server {
    /// Stops serving and waits until the listener is closed, so a server can be started again
    /// on the same address at once.
    pub async fn stop(mut self) {
        self.mock.0.down.send_replace(true);
        self.handle.abort();
        let _ = (&mut self.handle).await;
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.handle.abort();
        self.mock.0.down.send_replace(true);
    }
}

/// Serves `mock` on `addr` (an ephemeral port by default).
pub async fn start(mock: MockGeyser, addr: Option<SocketAddr>) -> Server {
    let listener =
        tokio::net::TcpListener::bind(addr.unwrap_or_else(|| "127.0.0.1:0".parse().unwrap()))
            .await
            .expect("bind mock geyser");
    let addr = listener.local_addr().unwrap();
    mock.0.down.send_replace(false);
    let served = mock.clone();
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    let handle = tokio::spawn(async move {
        let _ = tonic::transport::Server::builder()
            .add_service(GeyserServer::new(served))
            .serve_with_incoming(incoming)
            .await;
    });
    Server {
        url: format!("http://{addr}"),
        addr,
        handle,
        mock,
    }
}
