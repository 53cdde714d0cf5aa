//! Wallet signatures over canonical messages (ed25519, base58 like Solana wallets' `signMessage`).

use ed25519_dalek::{Signature, VerifyingKey};
use narrative_sdk::Pubkey;

/// Whether `signature_b58` is `wallet`'s strict ed25519 signature of `message`.
pub fn verify(wallet: &Pubkey, message: &[u8], signature_b58: &str) -> bool {
    let Ok(bytes) = bs58::decode(signature_b58.trim()).into_vec() else {
        return false;
    };
    let Ok(bytes) = <[u8; 64]>::try_from(bytes.as_slice()) else {
        return false;
    };
    let Ok(key) = VerifyingKey::from_bytes(&wallet.to_bytes()) else {
        return false;
    };
    key.verify_strict(message, &Signature::from_bytes(&bytes))
        .is_ok()
}

/// What a wallet signs to acknowledge the shield terms.
pub fn shield_terms_message(terms_version: &str, wallet: &Pubkey) -> String {
    format!("narrative-market-service:shield-terms:{terms_version}:{wallet}")
}

/// What a creator signs for `POST /v1/markets`: every field that shapes the market, one per line,
/// so no two different requests share a message.
pub fn create_market_message(
    variant: &str,
    question: &str,
    deadline: i64,
    seed_yes_lamports: u64,
    seed_no_lamports: u64,
    fee_tx_signature: &str,
) -> String {
    format!(
        "narrative-market-service:create-market\nvariant:{variant}\ndeadline:{deadline}\n\
         seed_yes_lamports:{seed_yes_lamports}\nseed_no_lamports:{seed_no_lamports}\n\
         fee_tx_signature:{fee_tx_signature}\nquestion:{question}"
    )
}
