//! Unsigned transactions for wallets to sign: the wallet pays the fee, the blockhash is given
//! by the caller (the api's blockhash cache), and the wire bytes are base64 as the api returns
//! them in `transaction`.

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::instruction::Instruction;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use solana_hash::Hash;
use solana_message::{v0, Message, VersionedMessage};
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction::Transaction;

use crate::SdkError;

/// A transaction with `fee_payer` as the first signer and empty signature slots.
pub fn unsigned_transaction(
    instructions: &[Instruction],
    fee_payer: &Pubkey,
    blockhash: Hash,
) -> Transaction {
    let message = Message::new_with_blockhash(instructions, Some(fee_payer), &blockhash);
    Transaction::new_unsigned(message)
}

/// Wire bytes (bincode, as `sendTransaction` takes them) in base64.
pub fn to_base64(tx: &Transaction) -> String {
    // Serialising a well-formed in-memory transaction cannot fail.
    STANDARD.encode(bincode::serialize(tx).expect("transaction serialises"))
}

pub fn from_base64(encoded: &str) -> Result<Transaction, SdkError> {
    let bytes = STANDARD
        .decode(encoded)
        .map_err(|e| SdkError::InvalidBase64(e.to_string()))?;
    bincode::deserialize(&bytes).map_err(|e| SdkError::InvalidTransaction(e.to_string()))
}

/// A versioned (v0) transaction with `fee_payer` as the first signer and empty signature slots,
/// without address lookup tables (every account stays in the message).
pub fn unsigned_v0_transaction(
    instructions: &[Instruction],
    fee_payer: &Pubkey,
    blockhash: Hash,
) -> Result<VersionedTransaction, SdkError> {
    let message = v0::Message::try_compile(fee_payer, instructions, &[], blockhash)
        .map_err(|e| SdkError::InvalidTransaction(e.to_string()))?;
    let signers = usize::from(message.header.num_required_signatures);
    Ok(VersionedTransaction {
        signatures: vec![Default::default(); signers],
        message: VersionedMessage::V0(message),
    })
}

/// A versioned transaction's wire bytes in base64.
pub fn versioned_to_base64(tx: &VersionedTransaction) -> String {
    STANDARD.encode(bincode::serialize(tx).expect("transaction serialises"))
}

/// [`unsigned_transaction`] serialised for the wire, in one step.
pub fn unsigned_transaction_base64(
    instructions: &[Instruction],
    fee_payer: &Pubkey,
    blockhash: Hash,
) -> String {
    to_base64(&unsigned_transaction(instructions, fee_payer, blockhash))
}

/// Size in bytes of the transaction on the wire (the 1232-byte packet limit applies).
pub fn wire_size(tx: &Transaction) -> usize {
    bincode::serialized_size(tx).expect("transaction sizes") as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use binary_vault::state::Side;

    #[test]
    fn unsigned_back_transaction_round_trips_with_the_wallet_as_fee_payer() {
        let wallet = Pubkey::new_unique();
        let market_id = [5u8; 32];
        let ix = crate::binary::back_market(wallet, &market_id, Side::Yes, 10_000_000);
        let blockhash = Hash::new_from_array([7; 32]);
        let encoded = unsigned_transaction_base64(std::slice::from_ref(&ix), &wallet, blockhash);
        let tx = from_base64(&encoded).unwrap();
        assert_eq!(tx.message.account_keys[0], wallet);
        assert_eq!(tx.message.header.num_required_signatures, 1);
        assert_eq!(tx.message.recent_blockhash, blockhash);
        assert_eq!(tx.signatures.len(), 1);
        assert_eq!(tx.signatures[0], Default::default());
        assert_eq!(tx.message.instructions[0].data, ix.data);
    }

    #[test]
    fn a_v0_transaction_carries_the_version_and_every_account_in_the_message() {
        let wallet = Pubkey::new_unique();
        let ix = crate::binary::back_market(wallet, &[5u8; 32], Side::Yes, 10_000_000);
        let blockhash = Hash::new_from_array([7; 32]);
        let tx = unsigned_v0_transaction(std::slice::from_ref(&ix), &wallet, blockhash).unwrap();
        let bytes = STANDARD.decode(versioned_to_base64(&tx)).unwrap();
        // One empty signature slot, then the message with its version prefix (0x80 | 0).
        assert_eq!(bytes[0], 1);
        assert_eq!(bytes[1 + 64], 0x80);
        let back: VersionedTransaction = bincode::deserialize(&bytes).unwrap();
        let VersionedMessage::V0(message) = &back.message else {
            panic!("a legacy message");
        };
        assert!(message.address_table_lookups.is_empty());
        assert_eq!(message.account_keys[0], wallet);
        assert_eq!(message.recent_blockhash, blockhash);
        assert_eq!(message.instructions[0].data, ix.data);
        for meta in &ix.accounts {
            assert!(message.account_keys.contains(&meta.pubkey));
        }
    }

    #[test]
    fn garbage_is_rejected() {
        assert!(matches!(
            from_base64("%%%"),
            Err(SdkError::InvalidBase64(_))
        ));
        assert!(matches!(
            from_base64("AAAA"),
            Err(SdkError::InvalidTransaction(_))
        ));
    }
}
