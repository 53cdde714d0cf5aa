use anchor_lang::prelude::*;

/// Proof that `wallet` claimed from `epoch` (`crucible_claim` + epoch + wallet). Its creation is
/// what makes a second claim fail.
#[account]
#[derive(InitSpace, Debug)]
pub struct ClaimReceipt {
    pub epoch: Pubkey,
    pub wallet: Pubkey,
    pub amount: u64,
    pub claimed_at: i64,
    pub bump: u8,
}
