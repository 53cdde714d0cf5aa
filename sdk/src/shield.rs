//! Instruction builders for shield_vault, one per instruction.

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::instruction::Instruction;
use anchor_lang::{system_program, InstructionData, ToAccountMetas};
use shield_vault::accounts as acc;
use shield_vault::instruction as ix;
use shield_vault::instructions::{InitializeProgramArgs, OpenCoverageArgs};
use shield_vault::state::{AdminChange, PayoutRecipient, ShieldSide, ShieldVerdict};

use crate::pda;

pub use shield_vault::ID as PROGRAM_ID;

fn build(accounts: impl ToAccountMetas, data: impl InstructionData) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: accounts.to_account_metas(None),
        data: data.data(),
    }
}

fn event_accounts() -> (Pubkey, Pubkey) {
    (pda::shield::event_authority(), PROGRAM_ID)
}

pub fn initialize_program(admin: Pubkey, args: InitializeProgramArgs) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::InitializeProgram {
            admin,
            program_state: pda::shield::program_state(),
            program_data: pda::program_data(&PROGRAM_ID),
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::InitializeProgram { args },
    )
}

fn admin_only(admin: Pubkey) -> acc::AdminOnly {
    let (event_authority, program) = event_accounts();
    acc::AdminOnly {
        admin,
        program_state: pda::shield::program_state(),
        event_authority,
        program,
    }
}

pub fn set_max_self_hedge_bps(admin: Pubkey, bps: u16) -> Instruction {
    build(admin_only(admin), ix::SetMaxSelfHedgeBps { bps })
}

pub fn propose_admin_change(admin: Pubkey, change: AdminChange) -> Instruction {
    build(admin_only(admin), ix::ProposeAdminChange { change })
}

pub fn apply_admin_change(admin: Pubkey) -> Instruction {
    build(admin_only(admin), ix::ApplyAdminChange {})
}

pub fn cancel_admin_change(admin: Pubkey) -> Instruction {
    build(admin_only(admin), ix::CancelAdminChange {})
}

/// The admin names its successor (`None` withdraws the proposal).
pub fn propose_admin(admin: Pubkey, new_admin: Option<Pubkey>) -> Instruction {
    build(admin_only(admin), ix::ProposeAdmin { new_admin })
}

/// Signed by the proposed successor.
pub fn accept_admin(new_admin: Pubkey) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::AcceptShieldAdmin {
            new_admin,
            program_state: pda::shield::program_state(),
            event_authority,
            program,
        },
        ix::AcceptAdmin {},
    )
}

/// `authority` is an oracle or the admin (only the admin may resume).
pub fn pause_program(authority: Pubkey, paused: bool) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::PauseProgram {
            authority,
            program_state: pda::shield::program_state(),
            event_authority,
            program,
        },
        ix::PauseProgram { paused },
    )
}

pub fn open_coverage(
    admin: Pubkey,
    fee_payer: Pubkey,
    treasury: Pubkey,
    args: OpenCoverageArgs,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    let id = args.protocol_id;
    build(
        acc::OpenCoverage {
            admin,
            fee_payer,
            program_state: pda::shield::program_state(),
            coverage: pda::shield::coverage(&id),
            safe_vault: pda::shield::vault(&id, ShieldSide::Safe),
            exploit_vault: pda::shield::vault(&id, ShieldSide::Exploit),
            treasury,
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::OpenCoverage { args },
    )
}

pub fn back_shield(
    backer: Pubkey,
    protocol_id: &[u8; 32],
    side: ShieldSide,
    amount: u64,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::BackShield {
            backer,
            program_state: pda::shield::program_state(),
            coverage: pda::shield::coverage(protocol_id),
            vault: pda::shield::vault(protocol_id, side),
            backing: pda::shield::backing(protocol_id, &backer, side),
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::BackShield { side, amount },
    )
}

pub fn harvest_yield(
    harvest_authority: Pubkey,
    protocol_id: &[u8; 32],
    side: ShieldSide,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::HarvestYield {
            harvest_authority,
            program_state: pda::shield::program_state(),
            coverage: pda::shield::coverage(protocol_id),
            vault: pda::shield::vault(protocol_id, side),
            event_authority,
            program,
        },
        ix::HarvestYield { side },
    )
}

