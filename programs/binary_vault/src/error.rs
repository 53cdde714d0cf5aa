//! Errors of binary_vault; every account constraint names one of these.

use anchor_lang::prelude::*;

#[error_code]
pub enum BinaryError {
    #[msg("Signer is not the program's upgrade authority")]
    NotUpgradeAuthority,
    #[msg("Signer is not the admin")]
    NotAdmin,
    #[msg("Program is paused")]
    Paused,
    #[msg("Basis points must be at most 10000")]
    InvalidBps,
    #[msg("Duration is outside the allowed bounds")]
    InvalidDuration,
    #[msg("Amount must be greater than zero")]
    ZeroAmount,
    #[msg("Oracle set must have 1 to 5 distinct signers and a threshold within it")]
    InvalidOracleSet,
    #[msg("Deadline must be in the future and within two years")]
    InvalidDeadline,
    #[msg("Only the admin may create markets from this source")]
    SourceNeedsAdmin,
    #[msg("Market asset does not match this instruction")]
    WrongAsset,
    #[msg("Mint does not match the market")]
    WrongMint,
    #[msg("Market is not open for backing")]
    MarketNotOpen,
    #[msg("Classic market is awaiting admin approval")]
    MarketNotApproved,
    #[msg("Market is already approved")]
    AlreadyApproved,
    #[msg("Market deadline has passed")]
    DeadlinePassed,
    #[msg("Amount is below the market minimum")]
    BelowMinimum,
    #[msg("Signer is not a listed oracle")]
    NotOracle,
    #[msg("Voting opens at the market deadline")]
    VoteBeforeDeadline,
    #[msg("Confidence must be between 7000 and 10000 bps")]
    ConfidenceOutOfRange,
    #[msg("An outcome has already been proposed")]
    OutcomeAlreadyProposed,
    #[msg("No outcome has been proposed")]
    NoOutcomeProposed,
    #[msg("The dispute window has closed")]
    DisputeWindowClosed,
    #[msg("A dispute is open")]
    DisputeOpen,
    #[msg("No open dispute")]
    NoOpenDispute,
    #[msg("Account is not the disputer")]
    WrongDisputer,
    #[msg("Account is not the treasury")]
    WrongTreasury,
    #[msg("Payout hold has not elapsed")]
    HoldNotElapsed,
    #[msg("Market is already finalized")]
    AlreadyFinalized,
    #[msg("Resolution delay has not elapsed")]
    ResolutionDelayNotElapsed,
    #[msg("Market is neither resolved nor refunding")]
    NotClaimable,
    #[msg("Backing already claimed")]
    AlreadyClaimed,
    #[msg("Losers of a Classic market receive nothing")]
    ClassicLoserCannotClaim,
    #[msg("Backing does not belong to this market")]
    WrongMarket,
    #[msg("Market is not finalized")]
    MarketNotFinalized,
    #[msg("Yield venue is not wired: deposit_to_yield and withdraw_from_yield are a scaffold")]
    YieldVenueNotConfigured,
    #[msg("This market's outcome can no longer be disputed")]
    DisputeLimitReached,
    #[msg("A dispute lapses through lapse_dispute, not resolve_dispute")]
    LapseIsItsOwnInstruction,
    #[msg("A config change is already pending")]
    ChangePending,
    #[msg("No config change is pending")]
    NoPendingChange,
    #[msg("The admin timelock has not elapsed")]
    AdminTimelockNotElapsed,
    #[msg("Signer is not the proposed admin")]
    NotPendingAdmin,
    #[msg("Key must not be the zero key")]
    ZeroKey,
    #[msg("crucible_pool would not take this market's forfeit (source not authorised or no asset pool)")]
    CrucibleRefusesForfeits,
    #[msg("Nothing to forward to crucible_pool")]
    NothingToForward,
    #[msg("Dispute bond must be between the rent-exempt minimum and 100 SOL")]
    InvalidDisputeBond,
    #[msg("The admin and the market's oracles cannot dispute its outcome")]
    DisputerNotAllowed,
    #[msg("A ruling against the standing outcome must wait 24 h after the dispute opened")]
    RulingTooEarly,
    #[msg("The pending config change passed its apply window; propose it again")]
    ChangeExpired,
    #[msg("Mints with a freeze authority are refused: it could freeze the market's vaults")]
    MintHasFreezeAuthority,
    #[msg("No forfeit dispute bond waits for the treasury")]
    NoForfeitBond,
}
