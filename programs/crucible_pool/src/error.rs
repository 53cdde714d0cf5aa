//! Errors of the crucible pool.

use anchor_lang::prelude::*;

#[error_code]
pub enum CrucibleError {
    #[msg("Signer is not the program's upgrade authority")]
    NotUpgradeAuthority,
    #[msg("Signer is not the crucible admin")]
    NotAdmin,
    #[msg("Signer is not the crucible keeper")]
    NotKeeper,
    #[msg("Depositor is not an authorised source")]
    UnauthorizedSource,
    #[msg("The authorised-source list is full")]
    TooManySources,
    #[msg("Source key is invalid")]
    InvalidSource,
    #[msg("Amount must be greater than zero")]
    ZeroAmount,
    #[msg("Duration is outside the allowed bounds")]
    InvalidDuration,
    #[msg("Epoch is not open")]
    EpochNotOpen,
    #[msg("Epoch is not closed")]
    EpochNotClosed,
    #[msg("Epoch has not lasted its minimum duration yet")]
    EpochTooYoung,
    #[msg("Epoch passed is not the asset's current epoch")]
    NotCurrentEpoch,
    #[msg("Distribution exceeds what the epoch holds")]
    DistributionExceedsEpoch,
    #[msg("Claim window of this epoch has ended")]
    ClaimWindowClosed,
    #[msg("Claim window of this epoch is still open")]
    ClaimWindowOpen,
    #[msg("Merkle proof does not match the epoch root")]
    InvalidProof,
    #[msg("Merkle proof is too long")]
    ProofTooLong,
    #[msg("Claims would exceed the epoch's distribution")]
    ClaimExceedsDistribution,
    #[msg("Epoch has not rolled over yet")]
    EpochNotRolledOver,
    #[msg("Asset pool does not match the mint")]
    WrongMint,
    #[msg("Signer is not the proposed admin")]
    NotPendingAdmin,
    #[msg("The epoch's root is in its challenge delay")]
    RootInChallenge,
    #[msg("The epoch's challenge delay is over")]
    ChallengeDelayOver,
    #[msg("Key must not be the zero key")]
    ZeroKey,
    #[msg("Mints with a freeze authority are refused: it could freeze the pool's vault")]
    MintHasFreezeAuthority,
    #[msg("Signer is neither the admin nor the guardian")]
    NotAdminOrGuardian,
    #[msg("The guardian must be a key other than the admin")]
    GuardianIsAdmin,
    #[msg("A settings change is already pending")]
    ChangePending,
    #[msg("No settings change is pending")]
    NoPendingChange,
    #[msg("The admin timelock has not elapsed")]
    AdminTimelockNotElapsed,
    #[msg("The pending change passed its apply window; propose it again")]
    ChangeExpired,
    #[msg("The keeper must be a key other than the admin and the guardian, which veto its roots")]
    KeeperMayVeto,
}
