//! Instruction builders for binary_vault, one per instruction, from the program's own
//! generated account and argument types.

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::instruction::Instruction;
use anchor_lang::{system_program, InstructionData, ToAccountMetas};
use anchor_spl::token;
use binary_vault::accounts as acc;
use binary_vault::instruction as ix;
use binary_vault::instructions::{ConfigUpdate, CreateMarketArgs, InitializeArgs};
use binary_vault::state::{DisputeAction, Side};

use crate::pda;

pub use binary_vault::ID as PROGRAM_ID;

fn build(accounts: impl ToAccountMetas, data: impl InstructionData) -> Instruction {
    Instruction {
        program_id: PROGRAM_ID,
        accounts: accounts.to_account_metas(None),
        data: data.data(),
    }
}

fn event_accounts() -> (Pubkey, Pubkey) {
    (pda::binary::event_authority(), PROGRAM_ID)
}

/// The crucible_pool accounts a finalisation passes on to its deposit CPI: the current epoch
/// of `mint`'s asset pool (`SOL_MINT` for SOL markets) and the matching vault.
pub struct CrucibleTarget {
    pub mint: Pubkey,
    pub current_epoch: u64,
}

impl CrucibleTarget {
    pub fn sol(current_epoch: u64) -> Self {
        CrucibleTarget {
            mint: crucible_pool::SOL_MINT,
            current_epoch,
        }
    }

    fn vault(&self) -> Pubkey {
        if self.mint == crucible_pool::SOL_MINT {
            pda::crucible::sol_vault()
        } else {
            pda::crucible::token_vault(&self.mint)
        }
    }
}

pub fn initialize(admin: Pubkey, args: InitializeArgs) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::Initialize {
            admin,
            program_state: pda::binary::program_state(),
            config: pda::binary::config(),
            program_data: pda::program_data(&PROGRAM_ID),
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::Initialize { args },
    )
}

fn admin_config(admin: Pubkey) -> acc::AdminConfig {
    let (event_authority, program) = event_accounts();
    acc::AdminConfig {
        admin,
        program_state: pda::binary::program_state(),
        config: pda::binary::config(),
        event_authority,
        program,
    }
}

/// Proposes `update`; it applies after the admin timelock (`apply_config_change`).
pub fn propose_config_change(admin: Pubkey, update: ConfigUpdate) -> Instruction {
    build(admin_config(admin), ix::ProposeConfigChange { update })
}

pub fn apply_config_change(admin: Pubkey) -> Instruction {
    build(admin_config(admin), ix::ApplyConfigChange {})
}

pub fn cancel_config_change(admin: Pubkey) -> Instruction {
    build(admin_config(admin), ix::CancelConfigChange {})
}

fn admin_state(admin: Pubkey) -> acc::AdminState {
    let (event_authority, program) = event_accounts();
    acc::AdminState {
        admin,
        program_state: pda::binary::program_state(),
        event_authority,
        program,
    }
}

/// The admin names its successor (`None` withdraws the proposal).
pub fn propose_admin(admin: Pubkey, new_admin: Option<Pubkey>) -> Instruction {
    build(admin_state(admin), ix::ProposeAdmin { new_admin })
}

/// Signed by the proposed successor.
pub fn accept_admin(new_admin: Pubkey) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::AcceptAdmin {
            new_admin,
            program_state: pda::binary::program_state(),
            event_authority,
            program,
        },
        ix::AcceptAdmin {},
    )
}

pub fn set_paused(admin: Pubkey, paused: bool) -> Instruction {
    build(admin_state(admin), ix::SetPaused { paused })
}

