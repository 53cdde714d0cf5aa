//! The ledger over JSON-RPC (`solana-rpc-client`), at `confirmed`. Its errors never show the
//! node's URL whole: providers put the API key in its query, user info or path, and the HTTP
//! client's errors quote the URL, so the client's error text is cleaned ([`Redactor`]) before
//! it becomes a [`LedgerError`] (and reaches the logs).

use narrative_sdk::Pubkey;
use serde_json::json;
use solana_commitment_config::CommitmentConfig;
use solana_hash::Hash;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use solana_rpc_client_api::config::RpcSendTransactionConfig;
use solana_rpc_client_api::request::RpcRequest;
use solana_signature::Signature;
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction_status_client_types::EncodedConfirmedTransactionWithStatusMeta;
use std::sync::Arc;

pub use narrative_indexer::redact::Redactor;

use super::accounts_call::AccountsCall;
use super::coalesce::Coalescer;
use super::{
    BalanceChange, LandedTransaction, Ledger, LedgerAccount, LedgerError, SignatureStatus,
    TokenAccountRef,
};
use crate::clock::SharedClock;
use crate::providers::fetched::Fetched;

/// How long (seconds) a fetched blockhash is handed out: well inside its ~60 s validity, so a
/// wallet still has most of a minute to sign.
pub const BLOCKHASH_TTL_SECS: i64 = 10;
/// How long a failed blockhash fetch is answered without asking the node again: a prepare
/// refused with 503 `ledger_unavailable` is retried by its wallet, and a node that is down is
/// not asked by every prepare meanwhile.
pub const BLOCKHASH_RETRY_AFTER_SECS: i64 = 1;

/// Account-read calls that go out at once; beyond them, reads wait and go out together
/// (`coalesce`). Two: against a node on the same network a call ends in well under a
/// millisecond, so under load two calls carry every read (0.24 calls a deposit prepare in the
/// bench on 2026-11-27, against 0.52 when any of eight free slots went out at once).
const EAGER_ACCOUNT_CALLS: usize = 2;

/// Account-read calls in flight at most: with a slow node the queue fills, and a call more
/// goes out for each half call's worth of addresses waiting.
const MAX_ACCOUNT_CALLS: usize = 8;

pub struct RpcLedger {
    client: Arc<RpcClient>,
    clock: SharedClock,
    /// The blockhash and when (unix seconds) it was fetched; one fetch at a time, whose
    /// outcome the prepares that waited for it share.
    blockhash: Fetched<Hash, LedgerError>,
    redactor: Arc<Redactor>,
    /// The one call the prepares' reads make, read without `solana-rpc-client`.
    accounts: Arc<AccountsCall>,
    reads: Coalescer,
}

impl RpcLedger {
    pub fn new(url: &str, clock: SharedClock) -> RpcLedger {
        let redactor = Arc::new(Redactor::new(url));
        RpcLedger {
            client: Arc::new(RpcClient::new_with_commitment(
                url.to_owned(),
                CommitmentConfig::confirmed(),
            )),
            clock,
            blockhash: Fetched::new(BLOCKHASH_TTL_SECS, BLOCKHASH_RETRY_AFTER_SECS),
            accounts: Arc::new(AccountsCall::new(url, redactor.clone())),
            redactor,
            reads: Coalescer::new(EAGER_ACCOUNT_CALLS, MAX_ACCOUNT_CALLS),
        }
    }

    /// A failed call, its text without the URL's secrets.
    fn unavailable(&self, e: impl std::fmt::Display) -> LedgerError {
        LedgerError::Unavailable(self.redactor.clean(&e.to_string()))
    }
}

