//! The ledger as the api sees it: a recent blockhash for prepared transactions, what happened
//! to a signature, account reads and sending. The real one is JSON-RPC ([`rpc::RpcLedger`]);
//! the tests drive the same handlers against solana-program-test through this trait.

use anchor_lang::solana_program::system_program;
use narrative_sdk::Pubkey;
use solana_hash::Hash;
use solana_signature::Signature;
use solana_transaction::versioned::VersionedTransaction;

mod accounts_call;
pub mod coalesce;
pub mod rpc;

pub use rpc::RpcLedger;

#[derive(Debug, Clone, thiserror::Error)]
pub enum LedgerError {
    /// The node could not be reached or answered with an error.
    #[error("ledger unavailable: {0}")]
    Unavailable(String),
    /// The node answered something this service cannot read.
    #[error("unexpected ledger answer: {0}")]
    Malformed(String),
}

/// 503 `ledger_unavailable`: the node is down or answered what this service cannot read.
impl From<LedgerError> for crate::error::ApiError {
    fn from(e: LedgerError) -> Self {
        tracing::warn!(error = %e, "ledger call failed");
        crate::error::ApiError::unavailable(
            "ledger_unavailable",
            "the ledger could not be reached; retry shortly",
        )
    }
}

/// An instruction as it executed, with its accounts resolved to addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LandedInstruction {
    pub program: Pubkey,
    pub accounts: Vec<Pubkey>,
    pub data: Vec<u8>,
}

/// A transaction the ledger holds at `confirmed` or better.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LandedTransaction {
    pub slot: u64,
    /// `None` when it succeeded; the error's text otherwise (it still landed and paid its fee).
    pub error: Option<String>,
    /// The fee payer (the first signer).
    pub fee_payer: Pubkey,
    /// The blockhash its message carries.
    pub recent_blockhash: Hash,
    /// When its block was produced (unix seconds), as the node estimates it; `None` when the
    /// node does not say.
    pub block_time: Option<i64>,
    pub instructions: Vec<LandedInstruction>,
}

impl LandedTransaction {
    /// Reads `tx`'s top-level instructions against its static account keys. Prepared
    /// transactions are legacy messages; an address-table lookup would name keys past the static
    /// ones, which this refuses rather than guesses.
    pub fn new(
        slot: u64,
        error: Option<String>,
        tx: &VersionedTransaction,
    ) -> Result<LandedTransaction, LedgerError> {
        let keys = tx.message.static_account_keys();
        let key = |index: u8| {
            keys.get(index as usize)
                .map(|k| Pubkey::new_from_array(k.to_bytes()))
                .ok_or_else(|| {
                    LedgerError::Malformed(format!("account index {index} beyond the static keys"))
                })
        };
        let fee_payer = key(0)?;
        let instructions = tx
            .message
            .instructions()
            .iter()
            .map(|ix| {
                Ok(LandedInstruction {
                    program: key(ix.program_id_index)?,
                    accounts: ix
                        .accounts
                        .iter()
                        .map(|a| key(*a))
                        .collect::<Result<_, _>>()?,
                    data: ix.data.clone(),
                })
            })
            .collect::<Result<_, LedgerError>>()?;
        Ok(LandedTransaction {
            slot,
            error,
            fee_payer,
            recent_blockhash: *tx.message.recent_blockhash(),
            block_time: None,
            instructions,
        })
    }

    /// The text of the first memo no account signs: the prepared id the service put in every
    /// transaction it prepares ([`narrative_sdk::memo`]).
    pub fn memo(&self) -> Option<&str> {
        self.instructions
            .iter()
            .find(|ix| ix.program == narrative_sdk::memo::MEMO_PROGRAM && ix.accounts.is_empty())
            .and_then(|ix| std::str::from_utf8(&ix.data).ok())
    }

    /// This transaction, its block produced at `block_time` (unix seconds).
    pub fn produced_at(self, block_time: Option<i64>) -> LandedTransaction {
        LandedTransaction { block_time, ..self }
    }

    /// The lamports this transaction moves from `from` to `to` by system transfers.
    pub fn transferred(&self, from: &Pubkey, to: &Pubkey) -> u64 {
        self.instructions
            .iter()
            .filter(|ix| ix.program == system_program::ID && ix.accounts.len() >= 2)
            .filter(|ix| &ix.accounts[0] == from && &ix.accounts[1] == to)
            .filter_map(|ix| system_transfer_lamports(&ix.data))
            .fold(0u64, |sum, lamports| sum.saturating_add(lamports))
    }

    /// Every system transfer to `to`: (source, lamports).
    pub fn transfers_to(&self, to: &Pubkey) -> Vec<(Pubkey, u64)> {
        self.instructions
            .iter()
            .filter(|ix| ix.program == system_program::ID && ix.accounts.len() >= 2)
            .filter(|ix| &ix.accounts[1] == to)
            .filter_map(|ix| system_transfer_lamports(&ix.data).map(|l| (ix.accounts[0], l)))
            .collect()
    }
}

/// The system program's `Transfer { lamports }`: tag 2 (u32 LE) then the amount (u64 LE).
fn system_transfer_lamports(data: &[u8]) -> Option<u64> {
    if data.len() != 12 || data[..4] != 2u32.to_le_bytes() {
        return None;
    }
    Some(u64::from_le_bytes(data[4..12].try_into().ok()?))
}

