//! JSON-RPC fallback for any validator (solana-test-validator included): a `getProgramAccounts`
//! snapshot with its slot, diffed against the previous one into account updates and closures,
//! and `getSignaturesForAddress` + `getTransaction` for the programs' events. Polls at an
//! interval; a failed poll is retried with backoff.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use narrative_sdk::Pubkey;
use narrative_store::{AccountUpdate, Closure};
use serde_json::json;
use solana_account_decoder_client_types::UiAccountEncoding;
use solana_commitment_config::CommitmentConfig;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_rpc_client_api::config::{RpcAccountInfoConfig, RpcProgramAccountsConfig};
use solana_rpc_client_api::request::RpcRequest;
use solana_rpc_client_api::response::{
    OptionalContext, RpcConfirmedTransactionStatusWithSignature, RpcKeyedAccount,
};
use solana_transaction_status_client_types::option_serializer::OptionSerializer;
use solana_transaction_status_client_types::{
    EncodedConfirmedTransactionWithStatusMeta, UiInstruction,
};
use tokio::sync::mpsc;
use tracing::warn;

use crate::metrics::Metrics;
use crate::redact::Redactor;
use crate::source::{
    Backoff, Envelope, InnerInstruction, ResumePoint, Source, SourceMessage, TransactionUpdate,
};

/// Signatures per `getSignaturesForAddress` page (the server's maximum).
const SIGNATURE_PAGE: usize = 1_000;

pub struct RpcSource {
    pub url: String,
    pub programs: Vec<Pubkey>,
    pub poll_interval: Duration,
    pub metrics: Metrics,
    backoff: Backoff,
    /// The URL out of what is logged: providers put their keys in it.
    redactor: Redactor,
    /// Per program: the accounts of the previous snapshot, and the newest signature processed.
    seen: HashMap<Pubkey, ProgramState>,
}

#[derive(Default)]
struct ProgramState {
    accounts: HashMap<Pubkey, (u64, Vec<u8>)>,
    newest_signature: Option<String>,
}

impl RpcSource {
    pub fn new(
        url: String,
        programs: Vec<Pubkey>,
        poll_interval: Duration,
        metrics: Metrics,
    ) -> Self {
        RpcSource {
            redactor: Redactor::new(&url),
            url,
            programs,
            poll_interval,
            metrics,
            backoff: Backoff::new(Duration::from_millis(200), Duration::from_secs(30)),
            seen: HashMap::new(),
        }
    }

    async fn poll(
        &mut self,
        client: &RpcClient,
        resume: Option<u64>,
        out: &mpsc::Sender<Envelope>,
    ) -> anyhow::Result<()> {
        let mut complete = u64::MAX;
        for program in self.programs.clone() {
            let (slot, accounts) = snapshot(client, &program).await?;
            complete = complete.min(slot);
            let state = self.seen.entry(program).or_default();
            let mut messages = Vec::new();
            for (address, (lamports, data)) in &accounts {
                if state.accounts.get(address) != Some(&(*lamports, data.clone())) {
                    messages.push(SourceMessage::Account(AccountUpdate {
                        address: *address,
                        owner: program,
                        lamports: *lamports,
                        data: data.clone(),
                        slot,
                        write_version: 0,
                    }));
                }
            }
            for address in state.accounts.keys().filter(|a| !accounts.contains_key(a)) {
                messages.push(SourceMessage::Closure(Closure {
                    address: *address,
                    slot,
                    write_version: 0,
                }));
            }
            let (transactions, newest) =
                new_transactions(client, &program, state.newest_signature.as_deref(), resume)
                    .await?;
            messages.extend(transactions.into_iter().map(SourceMessage::Transaction));
            for message in messages {
                if out.send(Envelope::now(message)).await.is_err() {
                    return Ok(());
                }
            }
            // Only after everything was handed over: a failure above re-sends it next poll.
            state.accounts = accounts;
            if newest.is_some() {
                state.newest_signature = newest;
            }
        }
        if complete != u64::MAX {
            self.metrics.observe_source_slot(complete);
            let _ = out
                .send(Envelope::now(SourceMessage::Complete(complete)))
                .await;
        }
        Ok(())
    }
}

impl Source for RpcSource {
    async fn run(mut self, resume: ResumePoint, out: mpsc::Sender<Envelope>) -> anyhow::Result<()> {
        let client =
            RpcClient::new_with_commitment(self.url.clone(), CommitmentConfig::confirmed());
        loop {
            let delay = match self.poll(&client, resume.get(), &out).await {
                Ok(()) => {
                    self.backoff.reset();
                    self.poll_interval
                }
                Err(error) => {
                    warn!(error = self.redactor.error(&error), "rpc poll failed");
                    self.metrics.reconnects.inc();
                    self.backoff.next_delay()
                }
            };
            if out.is_closed() {
                return Ok(());
            }
            tokio::time::sleep(delay).await;
        }
    }
}