impl std::fmt::Debug for RpcLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RpcLedger")
            .field("node", &self.redactor.shown())
            .finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl Ledger for RpcLedger {
    async fn latest_blockhash(&self) -> Result<Hash, LedgerError> {
        // One fetch for a burst of prepares, not one each; a failure is theirs too.
        let fetch = || async {
            let hash = self
                .client
                .get_latest_blockhash()
                .await
                .map_err(|e| self.unavailable(e))?;
            Ok(Hash::new_from_array(hash.to_bytes()))
        };
        let (hash, _) = self.blockhash.get(self.clock.now(), fetch).await?;
        Ok(hash)
    }

    async fn signature_status(
        &self,
        signature: &Signature,
    ) -> Result<Option<SignatureStatus>, LedgerError> {
        let statuses = self
            .client
            .get_signature_statuses(std::slice::from_ref(signature))
            .await
            .map_err(|e| self.unavailable(e))?;
        Ok(statuses
            .value
            .into_iter()
            .next()
            .flatten()
            // Processed is not enough: a processed transaction can still be dropped.
            .filter(|s| s.satisfies_commitment(CommitmentConfig::confirmed()))
            .map(|s| SignatureStatus {
                slot: s.slot,
                error: s.err.map(|e| format!("{e:?}")),
            }))
    }

    async fn transaction(
        &self,
        signature: &Signature,
    ) -> Result<Option<LandedTransaction>, LedgerError> {
        // The typed method turns "not found" into an error; the raw request keeps it `null`.
        let found: Option<EncodedConfirmedTransactionWithStatusMeta> = self
            .client
            .send(
                RpcRequest::GetTransaction,
                json!([signature.to_string(), {
                    "encoding": "base64",
                    "commitment": "confirmed",
                    "maxSupportedTransactionVersion": 0,
                }]),
            )
            .await
            .map_err(|e| self.unavailable(e))?;
        let Some(found) = found else {
            return Ok(None);
        };
        let meta = found
            .transaction
            .meta
            .ok_or_else(|| LedgerError::Malformed("transaction without status meta".into()))?;
        let tx = found
            .transaction
            .transaction
            .decode()
            .ok_or_else(|| LedgerError::Malformed("transaction does not decode".into()))?;
        let error = meta.err.map(|e| format!("{e:?}"));
        let landed = LandedTransaction::new(found.slot, error, &tx)?;
        Ok(Some(landed.produced_at(found.block_time)))
    }

    async fn accounts(
        &self,
        addresses: &[Pubkey],
    ) -> Result<(u64, Vec<Option<LedgerAccount>>), LedgerError> {
        let call = self.accounts.clone();
        self.reads
            .read(addresses, move |all| {
                let call = call.clone();
                async move { call.read(&all).await }
            })
            .await
    }

    async fn send(&self, tx: &VersionedTransaction) -> Result<Signature, LedgerError> {
        self.client
            .send_transaction_with_config(
                tx,
                RpcSendTransactionConfig {
                    preflight_commitment: Some(CommitmentConfig::confirmed().commitment),
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| self.unavailable(e))
    }

    fn metrics(&self) -> String {
        let (calls, addresses) = self.reads.counts();
        format!(
            "# HELP ledger_account_calls_total getMultipleAccounts calls made to the node (reads share them).\n\
             # TYPE ledger_account_calls_total counter\n\
             ledger_account_calls_total {calls}\n\
             # HELP ledger_account_addresses_total Account addresses those calls read.\n\
             # TYPE ledger_account_addresses_total counter\n\
             ledger_account_addresses_total {addresses}\n"
        )
    }

    async fn token_history(
        &self,
        account: &TokenAccountRef,
        since: i64,
        stop_below: u64,
        limit: usize,
    ) -> Result<Vec<BalanceChange>, LedgerError> {
        let mut changes = Vec::new();
        let mut before: Option<String> = None;
        // Failed transactions are skipped without counting towards `limit`, so the pages of
        // signatures are bounded on their own: a walk reads at most this many.
        let max_pages = limit.div_ceil(SIGNATURES_PER_PAGE) + 1;
        for _ in 0..max_pages {
            let mut options = json!({"limit": SIGNATURES_PER_PAGE, "commitment": "confirmed"});
            if let Some(before) = &before {
                options["before"] = json!(before);
            }
            let page: Vec<SignatureEntry> = self
                .client
                .send(
                    RpcRequest::GetSignaturesForAddress,
                    json!([account.address.to_string(), options]),
                )
                .await
                .map_err(|e| self.unavailable(e))?;
            let Some(last) = page.last() else {
                return Ok(changes);
            };
            before = Some(last.signature.clone());
            let full_page = page.len() == SIGNATURES_PER_PAGE;
            for entry in page.into_iter().filter(|e| e.err.is_none()) {
                if changes.len() == limit {
                    return Err(LedgerError::Unavailable(format!(
                        "more than {limit} transactions of the token account in the period"
                    )));
                }
                let change = self.balance_change(account, &entry.signature).await?;
                let last =
                    change.block_time.is_some_and(|t| t < since) || change.before < stop_below;
                changes.push(change);
                if last {
                    return Ok(changes);
                }
            }
            if !full_page {
                return Ok(changes);
            }
        }
        Err(LedgerError::Unavailable(format!(
            "more than {max_pages} pages of signatures of the token account in the period"
        )))
    }
}

/// `getSignaturesForAddress` pages at most this many (the node's own maximum).
const SIGNATURES_PER_PAGE: usize = 1000;

#[derive(serde::Deserialize)]
struct SignatureEntry {
    signature: String,
    err: Option<serde_json::Value>,
}

impl RpcLedger {
    /// What the transaction `signature` did to `account`'s balance, from its status meta: the
    /// token balances name accounts by index into the message's keys followed by the keys its
    /// address tables loaded.
    async fn balance_change(
        &self,
        account: &TokenAccountRef,
        signature: &str,
    ) -> Result<BalanceChange, LedgerError> {
        let found: serde_json::Value = self
            .client
            .send(
                RpcRequest::GetTransaction,
                json!([signature, {
                    "encoding": "json",
                    "commitment": "confirmed",
                    "maxSupportedTransactionVersion": 0,
                }]),
            )
            .await
            .map_err(|e| self.unavailable(e))?;
        let malformed = |what: &str| LedgerError::Malformed(format!("{what} in {signature}"));
        let meta = found
            .get("meta")
            .ok_or_else(|| malformed("no status meta"))?;
        let keys: Vec<&str> = [
            &found["transaction"]["message"]["accountKeys"],
            &meta["loadedAddresses"]["writable"],
            &meta["loadedAddresses"]["readonly"],
        ]
        .into_iter()
        .filter_map(|list| list.as_array())
        .flatten()
        .map(|key| key.as_str().unwrap_or_default())
        .collect();
        let address = account.address.to_string();
        let mint = account.mint.to_string();
        let balance = |list: &serde_json::Value| -> Result<u64, LedgerError> {
            let entry = list.as_array().into_iter().flatten().find(|entry| {
                entry["accountIndex"]
                    .as_u64()
                    .and_then(|i| keys.get(i as usize))
                    .is_some_and(|key| *key == address)
                    && entry["mint"].as_str() == Some(mint.as_str())
            });
            match entry {
                None => Ok(0),
                Some(entry) => entry["uiTokenAmount"]["amount"]
                    .as_str()
                    .and_then(|amount| amount.parse().ok())
                    .ok_or_else(|| malformed("an unreadable token amount")),
            }
        };
        Ok(BalanceChange {
            signature: signature
                .parse()
                .map_err(|_| malformed("a bad signature"))?,
            block_time: found["blockTime"].as_i64(),
            before: balance(&meta["preTokenBalances"])?,
            after: balance(&meta["postTokenBalances"])?,
        })
    }
}
