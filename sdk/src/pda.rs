//! Every program-derived address of the three programs, from the programs' own seed constants.
//!
//! Deriving one searches for a bump off the curve (a hash and a curve test a candidate,
//! [`crate::derive`]; about two candidates an address), so the addresses shared by every wallet
//! (program-wide accounts, a market's or coverage's accounts) are derived once per process and
//! kept ([`kept`]); a wallet's own accounts are derived each time.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::bpf_loader_upgradeable;

/// The most addresses [`kept`] holds; past it they are dropped and derived again as asked.
pub const MAX_KEPT: usize = 16_384;

/// `find_program_address(seeds, program)`'s address, derived once while kept.
pub fn kept(seeds: &[&[u8]], program: &Pubkey) -> Pubkey {
    static KEPT: LazyLock<Mutex<HashMap<Vec<u8>, Pubkey>>> =
        LazyLock::new(|| Mutex::new(HashMap::new()));
    // The program, then each seed with its length, so that no two inputs share a key.
    let mut key = Vec::with_capacity(32 + seeds.iter().map(|s| s.len() + 1).sum::<usize>());
    key.extend_from_slice(program.as_ref());
    for seed in seeds {
        key.push(seed.len() as u8);
        key.extend_from_slice(seed);
    }
    if let Some(address) = KEPT.lock().expect("kept addresses").get(&key) {
        return *address;
    }
    let address = crate::derive::find_program_address(seeds, program).0;
    let mut kept = KEPT.lock().expect("kept addresses");
    if kept.len() >= MAX_KEPT {
        kept.clear();
    }
    kept.insert(key, address);
    address
}

/// The program's ProgramData account (its upgrade authority gates `initialize`).
pub fn program_data(program_id: &Pubkey) -> Pubkey {
    kept(&[program_id.as_ref()], &bpf_loader_upgradeable::ID)
}

/// The `__event_authority` PDA that signs a program's `emit_cpi!` self-invocations.
pub fn event_authority(program_id: &Pubkey) -> Pubkey {
    kept(&[b"__event_authority"], program_id)
}

pub mod binary {
    use anchor_lang::prelude::Pubkey;
    use binary_vault::constants::*;
    use binary_vault::state::Side;
    use binary_vault::ID;

    pub fn program_state() -> Pubkey {
        super::kept(&[PROGRAM_STATE_SEED], &ID)
    }

    pub fn config() -> Pubkey {
        super::kept(&[CONFIG_SEED], &ID)
    }

    pub fn market(market_id: &[u8; 32]) -> Pubkey {
        super::kept(&[MARKET_SEED, market_id], &ID)
    }

    /// Lamport vault (`yes_vault` / `no_vault`) of a SOL market.
    pub fn sol_vault(market_id: &[u8; 32], side: Side) -> Pubkey {
        super::kept(&[side.vault_seed(), market_id], &ID)
    }

    /// Token vault (`yes_tvault` / `no_tvault`) of an SPL market.
    pub fn token_vault(market_id: &[u8; 32], side: Side) -> Pubkey {
        super::kept(&[side.token_vault_seed(), market_id], &ID)
    }

    pub fn backing(market_id: &[u8; 32], backer: &Pubkey, side: Side) -> Pubkey {
        crate::derive::find_program_address(
            &[
                BACKING_SEED,
                market_id,
                backer.as_ref(),
                &[side.seed_byte()],
            ],
            &ID,
        )
        .0
    }

    pub fn oracle_vote(market_id: &[u8; 32], oracle: &Pubkey) -> Pubkey {
        crate::derive::find_program_address(&[ORACLE_VOTE_SEED, market_id, oracle.as_ref()], &ID).0
    }

    pub fn dispute(market_id: &[u8; 32]) -> Pubkey {
        super::kept(&[DISPUTE_SEED, market_id], &ID)
    }

    /// Signer PDA that crucible_pool accepts as an authorised source.
    pub fn cpi_authority() -> Pubkey {
        super::kept(&[CPI_AUTHORITY_SEED], &ID)
    }

    pub fn event_authority() -> Pubkey {
        super::event_authority(&ID)
    }
}

pub mod crucible {
    use anchor_lang::prelude::Pubkey;
    use crucible_pool::constants::*;
    use crucible_pool::{ID, SOL_MINT};

    pub fn state() -> Pubkey {
        super::kept(&[STATE_SEED], &ID)
    }

    pub fn sol_vault() -> Pubkey {
        super::kept(&[SOL_VAULT_SEED], &ID)
    }

    pub fn token_vault(mint: &Pubkey) -> Pubkey {
        super::kept(&[TOKEN_VAULT_SEED, mint.as_ref()], &ID)
    }

    /// Asset pool of `mint`; [`SOL_MINT`] (the zero key) for SOL.
    pub fn asset_pool(mint: &Pubkey) -> Pubkey {
        super::kept(&[ASSET_POOL_SEED, mint.as_ref()], &ID)
    }

