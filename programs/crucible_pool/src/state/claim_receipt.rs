use anchor_lang::prelude::*;

vault_common::layout_version!(
    /// The layout version of `ClaimReceipt` accounts (see `vault_common::layout`).
    ClaimReceiptVersion = 1 for "ClaimReceipt"
);

/// Proof that `wallet` claimed from `epoch` (`crucible_claim` + epoch + wallet). Its creation is
/// what makes a second claim fail.
#[account]
#[derive(InitSpace, Debug)]
pub struct ClaimReceipt {
    /// First: an account in another layout is refused before any field is misread.
    pub version: ClaimReceiptVersion,
    pub epoch: Pubkey,
    pub wallet: Pubkey,
    pub amount: u64,
    pub claimed_at: i64,
    pub bump: u8,
}
