//! Every program-derived address of the three programs, from the programs' own seed constants.

use anchor_lang::prelude::Pubkey;
use anchor_lang::solana_program::bpf_loader_upgradeable;

/// The program's ProgramData account (its upgrade authority gates `initialize`).
pub fn program_data(program_id: &Pubkey) -> Pubkey {
    Pubkey::find_program_address(&[program_id.as_ref()], &bpf_loader_upgradeable::ID).0
}

/// The `__event_authority` PDA that signs a program's `emit_cpi!` self-invocations.
pub fn event_authority(program_id: &Pubkey) -> Pubkey {
    Pubkey::find_program_address(&[b"__event_authority"], program_id).0
}

pub mod binary {
    use anchor_lang::prelude::Pubkey;
    use binary_vault::constants::*;
    use binary_vault::state::Side;
    use binary_vault::ID;

    pub fn program_state() -> Pubkey {
        Pubkey::find_program_address(&[PROGRAM_STATE_SEED], &ID).0
    }

    pub fn config() -> Pubkey {
        Pubkey::find_program_address(&[CONFIG_SEED], &ID).0
    }

    pub fn market(market_id: &[u8; 32]) -> Pubkey {
        Pubkey::find_program_address(&[MARKET_SEED, market_id], &ID).0
    }

    /// Lamport vault (`yes_vault` / `no_vault`) of a SOL market.
    pub fn sol_vault(market_id: &[u8; 32], side: Side) -> Pubkey {
        Pubkey::find_program_address(&[side.vault_seed(), market_id], &ID).0
    }

    /// Token vault (`yes_tvault` / `no_tvault`) of an SPL market.
    pub fn token_vault(market_id: &[u8; 32], side: Side) -> Pubkey {
        Pubkey::find_program_address(&[side.token_vault_seed(), market_id], &ID).0
    }

    pub fn backing(market_id: &[u8; 32], backer: &Pubkey, side: Side) -> Pubkey {
        Pubkey::find_program_address(
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
        Pubkey::find_program_address(&[ORACLE_VOTE_SEED, market_id, oracle.as_ref()], &ID).0
    }

    pub fn dispute(market_id: &[u8; 32]) -> Pubkey {
        Pubkey::find_program_address(&[DISPUTE_SEED, market_id], &ID).0
    }

    /// Signer PDA that crucible_pool accepts as an authorised source.
    pub fn cpi_authority() -> Pubkey {
        Pubkey::find_program_address(&[CPI_AUTHORITY_SEED], &ID).0
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
        Pubkey::find_program_address(&[STATE_SEED], &ID).0
    }

    pub fn sol_vault() -> Pubkey {
        Pubkey::find_program_address(&[SOL_VAULT_SEED], &ID).0
    }

    pub fn token_vault(mint: &Pubkey) -> Pubkey {
        Pubkey::find_program_address(&[TOKEN_VAULT_SEED, mint.as_ref()], &ID).0
    }

    /// Asset pool of `mint`; [`SOL_MINT`] (the zero key) for SOL.
    pub fn asset_pool(mint: &Pubkey) -> Pubkey {
        Pubkey::find_program_address(&[ASSET_POOL_SEED, mint.as_ref()], &ID).0
    }

    pub fn sol_asset_pool() -> Pubkey {
        asset_pool(&SOL_MINT)
    }

    pub fn epoch(mint: &Pubkey, epoch: u64) -> Pubkey {
        Pubkey::find_program_address(&[EPOCH_SEED, mint.as_ref(), &epoch.to_le_bytes()], &ID).0
    }

    pub fn claim_receipt(epoch: &Pubkey, wallet: &Pubkey) -> Pubkey {
        Pubkey::find_program_address(&[CLAIM_SEED, epoch.as_ref(), wallet.as_ref()], &ID).0
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
        Pubkey::find_program_address(&[PROGRAM_STATE_SEED], &ID).0
    }

    /// `shield_state` + protocol_id.
    pub fn coverage(protocol_id: &[u8; 32]) -> Pubkey {
        Pubkey::find_program_address(&[SHIELD_STATE_SEED, protocol_id], &ID).0
    }

    /// `shield_safe` / `shield_exploit` + protocol_id.
    pub fn vault(protocol_id: &[u8; 32], side: ShieldSide) -> Pubkey {
        Pubkey::find_program_address(&[side.vault_seed(), protocol_id], &ID).0
    }

    pub fn backing(protocol_id: &[u8; 32], backer: &Pubkey, side: ShieldSide) -> Pubkey {
        Pubkey::find_program_address(
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
        Pubkey::find_program_address(&[ORACLE_VOTE_SEED, protocol_id, oracle.as_ref()], &ID).0
    }

    /// Signer PDA of the seam-pool deposit into crucible_pool.
    pub fn cpi_authority() -> Pubkey {
        Pubkey::find_program_address(&[CPI_AUTHORITY_SEED], &ID).0
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
