//! From a transaction's inner instructions to the programs' events, and from close events to
//! the accounts they closed (an account closed to the system program no longer matches an
//! owner filter, so its closing event is how the indexer learns of it).

use narrative_sdk::decode::decode_event;
use narrative_store::{Closure, EventRecord};

use crate::source::TransactionUpdate;

/// The events a transaction emitted, in order.
pub fn events_of(tx: &TransactionUpdate) -> Vec<EventRecord> {
    tx.inner
        .iter()
        .filter_map(|ix| {
            decode_event(&ix.program, &ix.data).map(|event| EventRecord {
                event,
                raw: ix.data.clone(),
                slot: tx.slot,
                signature: tx.signature.clone(),
                tx_index: tx.tx_index,
                instruction_index: ix.instruction_index,
                inner_index: ix.inner_index,
            })
        })
        .collect()
}

/// Accounts the events closed, as of their transaction. A closing transaction's account
/// updates share its slot, so its position in the block orders the closure after them.
pub fn closures_of(events: &[EventRecord]) -> Vec<Closure> {
    events
        .iter()
        .filter_map(|e| {
            e.event.keys().closes.map(|address| Closure {
                address,
                slot: e.slot,
                write_version: u64::MAX >> 1,
            })
        })
        .collect()
}
