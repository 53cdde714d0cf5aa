//! The SPL Memo program (v2 and later, the one program-test bundles as `spl_memo-3.0.0`): its
//! instruction's data is UTF-8 text, and every account it is given must have signed. A memo
//! with no accounts only writes its text to the transaction's log.
//!
//! Each transaction the api prepares ends with a memo of its prepared id, so that no two
//! prepared transactions are the same message: a wallet's signature then belongs to exactly
//! the prepare it was given, even when someone else asked for the same move with the same
//! blockhash.

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::instruction::Instruction;

/// The Memo program's id on every cluster.
pub const MEMO_PROGRAM: Pubkey =
    Pubkey::from_str_const("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");

/// A memo of `text` that no account signs.
pub fn memo(text: &str) -> Instruction {
    Instruction {
        program_id: MEMO_PROGRAM,
        accounts: vec![],
        data: text.as_bytes().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memo_is_its_text_and_no_accounts() {
        let ix = memo("0190c3e2-7d1a-7b4e-9f00-1234567890ab");
        assert_eq!(
            MEMO_PROGRAM.to_string(),
            "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"
        );
        assert_eq!(ix.data, b"0190c3e2-7d1a-7b4e-9f00-1234567890ab");
        assert!(ix.accounts.is_empty());
    }
}
