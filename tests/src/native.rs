//! Native entry points: each program's Anchor `entry` wrapped so that solana-program-test can
//! run it as a builtin (`processor!`), and the ProgramData accounts its `initialize` checks.

use anchor_lang::prelude::{AccountInfo, Pubkey, UpgradeableLoaderState};
use anchor_lang::solana_program::bpf_loader_upgradeable;
use anchor_lang::solana_program::entrypoint::ProgramResult;
use solana_account::Account;
use solana_program_test::{processor, ProgramTest};

/// Anchor's generated `entry<'info>` takes one lifetime for the key, the accounts and the data;
/// the runtime hands a builtin distinct ones, and `AccountInfo` is invariant in its lifetime.
/// Shortening the accounts' lifetime to the slice's is sound: nothing outlives the call.
fn unify<'a, 'b>(accounts: &'a [AccountInfo<'b>]) -> &'a [AccountInfo<'a>] {
    // SAFETY: 'b outlives 'a (the slice borrows the infos); only the lifetime parameter changes.
    unsafe { std::mem::transmute::<&'a [AccountInfo<'b>], &'a [AccountInfo<'a>]>(accounts) }
}

fn binary_vault_entry(program_id: &Pubkey, accounts: &[AccountInfo], data: &[u8]) -> ProgramResult {
    binary_vault::entry(program_id, unify(accounts), data)
}

fn crucible_pool_entry(
    program_id: &Pubkey,
    accounts: &[AccountInfo],
    data: &[u8],
) -> ProgramResult {
    crucible_pool::entry(program_id, unify(accounts), data)
}

fn shield_vault_entry(program_id: &Pubkey, accounts: &[AccountInfo], data: &[u8]) -> ProgramResult {
    shield_vault::entry(program_id, unify(accounts), data)
}

/// ProgramTest::default() installs debug logging of every instruction unless RUST_LOG is set.
/// Setting a quiet RUST_LOG once, before any ProgramTest exists, keeps test output readable
/// without a window in which parallel tests log at debug; an explicit RUST_LOG still wins.
fn quiet_logs_unless_asked() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("RUST_LOG").is_none() {
            std::env::set_var("RUST_LOG", "warn,tarpc=error,solana_metrics=error");
        }
    });
}

/// A ProgramTest with the three programs as builtins, each with a ProgramData account naming
/// `upgrade_authority`, as a deployment with `anchor deploy` would have.
pub fn program_test(upgrade_authority: &Pubkey) -> ProgramTest {
    quiet_logs_unless_asked();
    let mut pt = ProgramTest::default();
    pt.prefer_bpf(false);
    pt.add_program(
        "binary_vault",
        binary_vault::ID,
        processor!(binary_vault_entry),
    );
    pt.add_program(
        "crucible_pool",
        crucible_pool::ID,
        processor!(crucible_pool_entry),
    );
    pt.add_program(
        "shield_vault",
        shield_vault::ID,
        processor!(shield_vault_entry),
    );
    for program_id in [binary_vault::ID, crucible_pool::ID, shield_vault::ID] {
        pt.add_account(
            narrative_sdk::pda::program_data(&program_id),
            program_data_account(upgrade_authority),
        );
    }
    pt
}

/// The upgradeable loader's ProgramData header (the program bytes are irrelevant natively).
pub fn program_data_account(upgrade_authority: &Pubkey) -> Account {
    let state = UpgradeableLoaderState::ProgramData {
        slot: 0,
        upgrade_authority_address: Some(*upgrade_authority),
    };
    Account {
        lamports: 1_000_000_000,
        data: bincode::serialize(&state).expect("loader state serialises"),
        owner: bpf_loader_upgradeable::ID,
        executable: false,
        rent_epoch: 0,
    }
}
