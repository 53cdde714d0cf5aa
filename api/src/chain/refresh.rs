//! Runs `refresh_accounts`: re-reads the accounts a confirmed transaction changed and writes
//! them through the store's batch writer, so a read right after a confirm shows the new state
//! without waiting for the indexer. The newer-only rule keeps the two writers consistent: a
//! refresh at slot S never replaces what the indexer wrote at S or later (write version 0).

use std::sync::Arc;

use narrative_sdk::Pubkey;
use narrative_store::{AccountUpdate, Batch, Closure, Store};

use crate::chain::ledger::{Ledger, LedgerAccount};
use crate::jobs::refresh_accounts::RefreshAccounts;
use crate::jobs::{Handler, JobOutcome, Leased};

pub struct AccountRefresher {
    pub store: Store,
    pub ledger: Arc<dyn Ledger>,
}

#[async_trait::async_trait]
impl Handler<RefreshAccounts> for AccountRefresher {
    async fn run(&self, job: Leased<RefreshAccounts>) -> anyhow::Result<JobOutcome> {
        read_through(&self.store, self.ledger.as_ref(), &job.job.addresses).await?;
        Ok(JobOutcome::Done)
    }
}

/// Reads `addresses` from the ledger and writes them into the store as the indexer would (at
/// the read's slot, write version 0, so whatever the indexer wrote at that slot or later wins);
/// the accounts as read.
pub async fn read_through(
    store: &Store,
    ledger: &dyn Ledger,
    addresses: &[Pubkey],
) -> anyhow::Result<Vec<Option<LedgerAccount>>> {
    let (slot, accounts) = ledger.accounts(addresses).await?;
    let mut batch = Batch::default();
    for (address, account) in addresses.iter().zip(&accounts) {
        match account {
            Some(account) => batch.accounts.push(AccountUpdate {
                address: *address,
                owner: account.owner,
                lamports: account.lamports,
                data: account.data.clone(),
                slot,
                write_version: 0,
            }),
            None => batch.closures.push(Closure {
                address: *address,
                slot,
                write_version: 0,
            }),
        }
    }
    store.write_batch("api-refresh", &batch).await?;
    Ok(accounts)
}
