//! Account reads coalesced into `getMultipleAccounts` calls, as the prepared writer groups
//! inserts: reads that arrive while the node is busy queue up, and the next call carries all of
//! them (up to the node's 100 addresses a call). An idle service pays no wait: a read that finds
//! fewer than the eager number of calls in flight goes out at once. Beyond those, a further call
//! (up to the most allowed) starts only once half a call's worth of addresses waits, and a call
//! that ends takes what queued meanwhile. Under load this turns a prepare's account read from
//! one node round trip each into a share of one (RPC providers count and limit calls, not
//! addresses); against a slow node the queue fills and more calls go out.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use narrative_sdk::Pubkey;
use tokio::sync::oneshot;

use super::{LedgerAccount, LedgerError};

/// The node's limit of addresses in one `getMultipleAccounts`.
pub const MAX_ADDRESSES: usize = 100;

/// Addresses waiting that justify a call beyond the eager ones: half a call.
pub const WORTH_A_CALL: usize = MAX_ADDRESSES / 2;

/// What a read answers: the slot read at, and the accounts in the order asked.
pub type Read = Result<(u64, Vec<Option<LedgerAccount>>), LedgerError>;

struct Pending {
    addresses: Vec<Pubkey>,
    reply: oneshot::Sender<Read>,
}

/// The reads waiting and the calls in flight, changed together under one lock so that a read
/// never waits with nobody left to carry it.
#[derive(Default)]
struct Queue {
    reads: VecDeque<Pending>,
    /// Addresses of `reads`.
    addresses: usize,
    calls: usize,
}

struct Limits {
    eager: usize,
    most: usize,
}

impl Queue {
    /// Whether a call should start now for what waits.
    fn wants_call(&self, limits: &Limits) -> bool {
        !self.reads.is_empty()
            && (self.calls < limits.eager
                || (self.calls < limits.most && self.addresses >= WORTH_A_CALL))
    }

    /// The oldest waiting reads, up to [`MAX_ADDRESSES`] addresses (at least one read).
    fn take_batch(&mut self) -> Vec<Pending> {
        let mut batch = Vec::new();
        let mut total = 0;
        while let Some(next) = self.reads.front() {
            if !batch.is_empty() && total + next.addresses.len() > MAX_ADDRESSES {
                break;
            }
            total += next.addresses.len();
            batch.push(self.reads.pop_front().expect("front exists"));
        }
        self.addresses -= total;
        batch
    }
}

struct Shared {
    queue: Mutex<Queue>,
    limits: Limits,
    /// Calls made so far, and the addresses they carried (what `/metrics` shows).
    calls_made: AtomicU64,
    addresses_read: AtomicU64,
}

pub struct Coalescer {
    shared: Arc<Shared>,
}

impl Coalescer {
    /// Reads go out at once while fewer than `eager` calls are in flight; at most `most` calls
    /// at once.
    pub fn new(eager: usize, most: usize) -> Coalescer {
        let eager = eager.max(1);
        Coalescer {
            shared: Arc::new(Shared {
                queue: Mutex::new(Queue::default()),
                limits: Limits {
                    eager,
                    most: most.max(eager),
                },
                calls_made: AtomicU64::new(0),
                addresses_read: AtomicU64::new(0),
            }),
        }
    }

    /// Reads waiting for a call.
    pub fn queued(&self) -> usize {
        self.shared.queue.lock().expect("read queue").reads.len()
    }

    /// Calls in flight now.
    #[cfg(test)]
    fn calls_in_flight(&self) -> usize {
        self.shared.queue.lock().expect("read queue").calls
    }

