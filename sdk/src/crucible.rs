//! Instruction builders for crucible_pool. Deposits are CPI-only in practice (an authorised
//! source is another program's PDA), but their builders exist for completeness and for tests
//! that prove an unauthorised signer is refused.

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::instruction::Instruction;
use anchor_lang::{system_program, InstructionData, ToAccountMetas};
use anchor_spl::token;
use crucible_pool::accounts as acc;
use crucible_pool::instruction as ix;
use crucible_pool::instructions::{CloseEpochArgs, InitializeArgs, UpdateSettingsArgs};
use crucible_pool::SOL_MINT;

use crate::pda;

pub use crucible_pool::ID as PROGRAM_ID;

fn build(accounts: impl ToAccountMetas, data: impl InstructionData) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: accounts.to_account_metas(None),
        data: data.data(),
    }
}

fn event_accounts() -> (Pubkey, Pubkey) {
    (pda::crucible::event_authority(), PROGRAM_ID)
}

pub fn initialize(admin: Pubkey, args: InitializeArgs) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::Initialize {
            admin,
            state: pda::crucible::state(),
            program_data: pda::program_data(&PROGRAM_ID),
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::Initialize { args },
    )
}

/// Proposes a keeper / epoch timing change (applied by `apply_settings_change`).
pub fn update_settings(admin: Pubkey, args: UpdateSettingsArgs) -> Instruction {
    build(settings_accounts(admin), ix::UpdateSettings { args })
}

/// Proposes a guardian (the zero key removes it).
pub fn set_guardian(admin: Pubkey, guardian: Pubkey) -> Instruction {
    build(settings_accounts(admin), ix::SetGuardian { guardian })
}

/// Applies the pending settings change once its timelock has passed.
pub fn apply_settings_change(admin: Pubkey) -> Instruction {
    build(settings_accounts(admin), ix::ApplySettingsChange {})
}

pub fn cancel_settings_change(admin: Pubkey) -> Instruction {
    build(settings_accounts(admin), ix::CancelSettingsChange {})
}

fn settings_accounts(admin: Pubkey) -> acc::UpdateSettings {
    let (event_authority, program) = event_accounts();
    acc::UpdateSettings {
        admin,
        state: pda::crucible::state(),
        event_authority,
        program,
    }
}

/// The admin names its successor (`None` withdraws the proposal).
pub fn propose_admin(admin: Pubkey, new_admin: Option<Pubkey>) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::ProposeAdmin {
            admin,
            state: pda::crucible::state(),
            event_authority,
            program,
        },
        ix::ProposeAdmin { new_admin },
    )
}

/// Signed by the proposed successor.
pub fn accept_admin(new_admin: Pubkey) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::AcceptAdmin {
            new_admin,
            state: pda::crucible::state(),
            event_authority,
            program,
        },
        ix::AcceptAdmin {},
    )
}

pub fn set_authorized_source(admin: Pubkey, source: Pubkey, allowed: bool) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::SetAuthorizedSource {
            admin,
            state: pda::crucible::state(),
            event_authority,
            program,
        },
        ix::SetAuthorizedSource { source, allowed },
    )
}

pub fn init_sol_pool(admin: Pubkey) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::InitSolPool {
            admin,
            state: pda::crucible::state(),
            asset_pool: pda::crucible::sol_asset_pool(),
            epoch: pda::crucible::epoch(&SOL_MINT, 0),
            sol_vault: pda::crucible::sol_vault(),
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::InitSolPool {},
    )
}

pub fn init_token_pool(admin: Pubkey, mint: Pubkey) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::InitTokenPool {
            admin,
            state: pda::crucible::state(),
            mint,
            asset_pool: pda::crucible::asset_pool(&mint),
            epoch: pda::crucible::epoch(&mint, 0),
            token_vault: pda::crucible::token_vault(&mint),
            token_program: token::ID,
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::InitTokenPool {},
    )
}

pub fn deposit_sol(
    authority: Pubkey,
    source: Pubkey,
    current_epoch: u64,
    amount: u64,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::DepositSol {
            authority,
            source,
            state: pda::crucible::state(),
            asset_pool: pda::crucible::sol_asset_pool(),
            epoch: pda::crucible::epoch(&SOL_MINT, current_epoch),
            sol_vault: pda::crucible::sol_vault(),
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::DepositSol { amount },
    )
}

