//! What the indexer hands the store: one batch, written in one database transaction.

use narrative_sdk::decode::ProgramEvent;
use narrative_sdk::Pubkey;

/// One account's state as of `(slot, write_version)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountUpdate {
    pub address: Pubkey,
    pub owner: Pubkey,
    pub lamports: u64,
    pub data: Vec<u8>,
    pub slot: u64,
    pub write_version: u64,
}

/// An account that no longer exists as of `(slot, write_version)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closure {
    pub address: Pubkey,
    pub slot: u64,
    pub write_version: u64,
}

/// A decoded event at its place in a transaction.
#[derive(Debug, Clone)]
pub struct EventRecord {
    pub event: ProgramEvent,
    /// The inner instruction's data (`EVENT_IX_TAG_LE` + discriminator + body).
    pub raw: Vec<u8>,
    pub slot: u64,
    pub signature: String,
    /// Position of the transaction in its block (0 when the source does not know it).
    pub tx_index: u64,
    pub instruction_index: u32,
    pub inner_index: u32,
}

#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub accounts: Vec<AccountUpdate>,
    pub closures: Vec<Closure>,
    pub events: Vec<EventRecord>,
    /// Advance the checkpoint to this slot (it never moves back).
    pub checkpoint: Option<u64>,
}

impl Batch {
    pub fn len(&self) -> usize {
        self.accounts.len() + self.closures.len() + self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0 && self.checkpoint.is_none()
    }
}
