//! A batch decoded into rows, ready to write (the CPU half of a write), below both writers:
//! the generic one (`writer`) and Postgres's bulk path (`pg_bulk`) take it without knowing of
//! each other.

use std::collections::HashMap;

use crate::batch::{Batch, Closure, EventRecord};
use crate::entities::program_events;
use crate::error::StoreError;
use crate::rows::AccountRow;

/// What one batch wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Account rows sent to the upserts after keeping the newest per address.
    pub accounts: usize,
    pub closures: usize,
    pub events: usize,
}

/// A batch decoded into rows, ready to write: the CPU half of [`Store::write_batch`], so a
/// pipeline can decode the next batch while this one commits.
#[derive(Debug, Clone, Default)]
pub struct PreparedBatch {
    /// One row per address, the newest `(slot, write_version)` of the batch.
    pub(crate) rows: Vec<AccountRow>,
    /// One closure per address, the newest of the batch.
    pub(crate) closures: Vec<Closure>,
    pub(crate) events: Vec<program_events::Model>,
    pub(crate) checkpoint: Option<u64>,
}

impl PreparedBatch {
    /// Decodes `batch`.
    pub fn new(batch: &Batch) -> Result<PreparedBatch, StoreError> {
        Ok(PreparedBatch {
            rows: newest_rows(batch)?,
            closures: newest_closures(&batch.closures),
            events: batch
                .events
                .iter()
                .map(event_model)
                .collect::<Result<Vec<_>, _>>()?,
            checkpoint: batch.checkpoint,
        })
    }

    /// The slot the checkpoint moves to when this batch commits.
    pub fn checkpoint(&self) -> Option<u64> {
        self.checkpoint
    }

    pub fn stats(&self) -> WriteStats {
        WriteStats {
            accounts: self.rows.len(),
            closures: self.closures.len(),
            events: self.events.len(),
        }
    }
}

/// Decoded rows, one per address: the newest `(slot, write_version)` wins, as Postgres refuses
/// to update one row twice in a statement.
fn newest_rows(batch: &Batch) -> Result<Vec<AccountRow>, StoreError> {
    let mut newest: HashMap<String, AccountRow> = HashMap::with_capacity(batch.accounts.len());
    for update in &batch.accounts {
        let row = match AccountRow::from_update(update) {
            Ok(row) => row,
            // A value the schema cannot hold would fail this batch on every retry and stall
            // the indexer: keep the account raw instead, losing nothing.
            Err(StoreError::OutOfRange { field, value }) => {
                tracing::warn!(address = %update.address, field, value, "stored raw: value beyond BIGINT");
                AccountRow::raw(update)?
            }
            Err(e) => return Err(e),
        };
        match newest.get(row.address()) {
            Some(kept) if kept.version() >= row.version() => {}
            _ => {
                newest.insert(row.address().to_owned(), row);
            }
        }
    }
    Ok(newest.into_values().collect())
}

/// The newest closure per address, in a stable order.
fn newest_closures(closures: &[Closure]) -> Vec<Closure> {
    let mut newest: std::collections::BTreeMap<[u8; 32], Closure> = Default::default();
    for closure in closures {
        let key = closure.address.to_bytes();
        match newest.get(&key) {
            Some(kept)
                if (kept.slot, kept.write_version) >= (closure.slot, closure.write_version) => {}
            _ => {
                newest.insert(key, *closure);
            }
        }
    }
    newest.into_values().collect()
}

fn event_model(e: &EventRecord) -> Result<program_events::Model, StoreError> {
    let keys = e.event.keys();
    let n = |field: &'static str, v: u64| {
        i64::try_from(v).map_err(|_| StoreError::OutOfRange {
            field,
            value: v as u128,
        })
    };
    Ok(program_events::Model {
        // Assigned by the database.
        id: 0,
        program: e.event.program().to_owned(),
        name: e.event.name().to_owned(),
        slot: n("slot", e.slot)?,
        signature: e.signature.clone(),
        tx_index: n("tx_index", e.tx_index)?,
        instruction_index: e.instruction_index as i32,
        inner_index: e.inner_index as i32,
        subject: keys.subject,
        actor: keys.actor.map(|a| a.to_string()),
        data: e.raw.clone(),
    })
}
