//! The api's `Ledger` over a solana-program-test bank: transactions processed through it are
//! remembered by signature, as a cluster's `getTransaction` would find them, failed ones
//! included; each lands in a slot of its own.

// program-test 3.1 marks `ProgramTestContext::banks_client` deprecated (unstable API from 4.0).
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use integration_tests::harness::Harness;
use narrative_api::chain::ledger::{
    BalanceChange, LandedTransaction, Ledger, LedgerAccount, LedgerError, SignatureStatus,
    TokenAccountRef,
};
use narrative_sdk::Pubkey;
use solana_hash::Hash;
use solana_message::inner_instruction::InnerInstructions;
use solana_signature::Signature;
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction::Transaction;
use tokio::sync::Mutex;

pub struct BankLedger {
    pub harness: Arc<Mutex<Harness>>,
    landed: std::sync::Mutex<HashMap<Signature, LandedTransaction>>,
    /// What ran, with its inner instructions, so a test can index it as the indexer would.
    recorded: std::sync::Mutex<HashMap<Signature, Recorded>>,
    /// While set, every read and send fails as an RPC node that does not answer would.
    offline: AtomicBool,
    /// While set, `signature_status` knows no signature, as a node answers for those that
    /// landed before its recent slots; `transaction` still finds them.
    statuses_forgotten: AtomicBool,
    /// Questions about a signature so far (`signature_status` and `transaction`), so a test
    /// can tell that a confirm is waiting for its transaction.
    lookups: AtomicUsize,
    /// While set, the blockhash every `latest_blockhash` answers, as the service's node client
    /// keeps one for 10 s: the bank's own moves on with time.
    held_blockhash: std::sync::Mutex<Option<Hash>>,
    /// While set, `accounts` answers as a node behind the bank: at this slot, these accounts
    /// as they were then.
    behind: std::sync::Mutex<Option<(u64, AccountsThen)>>,
}

/// Accounts as a node behind the bank holds them.
pub type AccountsThen = Vec<(Pubkey, Option<LedgerAccount>)>;

/// A transaction as the indexer receives it.
#[derive(Clone)]
pub struct Recorded {
    pub transaction: Transaction,
    pub inner_instructions: Vec<InnerInstructions>,
}

impl BankLedger {
    /// A transaction processed through this ledger, with its inner instructions.
    pub fn recorded(&self, signature: &Signature) -> Option<Recorded> {
        self.recorded.lock().unwrap().get(signature).cloned()
    }

    pub fn new(harness: Harness) -> Arc<BankLedger> {
        Arc::new(BankLedger {
            harness: Arc::new(Mutex::new(harness)),
            landed: Default::default(),
            recorded: Default::default(),
            offline: Default::default(),
            statuses_forgotten: Default::default(),
            lookups: Default::default(),
            held_blockhash: Default::default(),
            behind: Default::default(),
        })
    }

    /// Answers the bank's current blockhash to every `latest_blockhash` until
    /// [`BankLedger::release_blockhash`]: prepares made meanwhile share it, as the service's
    /// within its blockhash's 10 s.
    pub async fn hold_blockhash(&self) {
        let current = self
            .harness
            .lock()
            .await
            .ctx
            .banks_client
            .get_latest_blockhash()
            .await;
        *self.held_blockhash.lock().unwrap() = Some(current.expect("the bank's blockhash"));
    }

    pub fn release_blockhash(&self) {
        *self.held_blockhash.lock().unwrap() = None;
    }

    /// Makes `accounts` answer as a node behind the bank (one of several behind a load
    /// balancer), until [`BankLedger::catch_up`]: read at `slot`, where the accounts `then`
    /// names hold what it gives (a test read them at that slot).
    pub fn fall_behind(&self, slot: u64, then: AccountsThen) {
        *self.behind.lock().unwrap() = Some((slot, then));
    }

    pub fn catch_up(&self) {
        *self.behind.lock().unwrap() = None;
    }