/// A SOL market. Pass `admin` to have the admin co-sign (approving a Classic market at once, or
/// allowing a non-`Seed` source).
pub fn create_market(
    creator: Pubkey,
    admin: Option<Pubkey>,
    args: CreateMarketArgs,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    let id = args.market_id;
    build(
        acc::CreateMarket {
            creator,
            admin,
            program_state: pda::binary::program_state(),
            config: pda::binary::config(),
            market: pda::binary::market(&id),
            yes_vault: pda::binary::sol_vault(&id, Side::Yes),
            no_vault: pda::binary::sol_vault(&id, Side::No),
            crucible_state: pda::crucible::state(),
            crucible_sol_pool: pda::crucible::asset_pool(&crucible_pool::SOL_MINT),
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::CreateMarket { args },
    )
}

pub fn create_market_spl(
    creator: Pubkey,
    admin: Option<Pubkey>,
    mint: Pubkey,
    args: CreateMarketArgs,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    let id = args.market_id;
    build(
        acc::CreateMarketSpl {
            creator,
            admin,
            program_state: pda::binary::program_state(),
            config: pda::binary::config(),
            market: pda::binary::market(&id),
            mint,
            yes_vault: pda::binary::token_vault(&id, Side::Yes),
            no_vault: pda::binary::token_vault(&id, Side::No),
            crucible_asset_pool: pda::crucible::asset_pool(&mint),
            crucible_state: pda::crucible::state(),
            token_program: token::ID,
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::CreateMarketSpl { args },
    )
}

pub fn approve_market(admin: Pubkey, market_id: &[u8; 32]) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::ApproveMarket {
            admin,
            program_state: pda::binary::program_state(),
            market: pda::binary::market(market_id),
            event_authority,
            program,
        },
        ix::ApproveMarket {},
    )
}

pub fn back_market(backer: Pubkey, market_id: &[u8; 32], side: Side, amount: u64) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::BackMarket {
            backer,
            program_state: pda::binary::program_state(),
            market: pda::binary::market(market_id),
            vault: pda::binary::sol_vault(market_id, side),
            backing: pda::binary::backing(market_id, &backer, side),
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::BackMarket { side, amount },
    )
}

pub fn back_market_spl(
    backer: Pubkey,
    market_id: &[u8; 32],
    mint: Pubkey,
    backer_token: Pubkey,
    side: Side,
    amount: u64,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::BackMarketSpl {
            backer,
            program_state: pda::binary::program_state(),
            market: pda::binary::market(market_id),
            mint,
            backer_token,
            vault: pda::binary::token_vault(market_id, side),
            backing: pda::binary::backing(market_id, &backer, side),
            token_program: token::ID,
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::BackMarketSpl { side, amount },
    )
}

pub fn submit_oracle_resolution(
    oracle: Pubkey,
    market_id: &[u8; 32],
    vote: Side,
    confidence_bps: u16,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::SubmitOracleResolution {
            oracle,
            market: pda::binary::market(market_id),
            vote: pda::binary::oracle_vote(market_id, &oracle),
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::SubmitOracleResolution {
            vote,
            confidence_bps,
        },
    )
}

/// `resolve_dispute`. For `Open`, `authority` is the disputer (and `disputer` the same key); for
/// a ruling, `authority` is the admin and `disputer` the recorded disputer.
pub fn resolve_dispute(
    authority: Pubkey,
    market_id: &[u8; 32],
    disputer: Pubkey,
    action: DisputeAction,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::ResolveDispute {
            authority,
            program_state: pda::binary::program_state(),
            market: pda::binary::market(market_id),
            dispute: pda::binary::dispute(market_id),
            disputer,
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::ResolveDispute { action },
    )
}

pub fn open_dispute(disputer: Pubkey, market_id: &[u8; 32]) -> Instruction {
    resolve_dispute(disputer, market_id, disputer, DisputeAction::Open)
}

/// `lapse_dispute`: settles a dispute left unruled past the market's resolution delay; anyone
/// may send it (the fee payer signs the transaction, the instruction needs no signer).
pub fn lapse_dispute(market_id: &[u8; 32]) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::LapseDispute {
            market: pda::binary::market(market_id),
            dispute: pda::binary::dispute(market_id),
            event_authority,
            program,
        },
        ix::LapseDispute {},
    )
}

/// `forward_dispute_bond`: sends an upheld or lapsed dispute's forfeit bond to `treasury` (the
/// config's); anyone may send it.
pub fn forward_dispute_bond(market_id: &[u8; 32], treasury: Pubkey) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::ForwardDisputeBond {
            config: pda::binary::config(),
            dispute: pda::binary::dispute(market_id),
            treasury,
            event_authority,
            program,
        },
        ix::ForwardDisputeBond {},
    )
}

/// Finalises a SOL or SPL market; moves no money.
pub fn finalize_resolution(market_id: &[u8; 32]) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::FinalizeResolution {
            market: pda::binary::market(market_id),
            event_authority,
            program,
        },
        ix::FinalizeResolution {},
    )
}