    /// Calls made so far and the addresses they carried.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.shared.calls_made.load(Ordering::Relaxed),
            self.shared.addresses_read.load(Ordering::Relaxed),
        )
    }

    /// Reads `addresses` through `fetch`, in one call with whatever else is waiting (every read
    /// of one coalescer must fetch the same way: a call carries others' reads). Calls run as
    /// tasks of their own, so a caller that goes away does not take the others' answers with
    /// it. More addresses than a call takes are read a call's worth at a time, and answered
    /// together in their order at the oldest slot of the parts.
    pub async fn read<F, Fut>(&self, addresses: &[Pubkey], fetch: F) -> Read
    where
        F: Fn(Vec<Pubkey>) -> Fut + Clone + Send + 'static,
        Fut: Future<Output = Read> + Send + 'static,
    {
        if addresses.len() <= MAX_ADDRESSES {
            return self.read_in_one_call(addresses, fetch).await;
        }
        let mut slot = u64::MAX;
        let mut accounts = Vec::with_capacity(addresses.len());
        for part in addresses.chunks(MAX_ADDRESSES) {
            let (read_at, mut read) = self.read_in_one_call(part, fetch.clone()).await?;
            slot = slot.min(read_at);
            accounts.append(&mut read);
        }
        Ok((slot, accounts))
    }

    /// [`Coalescer::read`] of at most [`MAX_ADDRESSES`] addresses.
    async fn read_in_one_call<F, Fut>(&self, addresses: &[Pubkey], fetch: F) -> Read
    where
        F: Fn(Vec<Pubkey>) -> Fut + Send + 'static,
        Fut: Future<Output = Read> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let batch = {
            let mut queue = self.shared.queue.lock().expect("read queue");
            queue.addresses += addresses.len();
            queue.reads.push_back(Pending {
                addresses: addresses.to_vec(),
                reply,
            });
            if queue.wants_call(&self.shared.limits) {
                queue.calls += 1;
                Some(queue.take_batch())
            } else {
                None
            }
        };
        if let Some(batch) = batch {
            tokio::spawn(calls(self.shared.clone(), batch, fetch));
        }
        answer.await.unwrap_or_else(|_| {
            Err(LedgerError::Unavailable(
                "the account read was dropped".into(),
            ))
        })
    }
}

/// One call slot: calls for `batch`, then for whatever queued meanwhile while a call is
/// still wanted, then gives the slot back, under the lock a read queues under (a read that
/// found every slot taken is carried by a call still in flight). Each call runs as a task of
/// its own, so a panic in `fetch` fails only the reads it carried and the slot goes on.
async fn calls<F, Fut>(shared: Arc<Shared>, mut batch: Vec<Pending>, fetch: F)
where
    F: Fn(Vec<Pubkey>) -> Fut,
    Fut: Future<Output = Read> + Send + 'static,
{
    loop {
        let all: Vec<Pubkey> = batch
            .iter()
            .flat_map(|p| p.addresses.iter().copied())
            .collect();
        shared.calls_made.fetch_add(1, Ordering::Relaxed);
        shared
            .addresses_read
            .fetch_add(all.len() as u64, Ordering::Relaxed);
        let read = tokio::spawn(fetch(all)).await.unwrap_or_else(|_| {
            Err(LedgerError::Unavailable(
                "the account read's call failed".into(),
            ))
        });
        answer_each(batch, read);
        let mut queue = shared.queue.lock().expect("read queue");
        queue.calls -= 1;
        if !queue.wants_call(&shared.limits) {
            return;
        }
        queue.calls += 1;
        batch = queue.take_batch();
    }
}