/// A signature's status at `confirmed` or better.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureStatus {
    pub slot: u64,
    pub error: Option<String>,
}

/// The clock sysvar's address: the ledger's time decides when on-chain steps are due.
pub const CLOCK_SYSVAR: Pubkey =
    Pubkey::from_str_const("SysvarC1ock11111111111111111111111111111111");

/// The ledger's clock from the clock sysvar's account as read.
pub fn decode_clock(
    account: &Option<LedgerAccount>,
) -> anyhow::Result<anchor_lang::prelude::Clock> {
    use anyhow::Context;
    let account = account
        .as_ref()
        .context("the clock sysvar is not on the ledger")?;
    bincode::deserialize(&account.data).context("decoding the clock sysvar")
}

/// An account as read, at the slot of the read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerAccount {
    pub owner: Pubkey,
    pub lamports: u64,
    pub data: Vec<u8>,
}

/// What one transaction did to a token account's balance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalanceChange {
    pub signature: Signature,
    /// When its block was produced (unix seconds), where the node knows.
    pub block_time: Option<i64>,
    /// The account's balance before and after, in base units (0 where it did not exist).
    pub before: u64,
    pub after: u64,
}

/// A token account whose history [`Ledger::token_history`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenAccountRef {
    pub address: Pubkey,
    pub mint: Pubkey,
}

#[async_trait::async_trait]
pub trait Ledger: Send + Sync {
    /// A blockhash recent enough for a wallet to sign with (implementations may cache it for a
    /// few seconds: it stays valid for about a minute).
    async fn latest_blockhash(&self) -> Result<Hash, LedgerError>;

    /// Where `signature` stands at `confirmed`: `None` while unknown, else its slot and, when
    /// it failed, the error. Cheaper than [`Ledger::transaction`], so confirm polls this while
    /// it waits; a node knows only its recent slots' statuses, so a confirm's first look is
    /// [`Ledger::transaction`].
    async fn signature_status(
        &self,
        signature: &Signature,
    ) -> Result<Option<SignatureStatus>, LedgerError>;

    /// The transaction behind `signature` once it is confirmed; `None` while it is unknown.
    async fn transaction(
        &self,
        signature: &Signature,
    ) -> Result<Option<LandedTransaction>, LedgerError>;

    /// The accounts at `addresses` (`None` where none exists) and the slot they were read at.
    async fn accounts(
        &self,
        addresses: &[Pubkey],
    ) -> Result<(u64, Vec<Option<LedgerAccount>>), LedgerError>;

    /// Submits a signed transaction (the service's own, e.g. settlement).
    async fn send(&self, tx: &VersionedTransaction) -> Result<Signature, LedgerError>;

    /// Its lines of the Prometheus text format for `/metrics` (none unless it calls a node).
    fn metrics(&self) -> String {
        String::new()
    }

    /// The balance changes of `account` by successful transactions, newest first, back to and
    /// including the first one before `since` (unix seconds): with the current balance, the
    /// balance at every moment since `since`. The walk also ends at the first change whose
    /// balance before it was under `stop_below` (a hold of that much began there; 0 never
    /// stops it). More than `limit` changes is [`LedgerError::Unavailable`] (the caller's bound
    /// on what one read may cost).
    async fn token_history(
        &self,
        account: &TokenAccountRef,
        since: i64,
        stop_below: u64,
        limit: usize,
    ) -> Result<Vec<BalanceChange>, LedgerError>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use anchor_lang::solana_program::system_instruction;

    fn landed(
        ixs: &[anchor_lang::solana_program::instruction::Instruction],
        payer: &Pubkey,
    ) -> LandedTransaction {
        let tx = narrative_sdk::tx::unsigned_transaction(ixs, payer, Hash::new_from_array([1; 32]));
        LandedTransaction::new(9, None, &VersionedTransaction::from(tx)).unwrap()
    }

    #[test]
    fn system_transfers_are_read_from_the_instructions() {
        let (a, b, c) = (
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
        );
        let tx = landed(
            &[
                system_instruction::transfer(&a, &b, 3_000),
                system_instruction::transfer(&a, &b, 2_000),
                system_instruction::transfer(&c, &b, 7),
                system_instruction::assign(&a, &c),
            ],
            &a,
        );
        assert_eq!(tx.fee_payer, a);
        assert_eq!(tx.slot, 9);
        assert_eq!(tx.transferred(&a, &b), 5_000);
        assert_eq!(tx.transferred(&c, &b), 7);
        assert_eq!(tx.transferred(&b, &a), 0);
        assert_eq!(tx.transfers_to(&b), vec![(a, 3_000), (a, 2_000), (c, 7)]);
        assert_eq!(tx.instructions.len(), 4);
        assert_eq!(tx.instructions[0].accounts, vec![a, b]);
    }

    #[test]
    fn a_transfer_needs_the_exact_layout() {
        assert_eq!(
            system_transfer_lamports(&[2, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0]),
            Some(5)
        );
        assert_eq!(
            system_transfer_lamports(&[3, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0]),
            None
        );
        assert_eq!(system_transfer_lamports(&[2, 0, 0, 0, 5]), None);
    }
}
