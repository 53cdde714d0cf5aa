use anchor_lang::prelude::*;

vault_common::layout_version!(
    /// The layout version of `AssetPool` accounts (see `vault_common::layout`).
    AssetPoolVersion = 1 for "AssetPool"
);

/// Accounting of one asset (`crucible_asset` + mint; the zero key is SOL).
#[account]
#[derive(InitSpace, Debug)]
pub struct AssetPool {
    /// First: an account in another layout is refused before any field is misread.
    pub version: AssetPoolVersion,
    /// The zero key for SOL.
    pub mint: Pubkey,
    /// Number of the epoch now receiving deposits.
    pub current_epoch: u64,
    /// Lifetime deposits from authorised sources.
    pub total_deposited: u64,
    /// Lifetime claims paid.
    pub total_claimed: u64,
    /// Bump of the vault (`crucible_vault` for SOL, `crucible_tvault` + mint for tokens).
    pub vault_bump: u8,
    pub bump: u8,
}

impl AssetPool {
    pub fn is_sol(&self) -> bool {
        self.mint == Pubkey::default()
    }
}