pub struct SplSource {
    pub authority: Pubkey,
    pub source_authority: Pubkey,
    pub source: Pubkey,
}

pub fn deposit_spl(from: SplSource, mint: Pubkey, current_epoch: u64, amount: u64) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::DepositSpl {
            authority: from.authority,
            source_authority: from.source_authority,
            source: from.source,
            mint,
            state: pda::crucible::state(),
            asset_pool: pda::crucible::asset_pool(&mint),
            epoch: pda::crucible::epoch(&mint, current_epoch),
            token_vault: pda::crucible::token_vault(&mint),
            token_program: token::ID,
            event_authority,
            program,
        },
        ix::DepositSpl { amount },
    )
}

/// Closes `mint`'s epoch `current_epoch` and opens the next.
pub fn close_epoch(
    keeper: Pubkey,
    mint: Pubkey,
    current_epoch: u64,
    args: CloseEpochArgs,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::CloseEpoch {
            keeper,
            state: pda::crucible::state(),
            asset_pool: pda::crucible::asset_pool(&mint),
            epoch: pda::crucible::epoch(&mint, current_epoch),
            next_epoch: pda::crucible::epoch(&mint, current_epoch + 1),
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::CloseEpoch { args },
    )
}

pub fn claim_sol(wallet: Pubkey, epoch: u64, amount: u64, proof: Vec<[u8; 32]>) -> Instruction {
    let (event_authority, program) = event_accounts();
    let epoch_key = pda::crucible::epoch(&SOL_MINT, epoch);
    build(
        acc::ClaimSol {
            wallet,
            asset_pool: pda::crucible::sol_asset_pool(),
            epoch: epoch_key,
            receipt: pda::crucible::claim_receipt(&epoch_key, &wallet),
            sol_vault: pda::crucible::sol_vault(),
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::ClaimSol { amount, proof },
    )
}

pub fn claim_spl(
    wallet: Pubkey,
    recipient: Pubkey,
    mint: Pubkey,
    epoch: u64,
    amount: u64,
    proof: Vec<[u8; 32]>,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    let epoch_key = pda::crucible::epoch(&mint, epoch);
    build(
        acc::ClaimSpl {
            wallet,
            recipient,
            mint,
            asset_pool: pda::crucible::asset_pool(&mint),
            epoch: epoch_key,
            receipt: pda::crucible::claim_receipt(&epoch_key, &wallet),
            token_vault: pda::crucible::token_vault(&mint),
            token_program: token::ID,
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::ClaimSpl { amount, proof },
    )
}

/// Moves `mint`'s epoch `expired_epoch`'s unclaimed remainder into `current_epoch`.
pub fn rollover(mint: Pubkey, expired_epoch: u64, current_epoch: u64) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::Rollover {
            asset_pool: pda::crucible::asset_pool(&mint),
            expired_epoch: pda::crucible::epoch(&mint, expired_epoch),
            current_epoch: pda::crucible::epoch(&mint, current_epoch),
            event_authority,
            program,
        },
        ix::Rollover {},
    )
}

/// The admin vetoes `mint`'s epoch `vetoed_epoch`'s root during its challenge delay.
/// `authority` is the admin or the guardian.
pub fn veto_epoch_root(
    authority: Pubkey,
    mint: Pubkey,
    vetoed_epoch: u64,
    current_epoch: u64,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::VetoEpochRoot {
            authority,
            state: pda::crucible::state(),
            asset_pool: pda::crucible::asset_pool(&mint),
            vetoed_epoch: pda::crucible::epoch(&mint, vetoed_epoch),
            current_epoch: pda::crucible::epoch(&mint, current_epoch),
            event_authority,
            program,
        },
        ix::VetoEpochRoot {},
    )
}

/// Closes `wallet`'s receipt of `mint`'s epoch `epoch` (after it rolled over).
pub fn close_claim_receipt(wallet: Pubkey, mint: Pubkey, epoch: u64) -> Instruction {
    let (event_authority, program) = event_accounts();
    let epoch_key = pda::crucible::epoch(&mint, epoch);
    build(
        acc::CloseClaimReceipt {
            wallet,
            epoch: epoch_key,
            receipt: pda::crucible::claim_receipt(&epoch_key, &wallet),
            event_authority,
            program,
        },
        ix::CloseClaimReceipt {},
    )
}