/// Sends a finalised SOL Yield market's crucible share into `crucible`'s current epoch.
pub fn forward_crucible_share(market_id: &[u8; 32], crucible: &CrucibleTarget) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::ForwardCrucibleShare {
            program_state: pda::binary::program_state(),
            market: pda::binary::market(market_id),
            yes_vault: pda::binary::sol_vault(market_id, Side::Yes),
            no_vault: pda::binary::sol_vault(market_id, Side::No),
            cpi_authority: pda::binary::cpi_authority(),
            crucible_state: pda::crucible::state(),
            crucible_asset_pool: pda::crucible::asset_pool(&crucible.mint),
            crucible_epoch: pda::crucible::epoch(&crucible.mint, crucible.current_epoch),
            crucible_vault: crucible.vault(),
            crucible_event_authority: pda::crucible::event_authority(),
            crucible_program: crucible_pool::ID,
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::ForwardCrucibleShare {},
    )
}

/// [`forward_crucible_share`] for an SPL market (`crucible.mint` is the market's mint).
pub fn forward_crucible_share_spl(market_id: &[u8; 32], crucible: &CrucibleTarget) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::ForwardCrucibleShareSpl {
            program_state: pda::binary::program_state(),
            market: pda::binary::market(market_id),
            mint: crucible.mint,
            yes_vault: pda::binary::token_vault(market_id, Side::Yes),
            no_vault: pda::binary::token_vault(market_id, Side::No),
            cpi_authority: pda::binary::cpi_authority(),
            crucible_state: pda::crucible::state(),
            crucible_asset_pool: pda::crucible::asset_pool(&crucible.mint),
            crucible_epoch: pda::crucible::epoch(&crucible.mint, crucible.current_epoch),
            crucible_vault: crucible.vault(),
            crucible_event_authority: pda::crucible::event_authority(),
            crucible_program: crucible_pool::ID,
            token_program: token::ID,
            event_authority,
            program,
        },
        ix::ForwardCrucibleShareSpl {},
    )
}

/// Refunds a market no oracle threshold resolved, after the delay; anyone.
pub fn trigger_timeout_refund(market_id: &[u8; 32]) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::TriggerTimeoutRefund {
            market: pda::binary::market(market_id),
            event_authority,
            program,
        },
        ix::TriggerTimeoutRefund {},
    )
}

pub fn claim(backer: Pubkey, market_id: &[u8; 32], side: Side) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::Claim {
            backer,
            market: pda::binary::market(market_id),
            backing: pda::binary::backing(market_id, &backer, side),
            yes_vault: pda::binary::sol_vault(market_id, Side::Yes),
            no_vault: pda::binary::sol_vault(market_id, Side::No),
            system_program: system_program::ID,
            event_authority,
            program,
        },
        ix::Claim {},
    )
}

pub fn claim_spl(
    backer: Pubkey,
    market_id: &[u8; 32],
    side: Side,
    mint: Pubkey,
    backer_token: Pubkey,
) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::ClaimSpl {
            backer,
            market: pda::binary::market(market_id),
            backing: pda::binary::backing(market_id, &backer, side),
            mint,
            backer_token,
            yes_vault: pda::binary::token_vault(market_id, Side::Yes),
            no_vault: pda::binary::token_vault(market_id, Side::No),
            token_program: token::ID,
            event_authority,
            program,
        },
        ix::ClaimSpl {},
    )
}

pub fn close_oracle_vote(oracle: Pubkey, market_id: &[u8; 32]) -> Instruction {
    let (event_authority, program) = event_accounts();
    build(
        acc::CloseOracleVote {
            oracle,
            market: pda::binary::market(market_id),
            vote: pda::binary::oracle_vote(market_id, &oracle),
            event_authority,
            program,
        },
        ix::CloseOracleVote {},
    )
}

fn yield_scaffold(admin: Pubkey, market_id: &[u8; 32]) -> acc::YieldScaffold {
    acc::YieldScaffold {
        admin,
        program_state: pda::binary::program_state(),
        market: pda::binary::market(market_id),
    }
}

pub fn deposit_to_yield(
    admin: Pubkey,
    market_id: &[u8; 32],
    side: Side,
    amount: u64,
) -> Instruction {
    build(
        yield_scaffold(admin, market_id),
        ix::DepositToYield { side, amount },
    )
}

pub fn withdraw_from_yield(
    admin: Pubkey,
    market_id: &[u8; 32],
    side: Side,
    amount: u64,
) -> Instruction {
    build(
        yield_scaffold(admin, market_id),
        ix::WithdrawFromYield { side, amount },
    )
}
