//! Assertions on why a transaction failed: the program's custom error code (Anchor's own
//! constraint errors and each program's `#[error_code]` enum both convert to `u32`).

use solana_instruction_error::InstructionError;
use solana_program_test::BanksClientError;
use solana_transaction::TransactionError;

/// The custom error code of a failed instruction, if that is how it failed.
pub fn custom_code(err: &BanksClientError) -> Option<u32> {
    let tx_err = match err {
        BanksClientError::TransactionError(e) => e,
        BanksClientError::SimulationError { err, .. } => err,
        _ => return None,
    };
    match tx_err {
        TransactionError::InstructionError(_, InstructionError::Custom(code)) => Some(*code),
        _ => None,
    }
}

/// Fails unless `result` is an error with custom code `expected`.
#[track_caller]
pub fn assert_custom_error<T: std::fmt::Debug>(
    result: Result<T, BanksClientError>,
    expected: impl Into<u32>,
) {
    let expected = expected.into();
    match result {
        Ok(v) => panic!("expected custom error {expected}, but the transaction succeeded: {v:?}"),
        Err(e) => assert_eq!(
            custom_code(&e),
            Some(expected),
            "expected custom error {expected}, got {e:?}"
        ),
    }
}

/// Fails unless `result` failed with exactly `expected` (for runtime errors such as a missing
/// signature or an account that already exists).
#[track_caller]
pub fn assert_instruction_error<T: std::fmt::Debug>(
    result: Result<T, BanksClientError>,
    expected: InstructionError,
) {
    match result {
        Ok(v) => panic!("expected {expected:?}, but the transaction succeeded: {v:?}"),
        Err(BanksClientError::TransactionError(TransactionError::InstructionError(_, e))) => {
            assert_eq!(e, expected)
        }
        Err(e) => panic!("expected {expected:?}, got {e:?}"),
    }
}
