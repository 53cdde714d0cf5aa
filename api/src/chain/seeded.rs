//! Accounts the service has wallets create at addresses derived with a seed
//! (`create_account_with_seed`): tier NFTs and collections, lending obligations.
//!
//! A derivable address can be sent lamports by anyone, and `create_account_with_seed` refuses
//! one that holds any. So an address funded beforehand (which would otherwise block it for
//! ever) is topped up, allocated and assigned instead, which still takes the base's signature.

use anchor_lang::solana_program::{system_instruction, system_program};
use narrative_sdk::{Instruction, Pubkey};

use crate::chain::ledger::LedgerAccount;

/// What the ledger holds at an address the service creates with a seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeededAddress {
    /// Still a system account without data, holding these lamports (0: nothing there): it
    /// can be created.
    Free { lamports: u64 },
    /// Created already (only the authority's signature can allocate or assign it).
    Taken,
}

impl SeededAddress {
    pub fn of(account: Option<&LedgerAccount>) -> SeededAddress {
        match account {
            None => SeededAddress::Free { lamports: 0 },
            Some(account) if account.owner == system_program::ID && account.data.is_empty() => {
                SeededAddress::Free {
                    lamports: account.lamports,
                }
            }
            Some(_) => SeededAddress::Taken,
        }
    }
}

/// An address derived with a seed: `base` + `seed` for the program `owner`.
#[derive(Debug, Clone, Copy)]
pub struct Seed<'a> {
    pub base: &'a Pubkey,
    pub seed: &'a str,
    pub owner: &'a Pubkey,
}

impl Seed<'_> {
    pub fn address(&self) -> Pubkey {
        Pubkey::create_with_seed(self.base, self.seed, self.owner)
            .expect("seeds here are at most 32 bytes")
    }
}

/// The instructions that give the seeded `address` `space` bytes and `lamports`, owned by the
/// seed's program, paid by `payer`: one `create_account_with_seed`, or, for an address that
/// already holds `prefunded` lamports (which that instruction refuses), a top-up,
/// `allocate_with_seed` and `assign_with_seed`.
pub fn create_seeded_account(
    payer: &Pubkey,
    address: &Pubkey,
    seed: Seed,
    lamports: u64,
    space: u64,
    prefunded: u64,
) -> Vec<Instruction> {
    let Seed { base, seed, owner } = seed;
    if prefunded == 0 {
        return vec![system_instruction::create_account_with_seed(
            payer, address, base, seed, lamports, space, owner,
        )];
    }
    let mut instructions = Vec::with_capacity(3);
    if prefunded < lamports {
        instructions.push(system_instruction::transfer(
            payer,
            address,
            lamports - prefunded,
        ));
    }
    instructions.push(system_instruction::allocate_with_seed(
        address, base, seed, space, owner,
    ));
    instructions.push(system_instruction::assign_with_seed(
        address, base, seed, owner,
    ));
    instructions
}
