//! Reconciling the store with the chain through JSON-RPC, for what a Yellowstone stream cannot
//! deliver: the accounts that already exist on a first start (a subscription only sends
//! changes), and whatever happened during an outage longer than the server's replay window.
//!
//! The caller subscribes first, so the stream covers everything from then on; this then takes
//! a `getProgramAccounts` snapshot of each program at a known slot and backfills the programs'
//! transactions since the checkpoint (`getSignaturesForAddress` + `getTransaction`), listed
//! after the snapshots so the backfill reaches at least their slots. Snapshot, backfill and
//! stream overlap on purpose: account rows merge by the newer-wins rule (a snapshot row is
//! `(slot, write_version 0)`, older than any streamed write in a later slot) and events are
//! unique by their position in their transaction, so every fact lands once whatever arrives
//! first. Everything is sent held (see [`Envelope::held`]): the checkpoint moves only when the
//! caller, after this returns, sends a checkpoint at the slot returned.

use anyhow::Context;
use narrative_sdk::Pubkey;
use narrative_store::AccountUpdate;
use solana_commitment_config::CommitmentConfig;
use solana_rpc_client::nonblocking::rpc_client::RpcClient;
use tokio::sync::mpsc;
use tracing::info;

use crate::source::rpc::{new_transactions, snapshot};
use crate::source::{Envelope, SourceMessage};

/// What is reconciled: a first start (no checkpoint, the whole history) or a gap since a
/// checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reconcile {
    Bootstrap,
    Gap { since: u64 },
}

impl Reconcile {
    /// The slot transactions are backfilled from (`None`: the programs' whole history).
    fn since(self) -> Option<u64> {
        match self {
            Reconcile::Bootstrap => None,
            Reconcile::Gap { since } => Some(since),
        }
    }
}

/// Sends the snapshot and the backfill into `out` (held), and returns the highest snapshot
/// slot: once everything sent before it is committed, the checkpoint may move there.
/// `Ok(None)` when `out` closed (the pipeline stopped) before the end.
pub async fn reconcile(
    rpc_url: &str,
    programs: &[Pubkey],
    what: Reconcile,
    out: &mpsc::Sender<Envelope>,
) -> anyhow::Result<Option<u64>> {
    let client = RpcClient::new_with_commitment(rpc_url.to_owned(), CommitmentConfig::confirmed());
    let mut snapshot_slot = 0;
    let mut accounts_sent = 0usize;
    for program in programs {
        let (slot, accounts) = snapshot(&client, program)
            .await
            .with_context(|| format!("snapshot of {program}"))?;
        snapshot_slot = snapshot_slot.max(slot);
        for (address, (lamports, data)) in accounts {
            let update = AccountUpdate {
                address,
                owner: *program,
                lamports,
                data,
                slot,
                write_version: 0,
            };
            if out
                .send(Envelope::held(SourceMessage::Account(update)))
                .await
                .is_err()
            {
                return Ok(None);
            }
            accounts_sent += 1;
        }
    }
    let mut transactions_sent = 0usize;
    // A transaction that touches two programs is listed for both; send it once.
    let mut sent = std::collections::HashSet::new();
    for program in programs {
        let (transactions, _) = new_transactions(&client, program, None, what.since())
            .await
            .with_context(|| format!("backfill of {program}"))?;
        for tx in transactions {
            if !sent.insert(tx.signature.clone()) {
                continue;
            }
            if out
                .send(Envelope::held(SourceMessage::Transaction(tx)))
                .await
                .is_err()
            {
                return Ok(None);
            }
            transactions_sent += 1;
        }
    }
    info!(
        ?what,
        snapshot_slot, accounts_sent, transactions_sent, "reconciled through json-rpc"
    );
    Ok(Some(snapshot_slot))
}
