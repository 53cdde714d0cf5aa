//! The api's job kinds. `refresh_accounts` re-reads accounts a confirmed transaction changed and
//! writes them through the store's batch writer, so a read right after a confirm shows the new
//! state without waiting for the indexer; the newer-only rule keeps the two writers consistent
//! (a refresh at slot S never replaces what the indexer wrote at S or later).

use std::sync::Arc;

use anyhow::Context;
use narrative_sdk::Pubkey;
use narrative_store::entities::jobs;
use narrative_store::{AccountUpdate, Batch, Closure, Store};
use serde_json::{json, Value};

use crate::jobs::{JobHandler, JobOutcome};
use crate::ledger::Ledger;

pub const REFRESH_ACCOUNTS: &str = "refresh_accounts";

/// The payload of a `refresh_accounts` job.
pub fn refresh_payload(addresses: &[Pubkey]) -> Value {
    json!({ "addresses": addresses.iter().map(|a| a.to_string()).collect::<Vec<_>>() })
}

pub struct ApiJobs {
    pub store: Store,
    pub ledger: Arc<dyn Ledger>,
    pub oracle: Option<Arc<solana_keypair::Keypair>>,
    /// For webhook deliveries.
    pub http: reqwest::Client,
    pub generator: Arc<dyn crate::generation::Generator>,
}

#[async_trait::async_trait]
impl JobHandler for ApiJobs {
    async fn run(&self, job: &jobs::Model) -> anyhow::Result<JobOutcome> {
        match job.kind.as_str() {
            REFRESH_ACCOUNTS => self
                .refresh_accounts(&job.payload)
                .await
                .map(|()| JobOutcome::Done),
            crate::settlement::SETTLE_NARRATIVE => {
                let oracle = self
                    .oracle
                    .as_ref()
                    .context("settlement needs ORACLE_KEYPAIR")?;
                crate::settlement::settle(&self.store, self.ledger.as_ref(), oracle, &job.payload)
                    .await
            }
            crate::agent_webhooks::DELIVER_WEBHOOK => {
                crate::agent_webhooks::deliver(&self.store, &self.http, job).await
            }
            crate::narrative_scoring::SCORE_NARRATIVE => {
                crate::narrative_scoring::score(&self.store, &job.payload)
                    .await
                    .map(|()| JobOutcome::Done)
            }
            crate::narrative_generation::GENERATE_NARRATIVE => {
                crate::narrative_generation::generate(
                    &self.store,
                    self.generator.as_ref(),
                    &job.payload,
                    job.attempts,
                )
                .await
                .map(|()| JobOutcome::Done)
            }
            other => anyhow::bail!("unknown job kind {other}"),
        }
    }
}

impl ApiJobs {
    async fn refresh_accounts(&self, payload: &Value) -> anyhow::Result<()> {
        let addresses: Vec<Pubkey> = payload["addresses"]
            .as_array()
            .context("payload without addresses")?
            .iter()
            .map(|a| {
                a.as_str()
                    .context("address is not a string")?
                    .parse()
                    .context("address")
            })
            .collect::<anyhow::Result<_>>()?;
        let (slot, accounts) = self.ledger.accounts(&addresses).await?;
        let mut batch = Batch::default();
        for (address, account) in addresses.into_iter().zip(accounts) {
            // Write version 0: anything the indexer saw at this slot is at least as new.
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
        Ok(())
    }
}
