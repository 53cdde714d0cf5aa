//! Account reads coalesced into `getMultipleAccounts` calls, as the prepared writer groups
//! inserts: while the node is busy with as many calls as the service allows at once, reads that
//! arrive queue up, and the next call carries all of them (up to the node's 100 addresses a
//! call). An idle service pays no wait: a read that finds a call slot free goes out at once.
//! Under load this turns a prepare's account read from one node round trip each into a share of
//! one (RPC providers count and limit calls, not addresses).

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};

use narrative_sdk::Pubkey;
use tokio::sync::{oneshot, Semaphore};

use super::{LedgerAccount, LedgerError};

/// The node's limit of addresses in one `getMultipleAccounts`.
pub const MAX_ADDRESSES: usize = 100;

/// What a read answers: the slot read at, and the accounts in the order asked.
pub type Read = Result<(u64, Vec<Option<LedgerAccount>>), LedgerError>;

struct Pending {
    addresses: Vec<Pubkey>,
    reply: oneshot::Sender<Read>,
}

pub struct Coalescer {
    queue: Mutex<VecDeque<Pending>>,
    calls: Arc<Semaphore>,
}

impl Coalescer {
    /// At most `max_calls` calls to the node at once.
    pub fn new(max_calls: usize) -> Coalescer {
        Coalescer {
            queue: Mutex::new(VecDeque::new()),
            calls: Arc::new(Semaphore::new(max_calls.max(1))),
        }
    }

    /// Reads waiting for a call.
    pub fn queued(&self) -> usize {
        self.queue.lock().expect("read queue").len()
    }

    /// Reads `addresses` through `fetch`, in one call with whatever else is waiting. The call
    /// runs as a task of its own, so a caller that goes away does not take the others' answers
    /// with it.
    pub async fn read<F, Fut>(&self, addresses: &[Pubkey], fetch: F) -> Read
    where
        F: Fn(Vec<Pubkey>) -> Fut + Clone + Send + 'static,
        Fut: Future<Output = Read> + Send + 'static,
    {
        let (reply, mut answer) = oneshot::channel();
        self.queue.lock().expect("read queue").push_back(Pending {
            addresses: addresses.to_vec(),
            reply,
        });
        // While this read is queued, this caller may make the next call (for the oldest reads,
        // which may not include its own: it then goes on to make another).
        let mut queued = true;
        loop {
            tokio::select! {
                biased;
                read = &mut answer => {
                    return read.unwrap_or_else(|_| {
                        Err(LedgerError::Unavailable("the account read was dropped".into()))
                    });
                }
                permit = self.calls.clone().acquire_owned(), if queued => {
                    let permit = permit.expect("the semaphore is never closed");
                    let batch = self.take_batch();
                    if batch.is_empty() {
                        // Another caller's call took this read; its answer is on the way.
                        queued = false;
                        continue;
                    }
                    let fetch = fetch.clone();
                    tokio::spawn(async move {
                        let all: Vec<Pubkey> =
                            batch.iter().flat_map(|p| p.addresses.iter().copied()).collect();
                        let read = fetch(all).await;
                        drop(permit);
                        answer_each(batch, read);
                    });
                }
            }
        }
    }

    /// The oldest waiting reads, up to [`MAX_ADDRESSES`] addresses (at least one read).
    fn take_batch(&self) -> Vec<Pending> {
        let mut queue = self.queue.lock().expect("read queue");
        let mut batch = Vec::new();
        let mut total = 0;
        while let Some(next) = queue.front() {
            if !batch.is_empty() && total + next.addresses.len() > MAX_ADDRESSES {
                break;
            }
            total += next.addresses.len();
            batch.push(queue.pop_front().expect("front exists"));
        }
        batch
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
    use std::sync::atomic::{AtomicUsize, Ordering};
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reads_that_arrive_during_a_call_share_the_next_one() {
        let coalescer = Arc::new(Coalescer::new(1));
        let calls = Arc::new(AtomicUsize::new(0));
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let (open, gate) = tokio::sync::watch::channel(false);
        let reader = |n: u8| {
            let (coalescer, calls, sizes, gate) = (
                coalescer.clone(),
                calls.clone(),
                sizes.clone(),
                gate.clone(),
            );
            async move {
                let addresses = [
                    Pubkey::new_from_array([n; 32]),
                    Pubkey::new_from_array([n.wrapping_add(100); 32]),
                ];
                let read = coalescer
                    .read(&addresses, move |all: Vec<Pubkey>| {
                        let (calls, sizes, mut gate) = (calls.clone(), sizes.clone(), gate.clone());
                        async move {
                            calls.fetch_add(1, Ordering::SeqCst);
                            sizes.lock().unwrap().push(all.len());
                            let _ = gate.wait_for(|open| *open).await;
                            answer(&all)
                        }
                    })
                    .await
                    .unwrap();
                (n, read)
            }
        };
        // The first read takes the one call slot and is held there.
        let first = tokio::spawn(reader(0));
        until("the first call", || calls.load(Ordering::SeqCst) == 1).await;
        // 49 more arrive meanwhile: they queue (98 addresses, one call's worth).
        let rest: Vec<_> = (1..50).map(|n| tokio::spawn(reader(n))).collect();
        until("49 queued reads", || coalescer.queued() == 49).await;
        open.send(true).unwrap();
        let mut answers = vec![first.await.unwrap()];
        for r in rest {
            answers.push(r.await.unwrap());
        }
        // Two calls in all, and every read got its own accounts, in its order.
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert_eq!(*sizes.lock().unwrap(), [2, 98]);
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

    #[tokio::test]
    async fn a_failed_call_fails_every_read_it_carried_and_an_idle_read_goes_at_once() {
        let coalescer = Coalescer::new(2);
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
