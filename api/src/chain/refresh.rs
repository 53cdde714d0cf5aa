//! Runs `refresh_accounts`: re-reads the accounts a confirmed transaction changed and writes
//! them through the store's batch writer, so a read right after a confirm shows the new state
//! without waiting for the indexer. The newer-only rule keeps the two writers consistent: a
//! refresh at slot S never replaces what the indexer wrote at S or later (write version 0).

use std::sync::Arc;

use narrative_store::{AccountUpdate, Batch, Closure, Store};

use crate::chain::ledger::Ledger;
use crate::jobs::refresh_accounts::RefreshAccounts;
use crate::jobs::{Handler, JobOutcome, Leased};

pub struct AccountRefresher {
    pub store: Store,
    pub ledger: Arc<dyn Ledger>,
}

#[async_trait::async_trait]
impl Handler<RefreshAccounts> for AccountRefresher {
    async fn run(&self, job: Leased<RefreshAccounts>) -> anyhow::Result<JobOutcome> {
        let addresses = job.job.addresses;
        let (slot, accounts) = self.ledger.accounts(&addresses).await?;
        let mut batch = Batch::default();
        for (address, account) in addresses.into_iter().zip(accounts) {
            match account {
                Some(account) => batch.accounts.push(AccountUpdate {
                    address,
                    owner: account.owner,
                    lamports: account.lamports,
                    data: account.data,
                    slot,
                    write_version: 0,
                }),
                None => batch.closures.push(Closure {
                    address,
                    slot,
                    write_version: 0,
                }),
            }
        }
        self.store.write_batch("api-refresh", &batch).await?;
        Ok(JobOutcome::Done)
    }
}