/// Hands each read its slice of the call's answer (or the call's error).
fn answer_each(batch: Vec<Pending>, read: Read) {
    match read {
        Ok((slot, accounts)) => {
            let mut accounts = accounts.into_iter();
            for pending in batch {
                let mine: Vec<_> = accounts.by_ref().take(pending.addresses.len()).collect();
                let answer = if mine.len() == pending.addresses.len() {
                    Ok((slot, mine))
                } else {
                    Err(LedgerError::Malformed(
                        "the node answered fewer accounts than asked".into(),
                    ))
                };
                let _ = pending.reply.send(answer);
            }
        }
        Err(e) => {
            for pending in batch {
                let _ = pending.reply.send(Err(e.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Each address reads back as an account whose lamports are its first byte.
    fn answer(addresses: &[Pubkey]) -> Read {
        Ok((
            7,
            addresses
                .iter()
                .map(|a| {
                    Some(LedgerAccount {
                        owner: Pubkey::default(),
                        lamports: u64::from(a.to_bytes()[0]),
                        data: vec![],
                    })
                })
                .collect(),
        ))
    }

    async fn until(what: &str, condition: impl Fn() -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !condition() {
            assert!(tokio::time::Instant::now() < deadline, "{what} within 5 s");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// A read's answer: the slot and the accounts.
    type Answered = (u64, Vec<Option<LedgerAccount>>);

    /// Calls that record their number of addresses and are held until the gate opens.
    #[derive(Clone)]
    struct GatedNode {
        sizes: Arc<Mutex<Vec<usize>>>,
        gate: tokio::sync::watch::Receiver<bool>,
    }

    impl GatedNode {
        fn new() -> (GatedNode, tokio::sync::watch::Sender<bool>) {
            let (open, gate) = tokio::sync::watch::channel(false);
            let sizes = Arc::new(Mutex::new(Vec::new()));
            (GatedNode { sizes, gate }, open)
        }

        /// The calls so far, by their number of addresses.
        fn calls(&self) -> Vec<usize> {
            self.sizes.lock().unwrap().clone()
        }

        /// Reads `addresses` through `coalescer`, with this node answering.
        fn read(
            &self,
            coalescer: &Arc<Coalescer>,
            n: u8,
            addresses: Vec<Pubkey>,
        ) -> tokio::task::JoinHandle<(u8, Answered)> {
            let (coalescer, node) = (coalescer.clone(), self.clone());
            tokio::spawn(async move {
                let read = coalescer
                    .read(&addresses, move |all: Vec<Pubkey>| {
                        let node = node.clone();
                        async move {
                            node.sizes.lock().unwrap().push(all.len());
                            let _ = node.gate.clone().wait_for(|open| *open).await;
                            answer(&all)
                        }
                    })
                    .await
                    .unwrap();
                (n, read)
            })
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reads_that_arrive_during_a_call_share_the_next_one() {
        let coalescer = Arc::new(Coalescer::new(1, 1));
        let (node, open) = GatedNode::new();
        let reader = |n: u8| {
            node.read(
                &coalescer,
                n,
                vec![
                    Pubkey::new_from_array([n; 32]),
                    Pubkey::new_from_array([n.wrapping_add(100); 32]),
                ],
            )
        };
        // The first read takes the one call slot and is held there.
        let first = reader(0);
        until("the first call", || node.calls().len() == 1).await;
        // 49 more arrive meanwhile: they queue (98 addresses, one call's worth).
        let rest: Vec<_> = (1..50).map(reader).collect();
        until("49 queued reads", || coalescer.queued() == 49).await;
        open.send(true).unwrap();
        let mut answers = vec![first.await.unwrap()];
        for r in rest {
            answers.push(r.await.unwrap());
        }
        // Two calls in all, and every read got its own accounts, in its order.
        assert_eq!(node.calls(), [2, 98]);
        for (n, (slot, accounts)) in answers {
            assert_eq!(slot, 7);
            let lamports: Vec<u64> = accounts
                .iter()
                .map(|a| a.as_ref().unwrap().lamports)
                .collect();
            assert_eq!(lamports, [u64::from(n), u64::from(n.wrapping_add(100))]);
        }
        assert_eq!(coalescer.queued(), 0);
    }

    /// Beyond the eager calls, a call goes out only for half a call's worth of addresses; a
    /// call that ends takes what waits.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_beyond_the_eager_ones_waits_for_half_a_call_of_addresses() {
        let coalescer = Arc::new(Coalescer::new(1, 2));
        let (node, open) = GatedNode::new();
        let reader = |n: u8| node.read(&coalescer, n, vec![Pubkey::new_from_array([n; 32]); 2]);
        let calls = || node.calls();
        // The eager call, held open.
        let mut readers = vec![reader(0)];
        until("the eager call", || calls() == [2]).await;
        // 24 reads (48 addresses) wait: not yet worth a second call. A read decides under the
        // queue's lock whether it calls, and a call takes the reads out of the queue, so 24
        // queued means none of them called.
        readers.extend((1..25).map(reader));
        until("24 queued reads", || coalescer.queued() == 24).await;
        assert_eq!(calls(), [2]);
        // The 25th brings 50 addresses: the second call carries all of them.
        readers.push(reader(25));
        until("the second call", || calls().len() == 2).await;
        assert_eq!(calls(), [2, 50]);
        assert_eq!(coalescer.queued(), 0);
        // With both slots taken, three more wait (6 addresses); as the calls end, the slot
        // that leaves fewer than the eager calls in flight calls for them.
        readers.extend((26..29).map(reader));
        until("3 queued reads", || coalescer.queued() == 3).await;
        open.send(true).unwrap();
        for reader in readers {
            let (n, (_, accounts)) = reader.await.unwrap();
            for account in accounts {
                assert_eq!(account.unwrap().lamports, u64::from(n));
            }
        }
        assert_eq!(calls(), [2, 50, 6]);
        assert_eq!(coalescer.counts(), (3, 58));
        assert_eq!(coalescer.queued(), 0);
        // A call answers its reads before it gives its slot back: wait for the slot.
        until("every slot given back", || coalescer.calls_in_flight() == 0).await;
    }

    /// A read of more addresses than a node takes in one call goes out a call's worth at a
    /// time, and is answered whole, in order.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_read_longer_than_a_call_is_split_into_calls_the_node_takes() {
        let coalescer = Arc::new(Coalescer::new(2, 8));
        let (node, open) = GatedNode::new();
        open.send(true).unwrap();
        let addresses: Vec<Pubkey> = (0..=249u8)
            .map(|n| Pubkey::new_from_array([n; 32]))
            .collect();
        let (_, (slot, accounts)) = node.read(&coalescer, 0, addresses).await.unwrap();
        assert_eq!(node.calls(), [100, 100, 50]);
        assert_eq!(slot, 7);
        let lamports: Vec<u64> = accounts
            .iter()
            .map(|a| a.as_ref().unwrap().lamports)
            .collect();
        assert_eq!(lamports, (0..=249u64).collect::<Vec<_>>());
    }

    /// A call whose fetch panics fails the reads it carried, as a failed call does, and its
    /// slot is free for the next read.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_panicking_call_fails_its_reads_and_frees_its_slot() {
        let coalescer = Arc::new(Coalescer::new(1, 1));
        let (open, gate) = tokio::sync::watch::channel(false);
        let reader = |n: u8| {
            let (coalescer, gate) = (coalescer.clone(), gate.clone());
            tokio::spawn(async move {
                coalescer
                    .read(&[Pubkey::new_from_array([n; 32])], move |_| {
                        let mut gate = gate.clone();
                        async move {
                            let _ = gate.wait_for(|open| *open).await;
                            panic!("the node client broke")
                        }
                    })
                    .await
            })
        };
        // One read in the call, one queued behind it: the slot's next call carries it.
        let first = reader(1);
        until("the first call", || coalescer.counts().0 == 1).await;
        let second = reader(2);
        until("1 queued read", || coalescer.queued() == 1).await;
        open.send(true).unwrap();
        for read in [first, second] {
            assert!(matches!(
                read.await.unwrap(),
                Err(LedgerError::Unavailable(m)) if m == "the account read's call failed"
            ));
        }
        assert_eq!(coalescer.counts(), (2, 2));
        // A call answers its reads before it gives its slot back: wait for the slot.
        until("every slot given back", || coalescer.calls_in_flight() == 0).await;
        let key = Pubkey::new_from_array([9; 32]);
        let (_, accounts) = coalescer
            .read(&[key], |all: Vec<Pubkey>| async move { answer(&all) })
            .await
            .unwrap();
        assert_eq!(accounts[0].as_ref().unwrap().lamports, 9);
    }

    #[tokio::test]
    async fn a_failed_call_fails_every_read_it_carried_and_an_idle_read_goes_at_once() {
        let coalescer = Coalescer::new(2, 2);
        let key = Pubkey::new_from_array([3; 32]);
        let read = coalescer
            .read(&[key], |all: Vec<Pubkey>| async move { answer(&all) })
            .await
            .unwrap();
        assert_eq!(read.1[0].as_ref().unwrap().lamports, 3);
        let failed = coalescer
            .read(&[key], |_| async {
                Err(LedgerError::Unavailable("down".into()))
            })
            .await;
        assert!(matches!(failed, Err(LedgerError::Unavailable(m)) if m == "down"));
        let short = coalescer
            .read(&[key, key], |_| async { Ok((1, vec![None])) })
            .await;
        assert!(matches!(short, Err(LedgerError::Malformed(_))));
    }
}