    /// How many times a signature has been asked about.
    pub fn lookups(&self) -> usize {
        self.lookups.load(Ordering::SeqCst)
    }

    /// Makes the ledger stop (or start again) answering the api, as an RPC outage would; the
    /// bank itself keeps running, so a test can still land transactions through `process`.
    pub fn set_offline(&self, offline: bool) {
        self.offline.store(offline, Ordering::SeqCst);
    }

    /// Makes `signature_status` answer as a node whose status cache no longer holds any
    /// landed transaction (it keeps about 150 slots' worth, a minute or two): what a wallet
    /// confirming minutes after it sent meets.
    pub fn forget_statuses(&self) {
        self.statuses_forgotten.store(true, Ordering::SeqCst);
    }

    fn answering(&self) -> Result<(), LedgerError> {
        if self.offline.load(Ordering::SeqCst) {
            Err(LedgerError::Unavailable(
                "the test's RPC node is offline".into(),
            ))
        } else {
            Ok(())
        }
    }

    /// Executes a wallet-signed transaction; `Err` carries the bank's error, and the
    /// transaction is on the ledger either way (as a failed transaction that paid its fee).
    pub async fn process(&self, tx: Transaction) -> Result<Signature, String> {
        let signature = tx.signatures[0];
        let mut h = self.harness.lock().await;
        let clock = h.clock().await;
        let slot = clock.slot;
        // Simulated first, for the inner instructions the indexer would see.
        let inner_instructions = h
            .ctx
            .banks_client
            .simulate_transaction(tx.clone())
            .await
            .ok()
            .and_then(|s| s.simulation_details)
            .and_then(|d| d.inner_instructions)
            .unwrap_or_default();
        self.recorded.lock().unwrap().insert(
            signature,
            Recorded {
                transaction: tx.clone(),
                inner_instructions,
            },
        );
        let outcome = h
            .ctx
            .banks_client
            .process_transaction_with_metadata(tx.clone())
            .await
            .map_err(|e| e.to_string())?;
        let error = outcome.result.err().map(|e| format!("{e:?}"));
        h.next_slot().await;
        let landed = LandedTransaction::new(slot, error.clone(), &VersionedTransaction::from(tx))
            .unwrap()
            .produced_at(Some(clock.unix_timestamp));
        self.landed.lock().unwrap().insert(signature, landed);
        match error {
            None => Ok(signature),
            Some(e) => Err(e),
        }
    }
}

#[async_trait::async_trait]
impl Ledger for BankLedger {
    async fn latest_blockhash(&self) -> Result<Hash, LedgerError> {
        self.answering()?;
        if let Some(held) = *self.held_blockhash.lock().unwrap() {
            return Ok(held);
        }
        let h = self.harness.lock().await;
        h.ctx
            .banks_client
            .get_latest_blockhash()
            .await
            .map_err(|e| LedgerError::Unavailable(e.to_string()))
    }

    async fn signature_status(
        &self,
        signature: &Signature,
    ) -> Result<Option<SignatureStatus>, LedgerError> {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        self.answering()?;
        if self.statuses_forgotten.load(Ordering::SeqCst) {
            return Ok(None);
        }
        Ok(self
            .landed
            .lock()
            .unwrap()
            .get(signature)
            .map(|landed| SignatureStatus {
                slot: landed.slot,
                error: landed.error.clone(),
            }))
    }

    async fn transaction(
        &self,
        signature: &Signature,
    ) -> Result<Option<LandedTransaction>, LedgerError> {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        self.answering()?;
        Ok(self.landed.lock().unwrap().get(signature).cloned())
    }