/// Every account of `program` and the slot the snapshot was taken at. The client's typed
/// method drops the context (and with it the slot), so the request is sent raw.
pub(crate) async fn snapshot(
    client: &RpcClient,
    program: &Pubkey,
) -> anyhow::Result<(u64, HashMap<Pubkey, (u64, Vec<u8>)>)> {
    let config = RpcProgramAccountsConfig {
        account_config: RpcAccountInfoConfig {
            encoding: Some(UiAccountEncoding::Base64),
            commitment: Some(CommitmentConfig::confirmed()),
            ..Default::default()
        },
        with_context: Some(true),
        ..Default::default()
    };
    let response: OptionalContext<Vec<RpcKeyedAccount>> = client
        .send(
            RpcRequest::GetProgramAccounts,
            json!([program.to_string(), config]),
        )
        .await
        .context("getProgramAccounts")?;
    let OptionalContext::Context(response) = response else {
        bail!("getProgramAccounts answered without the context slot");
    };
    let mut accounts = HashMap::with_capacity(response.value.len());
    for keyed in response.value {
        let address: Pubkey = keyed.pubkey.parse().context("account pubkey")?;
        let data = keyed
            .account
            .data
            .decode()
            .context("account data is not base64")?;
        accounts.insert(address, (keyed.account.lamports, data));
    }
    Ok((response.context.slot, accounts))
}

/// Successful transactions mentioning `program` newer than `until` (or, on a first poll, not
/// older than the `resume` slot), oldest first, and the newest signature seen.
pub(crate) async fn new_transactions(
    client: &RpcClient,
    program: &Pubkey,
    until: Option<&str>,
    resume: Option<u64>,
) -> anyhow::Result<(Vec<TransactionUpdate>, Option<String>)> {
    let mut statuses: Vec<RpcConfirmedTransactionStatusWithSignature> = Vec::new();
    let mut before: Option<String> = None;
    loop {
        let page: Vec<RpcConfirmedTransactionStatusWithSignature> = client
            .send(
                RpcRequest::GetSignaturesForAddress,
                json!([program.to_string(), {
                    "before": before,
                    "until": until,
                    "limit": SIGNATURE_PAGE,
                    "commitment": "confirmed",
                }]),
            )
            .await
            .context("getSignaturesForAddress")?;
        let full = page.len() == SIGNATURE_PAGE;
        let reached_resume = page
            .iter()
            .any(|s| until.is_none() && resume.is_some_and(|r| s.slot < r));
        before = page.last().map(|s| s.signature.clone());
        statuses.extend(
            page.into_iter()
                .filter(|s| !(until.is_none() && resume.is_some_and(|r| s.slot < r))),
        );
        if !full || reached_resume {
            break;
        }
    }
    let newest = statuses.first().map(|s| s.signature.clone());
    let mut transactions = Vec::new();
    for status in statuses.iter().rev().filter(|s| s.err.is_none()) {
        if let Some(tx) = fetch_transaction(client, &status.signature).await? {
            transactions.push(tx);
        }
    }
    Ok((transactions, newest))
}

/// The transaction's inner instructions with their program ids; `None` when the node does not
/// have it (pruned) or it failed.
async fn fetch_transaction(
    client: &RpcClient,
    signature: &str,
) -> anyhow::Result<Option<TransactionUpdate>> {
    let found: Option<EncodedConfirmedTransactionWithStatusMeta> = client
        .send(
            RpcRequest::GetTransaction,
            json!([signature, {
                "encoding": "base64",
                "commitment": "confirmed",
                "maxSupportedTransactionVersion": 0,
            }]),
        )
        .await
        .context("getTransaction")?;
    let Some(found) = found else {
        return Ok(None);
    };
    let meta = found.transaction.meta.context("transaction without meta")?;
    if meta.err.is_some() {
        return Ok(None);
    }
    let tx = found
        .transaction
        .transaction
        .decode()
        .ok_or_else(|| anyhow!("transaction {signature} does not decode"))?;
    let mut keys: Vec<Pubkey> = tx
        .message
        .static_account_keys()
        .iter()
        .map(|k| Pubkey::new_from_array(k.to_bytes()))
        .collect();
    if let OptionSerializer::Some(loaded) = &meta.loaded_addresses {
        for key in loaded.writable.iter().chain(&loaded.readonly) {
            keys.push(key.parse().context("loaded address")?);
        }
    }
    let mut inner = Vec::new();
    if let OptionSerializer::Some(groups) = &meta.inner_instructions {
        for group in groups {
            for (position, instruction) in group.instructions.iter().enumerate() {
                let UiInstruction::Compiled(compiled) = instruction else {
                    bail!("parsed inner instruction in {signature}");
                };
                let program = *keys
                    .get(compiled.program_id_index as usize)
                    .context("inner instruction program index out of range")?;
                inner.push(InnerInstruction {
                    instruction_index: group.index.into(),
                    inner_index: position as u32,
                    program,
                    data: bs58::decode(&compiled.data)
                        .into_vec()
                        .context("inner instruction data")?,
                });
            }
        }
    }
    Ok(Some(TransactionUpdate {
        signature: signature.to_owned(),
        slot: found.slot,
        tx_index: 0,
        inner,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_failed_poll_is_logged_without_the_urls_key() {
        // Nothing listens on port 1: the client's error quotes the URL it could not reach.
        let url = "http://127.0.0.1:1/?api-key=rpc-key-99";
        let source = RpcSource::new(url.into(), vec![], Duration::from_secs(1), Metrics::new());
        let client = RpcClient::new(url.into());
        let error = anyhow::Error::from(client.get_slot().await.unwrap_err()).context("polling");
        assert!(format!("{error:#}").contains("rpc-key-99"), "{error:#}");
        let logged = source.redactor.error(&error);
        assert!(!logged.contains("rpc-key-99"), "{logged}");
        assert!(logged.starts_with("polling: "), "{logged}");
    }
}