pub fn submit_oracle_resolution(
    oracle: Pubkey,
    protocol_id: &[u8; 32],
    vote: ShieldVerdict,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::SubmitOracleResolution {
            oracle,
            program_state: pda::shield::program_state(),
            coverage: pda::shield::coverage(protocol_id),
            vote: pda::shield::oracle_vote(protocol_id, &oracle),
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::SubmitOracleResolution { vote },
    )
}

/// Finalises a coverage whose outcome's timelock has passed; the payouts to wallets wait for
/// [`forward_payout`].
pub fn finalize_resolution(protocol_id: &[u8; 32]) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::FinalizeResolution {
            program_state: pda::shield::program_state(),
            coverage: pda::shield::coverage(protocol_id),
            safe_vault: pda::shield::vault(protocol_id, ShieldSide::Safe),
            exploit_vault: pda::shield::vault(protocol_id, ShieldSide::Exploit),
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::FinalizeResolution {},
    )
}

/// Pays a resolved coverage's `recipient` share from the `loser` side's vault to `wallet` (the
/// program's treasury, or the partnership's protocol wallet).
pub fn forward_payout(
    protocol_id: &[u8; 32],
    loser: ShieldSide,
    recipient: PayoutRecipient,
    wallet: Pubkey,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::ForwardPayout {
            program_state: pda::shield::program_state(),
            coverage: pda::shield::coverage(protocol_id),
            loser_vault: pda::shield::vault(protocol_id, loser),
            recipient_wallet: wallet,
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::ForwardPayout { recipient },
    )
}

/// Sends a resolved coverage's seam share from the `loser` side's vault into crucible_pool's
/// current SOL epoch `crucible_epoch`.
pub fn forward_seam_share(
    protocol_id: &[u8; 32],
    loser: ShieldSide,
    crucible_epoch: u64,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::ForwardSeamShare {
            program_state: pda::shield::program_state(),
            coverage: pda::shield::coverage(protocol_id),
            loser_vault: pda::shield::vault(protocol_id, loser),
            cpi_authority: pda::shield::cpi_authority(),
            crucible_state: pda::crucible::state(),
            crucible_asset_pool: pda::crucible::sol_asset_pool(),
            crucible_epoch: pda::crucible::epoch(&crucible_pool::SOL_MINT, crucible_epoch),
            crucible_vault: pda::crucible::sol_vault(),
            crucible_event_authority: pda::crucible::event_authority(),
            crucible_program: crucible_pool::ID,
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::ForwardSeamShare {},
    )
}

/// Which of the four claims to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    SafeWinner,
    ExploitWinner,
    LoserYield,
    Refund,
}

pub fn claim(kind: Claim, backer: Pubkey, protocol_id: &[u8; 32], side: ShieldSide) -> Instruction {
    let (event_authority, program) = event_accounts();
    let accounts = acc::ShieldClaim {
        backer,
        coverage: pda::shield::coverage(protocol_id),
        backing: pda::shield::backing(protocol_id, &backer, side),
        vault: pda::shield::vault(protocol_id, side),
        system_program: system_program::ID,
        event_authority,
        program,
    };
    match kind {
        Claim::SafeWinner => build(accounts, ix::ClaimSafeWinner {}),
        Claim::ExploitWinner => build(accounts, ix::ClaimExploitWinner {}),
        Claim::LoserYield => build(accounts, ix::ClaimLoserYield {}),
        Claim::Refund => build(accounts, ix::ClaimRefund {}),
    }
}

/// The admin, 48 h after the period ended with no outcome proposed.
pub fn refund_all(admin: Pubkey, protocol_id: &[u8; 32]) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::RefundAll {
            admin,
            program_state: pda::shield::program_state(),
            coverage: pda::shield::coverage(protocol_id),
            event_authority,
            program,
        },
        ix::RefundAll {},
    )
}

/// `trigger_timeout_refund`: anyone, once the resolution delay has passed.
pub fn trigger_timeout_refund(protocol_id: &[u8; 32]) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::TriggerShieldTimeoutRefund {
            coverage: pda::shield::coverage(protocol_id),
            event_authority,
            program,
        },
        ix::TriggerTimeoutRefund {},
    )
}

pub fn close_shield_vote(oracle: Pubkey, protocol_id: &[u8; 32]) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::CloseShieldVote {
            oracle,
            coverage: pda::shield::coverage(protocol_id),
            vote: pda::shield::oracle_vote(protocol_id, &oracle),
            event_authority,
            program,
        },
        ix::CloseShieldVote {},
    )
}
