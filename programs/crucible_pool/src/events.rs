//! Events, emitted by self-CPI (`emit_cpi!`) so indexers see them as inner instructions even when
//! logs are truncated.

use anchor_lang::prelude::*;

use crate::state::CrucibleChange;

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrucibleInitialized {
    pub admin: Pubkey,
    pub keeper: Pubkey,
    pub epoch_duration_secs: i64,
    pub claim_window_secs: i64,
    /// The zero key when none was named.
    pub guardian: Pubkey,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrucibleSettingsUpdated {
    pub keeper: Pubkey,
    pub epoch_duration_secs: i64,
    pub claim_window_secs: i64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceAuthorizationChanged {
    pub source: Pubkey,
    pub allowed: bool,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetPoolInitialized {
    /// The zero key for SOL.
    pub mint: Pubkey,
    pub started_at: i64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrucibleDeposited {
    pub mint: Pubkey,
    pub epoch: u64,
    pub source: Pubkey,
    pub amount: u64,
    pub epoch_deposited: u64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpochClosed {
    pub mint: Pubkey,
    pub epoch: u64,
    pub conviction_pool: u64,
    pub creator_pool: u64,
    pub carried_to_next: u64,
    pub merkle_root: [u8; 32],
    pub claim_deadline: i64,
    /// Claims open here, after the root's challenge delay.
    pub claimable_at: i64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpochClaimed {
    pub mint: Pubkey,
    pub epoch: u64,
    pub wallet: Pubkey,
    pub amount: u64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpochRolledOver {
    pub mint: Pubkey,
    pub epoch: u64,
    pub into_epoch: u64,
    pub amount: u64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimReceiptClosed {
    pub mint: Pubkey,
    pub epoch: u64,
    pub wallet: Pubkey,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrucibleAdminProposed {
    pub new_admin: Option<Pubkey>,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrucibleAdminRotated {
    pub previous: Pubkey,
    pub admin: Pubkey,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpochRootVetoed {
    pub mint: Pubkey,
    pub epoch: u64,
    pub into_epoch: u64,
    /// The vetoed root's distribution, carried into `into_epoch`.
    pub amount: u64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrucibleChangeProposed {
    pub change: CrucibleChange,
    pub applies_at: i64,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrucibleChangeCancelled {
    pub change: CrucibleChange,
}

#[event]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardianChanged {
    /// The zero key when the guardian was removed.
    pub guardian: Pubkey,
}
