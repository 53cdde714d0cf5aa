//! The service's own transactions (settlement's votes and finalisations, the Echo Pool keeper's
//! epoch closes and rollovers): built with a service key as fee payer and signer, sent, and
//! waited for at `confirmed`.

use std::time::Duration;

use anyhow::bail;
use narrative_sdk::Instruction;
use solana_keypair::Keypair;
use solana_signature::Signature;
use solana_signer::Signer;
use solana_transaction::versioned::VersionedTransaction;
use solana_transaction::Transaction;

use crate::chain::ledger::Ledger;

/// How often, and how many times, a sent transaction's status is looked up.
const POLL: Duration = Duration::from_millis(500);
const POLLS: u32 = 60;

/// Sends `instructions` paid and signed by `signer`, and waits for `confirmed`; its signature.
/// A transaction that lands with an error is an error.
pub async fn send_and_confirm(
    ledger: &dyn Ledger,
    signer: &Keypair,
    instructions: &[Instruction],
) -> anyhow::Result<Signature> {
    let blockhash = ledger.latest_blockhash().await?;
    let tx = Transaction::new_signed_with_payer(
        instructions,
        Some(&signer.pubkey()),
        &[signer],
        blockhash,
    );
    let signature = ledger.send(&VersionedTransaction::from(tx)).await?;
    for _ in 0..POLLS {
        if let Some(status) = ledger.signature_status(&signature).await? {
            if let Some(error) = status.error {
                bail!("{signature} failed: {error}");
            }
            return Ok(signature);
        }
        tokio::time::sleep(POLL).await;
    }
    bail!("{signature} not confirmed after {:?}", POLL * POLLS)
}
