//! Errors of shield_vault; every account constraint names one of these.

use anchor_lang::prelude::*;

#[error_code]
pub enum ShieldError {
    #[msg("Signer is not the program's upgrade authority")]
    NotUpgradeAuthority,
    #[msg("Signer is not the admin")]
    NotAdmin,
    #[msg("Signer is neither an oracle nor the admin")]
    NotOracleOrAdmin,
    #[msg("Signer is not a listed oracle")]
    NotOracle,
    #[msg("Signer is not the harvest authority")]
    NotHarvestAuthority,
    #[msg("Program is paused")]
    Paused,
    #[msg("Oracle set must have 1 to 5 distinct signers and a threshold within it")]
    InvalidOracleSet,
    #[msg("Self-hedge cap must be at most 5000 bps")]
    SelfHedgeCapTooHigh,
    #[msg("Key must not be the zero key")]
    ZeroKey,
    #[msg("An admin change is already pending")]
    ChangePending,
    #[msg("No admin change is pending")]
    NoPendingChange,
    #[msg("The admin timelock has not elapsed")]
    AdminTimelockNotElapsed,
    #[msg("Coverage period must be 30, 60 or 90 days")]
    InvalidPeriod,
    #[msg("A partnership shield needs a protocol wallet")]
    MissingProtocolWallet,
    #[msg("Coverage is not active")]
    CoverageNotActive,
    #[msg("Coverage period has ended")]
    PeriodEnded,
    #[msg("Coverage period has not ended")]
    PeriodNotEnded,
    #[msg("Backing must be between 0.1 and 100 SOL")]
    BackingOutOfBounds,
    #[msg("Backing would exceed the protocol's self-hedge cap")]
    SelfHedgeCapExceeded,
    #[msg("An outcome has already been proposed")]
    OutcomeAlreadyProposed,
    #[msg("The oracle threshold has not been met")]
    ThresholdNotMet,
    #[msg("The resolution timelock has not elapsed")]
    TimelockNotElapsed,
    #[msg("Coverage is not resolved")]
    NotResolved,
    #[msg("Coverage is not in refund mode")]
    NotRefunding,
    #[msg("Backing is not on the winning side")]
    NotWinner,
    #[msg("Backing is on the winning side")]
    NotLoser,
    #[msg("Backing already claimed")]
    AlreadyClaimed,
    #[msg("Harvest would book a loss")]
    HarvestWouldBookLoss,
    #[msg("Nothing to harvest")]
    NothingToHarvest,
    #[msg("No shares on this side to credit yield to")]
    NoBackers,
    #[msg("Backing would mint no shares")]
    ZeroShares,
    #[msg("Coverage is still active")]
    CoverageStillActive,
    #[msg("Account is not the protocol wallet")]
    WrongProtocolWallet,
    #[msg("Account is not the treasury")]
    WrongTreasury,
    #[msg("Seam pool program must be crucible_pool")]
    WrongSeamPool,
    #[msg("An outcome is proposed: the threshold decided and nobody may refund over it")]
    OutcomeProposed,
    #[msg("The resolution delay has not elapsed")]
    ResolutionDelayNotElapsed,
    #[msg("Signer is not the proposed admin")]
    NotPendingAdmin,
    #[msg("Nothing to forward to the seam pool")]
    NothingToForward,
    #[msg("Account is not the losing side's vault")]
    WrongVault,
    #[msg("The admin may refund only 48 h after the period ends with no outcome proposed")]
    RefundTooEarly,
    #[msg("The pending admin change passed its apply window; propose it again")]
    ChangeExpired,
    #[msg("No treasury or protocol payout waits in the losing vault")]
    NoPayoutWaiting,
}