    async fn accounts(
        &self,
        addresses: &[Pubkey],
    ) -> Result<(u64, Vec<Option<LedgerAccount>>), LedgerError> {
        self.answering()?;
        let behind = self.behind.lock().unwrap().clone();
        let mut h = self.harness.lock().await;
        let mut slot = h.clock().await.slot;
        let mut accounts = Vec::with_capacity(addresses.len());
        for address in addresses {
            accounts.push(h.raw_account(*address).await.map(|a| LedgerAccount {
                owner: a.owner,
                lamports: a.lamports,
                data: a.data,
            }));
        }
        if let Some((at, then)) = behind {
            slot = at;
            for (address, account) in addresses.iter().zip(accounts.iter_mut()) {
                if let Some((_, old)) = then.iter().find(|(a, _)| a == address) {
                    account.clone_from(old);
                }
            }
        }
        Ok((slot, accounts))
    }

    async fn send(&self, tx: &VersionedTransaction) -> Result<Signature, LedgerError> {
        self.answering()?;
        let legacy = tx
            .clone()
            .into_legacy_transaction()
            .ok_or_else(|| LedgerError::Malformed("only legacy transactions here".into()))?;
        // A transaction that fails still lands, as on a cluster; the caller reads its error.
        Ok(match self.process(legacy).await {
            Ok(signature) => signature,
            Err(_) => tx.signatures[0],
        })
    }

    async fn token_history(
        &self,
        _account: &TokenAccountRef,
        _since: i64,
        _stop_below: u64,
        _limit: usize,
    ) -> Result<Vec<BalanceChange>, LedgerError> {
        Err(LedgerError::Unavailable(
            "program-test keeps no index of an address's signatures".into(),
        ))
    }
}

/// A bank ledger a test watches: it counts the transactions sent through it, and can lose the
/// answer to the next `send` (the transaction still lands), as when the connection drops after
/// the node accepted it. A handler run over it shows what *it* sent, whatever background jobs
/// send over the bank at the same time.
pub struct TappedLedger {
    inner: Arc<BankLedger>,
    sent: AtomicUsize,
    lose_next_send: AtomicBool,
}

impl TappedLedger {
    pub fn new(inner: Arc<BankLedger>) -> Arc<Self> {
        Arc::new(TappedLedger {
            inner,
            sent: Default::default(),
            lose_next_send: Default::default(),
        })
    }

    /// The same, losing the answer to its first `send`.
    pub fn losing_first_answer(inner: Arc<BankLedger>) -> Arc<Self> {
        let tapped = Self::new(inner);
        tapped.lose_next_send.store(true, Ordering::SeqCst);
        tapped
    }

    /// Transactions sent through this ledger so far (landed or not).
    pub fn sent(&self) -> usize {
        self.sent.load(Ordering::SeqCst)
    }
}

#[async_trait::async_trait]
impl Ledger for TappedLedger {
    async fn latest_blockhash(&self) -> Result<Hash, LedgerError> {
        self.inner.latest_blockhash().await
    }

    async fn signature_status(
        &self,
        signature: &Signature,
    ) -> Result<Option<SignatureStatus>, LedgerError> {
        self.inner.signature_status(signature).await
    }

    async fn transaction(
        &self,
        signature: &Signature,
    ) -> Result<Option<LandedTransaction>, LedgerError> {
        self.inner.transaction(signature).await
    }

    async fn accounts(
        &self,
        addresses: &[Pubkey],
    ) -> Result<(u64, Vec<Option<LedgerAccount>>), LedgerError> {
        self.inner.accounts(addresses).await
    }

    async fn send(&self, tx: &VersionedTransaction) -> Result<Signature, LedgerError> {
        self.sent.fetch_add(1, Ordering::SeqCst);
        let signature = self.inner.send(tx).await?;
        if self.lose_next_send.swap(false, Ordering::SeqCst) {
            return Err(LedgerError::Unavailable("connection reset".into()));
        }
        Ok(signature)
    }

    async fn token_history(
        &self,
        account: &TokenAccountRef,
        since: i64,
        stop_below: u64,
        limit: usize,
    ) -> Result<Vec<BalanceChange>, LedgerError> {
        self.inner
            .token_history(account, since, stop_below, limit)
            .await
    }
}