    pub fn sol_asset_pool() -> Pubkey {
        asset_pool(&SOL_MINT)
    }

    pub fn epoch(mint: &Pubkey, epoch: u64) -> Pubkey {
        super::kept(&[EPOCH_SEED, mint.as_ref(), &epoch.to_le_bytes()], &ID)
    }

    pub fn claim_receipt(epoch: &Pubkey, wallet: &Pubkey) -> Pubkey {
        crate::derive::find_program_address(&[CLAIM_SEED, epoch.as_ref(), wallet.as_ref()], &ID).0
    }

    pub fn event_authority() -> Pubkey {
        super::event_authority(&ID)
    }
}

pub mod shield {
    use anchor_lang::prelude::Pubkey;
    use shield_vault::constants::*;
    use shield_vault::state::ShieldSide;
    use shield_vault::ID;

    pub fn program_state() -> Pubkey {
        super::kept(&[PROGRAM_STATE_SEED], &ID)
    }

    /// `shield_state` + protocol_id.
    pub fn coverage(protocol_id: &[u8; 32]) -> Pubkey {
        super::kept(&[SHIELD_STATE_SEED, protocol_id], &ID)
    }

    /// `shield_safe` / `shield_exploit` + protocol_id.
    pub fn vault(protocol_id: &[u8; 32], side: ShieldSide) -> Pubkey {
        super::kept(&[side.vault_seed(), protocol_id], &ID)
    }

    pub fn backing(protocol_id: &[u8; 32], backer: &Pubkey, side: ShieldSide) -> Pubkey {
        crate::derive::find_program_address(
            &[
                BACKING_SEED,
                protocol_id,
                backer.as_ref(),
                &[side.seed_byte()],
            ],
            &ID,
        )
        .0
    }

    pub fn oracle_vote(protocol_id: &[u8; 32], oracle: &Pubkey) -> Pubkey {
        crate::derive::find_program_address(&[ORACLE_VOTE_SEED, protocol_id, oracle.as_ref()], &ID)
            .0
    }

    /// Signer PDA of the seam-pool deposit into crucible_pool.
    pub fn cpi_authority() -> Pubkey {
        super::kept(&[CPI_AUTHORITY_SEED], &ID)
    }

    pub fn event_authority() -> Pubkey {
        super::event_authority(&ID)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use binary_vault::state::Side;

    #[test]
    fn kept_addresses_are_the_derived_ones() {
        let program = Pubkey::new_unique();
        for n in 0..50u8 {
            let id = [n; 32];
            let seeds: [&[u8]; 2] = [b"seed", &id];
            let derived = Pubkey::find_program_address(&seeds, &program).0;
            assert_eq!(kept(&seeds, &program), derived);
            // Again, from the memo.
            assert_eq!(kept(&seeds, &program), derived);
        }
        // Seeds that concatenate alike are different inputs.
        assert_eq!(
            kept(&[b"ab", b"c"], &program),
            Pubkey::find_program_address(&[b"ab", b"c"], &program).0
        );
        assert_eq!(
            kept(&[b"a", b"bc"], &program),
            Pubkey::find_program_address(&[b"a", b"bc"], &program).0
        );
        assert_eq!(
            shield::coverage(&[4; 32]),
            Pubkey::find_program_address(&[b"shield_state", &[4; 32]], &shield_vault::ID).0
        );
    }

    #[test]
    fn side_is_part_of_the_backing_address() {
        let id = [9u8; 32];
        let backer = Pubkey::new_unique();
        assert_ne!(
            binary::backing(&id, &backer, Side::Yes),
            binary::backing(&id, &backer, Side::No)
        );
    }

    #[test]
    fn sol_and_token_vaults_differ() {
        let id = [3u8; 32];
        assert_ne!(
            binary::sol_vault(&id, Side::Yes),
            binary::token_vault(&id, Side::Yes)
        );
        assert_ne!(
            binary::sol_vault(&id, Side::Yes),
            binary::sol_vault(&id, Side::No)
        );
    }

    #[test]
    fn shield_backing_addresses_differ_by_side_and_vaults_by_protocol() {
        use shield_vault::state::ShieldSide;
        let (a, b) = ([1u8; 32], [2u8; 32]);
        let w = Pubkey::new_unique();
        assert_ne!(
            shield::backing(&a, &w, ShieldSide::Safe),
            shield::backing(&a, &w, ShieldSide::Exploit)
        );
        assert_ne!(
            shield::vault(&a, ShieldSide::Safe),
            shield::vault(&b, ShieldSide::Safe)
        );
        assert_ne!(shield::cpi_authority(), binary::cpi_authority());
    }

    #[test]
    fn epochs_are_numbered_per_mint() {
        let mint = Pubkey::new_unique();
        assert_ne!(crucible::epoch(&mint, 0), crucible::epoch(&mint, 1));
        assert_ne!(
            crucible::epoch(&mint, 0),
            crucible::epoch(&crucible_pool::SOL_MINT, 0)
        );
    }
}
