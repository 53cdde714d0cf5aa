use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::ShieldError;

/// A change of a sensitive setting, applied only `ADMIN_ACTION_TIMELOCK_SECS` after it is
/// proposed so that backers can see it coming.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub enum AdminChange {
    OracleSet {
        oracles: [Pubkey; MAX_ORACLES],
        count: u8,
        threshold: u8,
    },
    Treasury(Pubkey),
    HarvestAuthority(Pubkey),
    MaxSelfHedgeBps(u16),
}

impl AdminChange {
    /// An oracle-set change from a slice of keys; `None` if the set is invalid.
    pub fn oracle_set(oracles: &[Pubkey], threshold: u8) -> Option<Self> {
        if !vault_common::oracle_set_is_valid(oracles, threshold, MAX_ORACLES) {
            return None;
        }
        let mut keys = [Pubkey::default(); MAX_ORACLES];
        keys[..oracles.len()].copy_from_slice(oracles);
        Some(AdminChange::OracleSet {
            oracles: keys,
            count: oracles.len() as u8,
            threshold,
        })
    }
}

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub struct PendingChange {
    pub change: AdminChange,
    pub proposed_at: i64,
}

vault_common::layout_version!(
    /// The layout version of `ShieldProgramState` accounts (see `vault_common::layout`).
    ShieldProgramStateVersion = 1 for "ShieldProgramState"
);

/// Roles and program-wide settings (`shield_program_state`).
#[account]
#[derive(InitSpace, Debug)]
pub struct ShieldProgramState {
    /// First: an account in another layout is refused before any field is misread.
    pub version: ShieldProgramStateVersion,
    pub admin: Pubkey,
    /// Listed oracles in `oracles[..oracle_count]`.
    pub oracles: [Pubkey; MAX_ORACLES],
    pub oracle_count: u8,
    pub oracle_threshold: u8,
    pub treasury: Pubkey,
    /// May book realised yield into the side vaults at any time (a backing also books what
    /// arrived before it).
    pub harvest_authority: Pubkey,
    /// The seam pool's program (crucible_pool).
    pub seam_pool_program: Pubkey,
    /// Most a partnership's own protocol wallet may hold of a shield's EXPLOIT side.
    pub max_self_hedge_bps: u16,
    /// Refuses new coverage and backings; claims and refunds stay open.
    pub paused: bool,
    pub coverage_count: u64,
    pub pending_change: Option<PendingChange>,
    pub cpi_authority_bump: u8,
    pub bump: u8,
    /// The admin's proposed successor, who must accept (`accept_admin`).
    pub pending_admin: Option<Pubkey>,
}

impl ShieldProgramState {
    pub fn listed_oracles(&self) -> &[Pubkey] {
        &self.oracles[..self.oracle_count as usize]
    }

    pub fn is_oracle(&self, key: &Pubkey) -> bool {
        self.listed_oracles().contains(key)
    }

    /// The set a coverage opened now copies.
    pub fn coverage_oracles(&self) -> crate::state::CoverageOracles {
        crate::state::CoverageOracles {
            oracles: self.oracles,
            count: self.oracle_count,
            threshold: self.oracle_threshold,
        }
    }

    pub fn is_oracle_or_admin(&self, key: &Pubkey) -> bool {
        *key == self.admin || self.is_oracle(key)
    }

    /// Checks a change before it is proposed and again before it is applied.
    pub fn validate(change: &AdminChange) -> Result<()> {
        match *change {
            AdminChange::OracleSet {
                oracles,
                count,
                threshold,
            } => {
                let listed = oracles
                    .get(..count as usize)
                    .ok_or(ShieldError::InvalidOracleSet)?;
                let unused_empty = oracles[count as usize..]
                    .iter()
                    .all(|k| *k == Pubkey::default());
                require!(
                    unused_empty
                        && vault_common::oracle_set_is_valid(listed, threshold, MAX_ORACLES),
                    ShieldError::InvalidOracleSet
                );
            }
            AdminChange::Treasury(key) | AdminChange::HarvestAuthority(key) => {
                require_keys_neq!(key, Pubkey::default(), ShieldError::ZeroKey);
            }
            AdminChange::MaxSelfHedgeBps(bps) => {
                require!(bps <= MAX_SELF_HEDGE_BPS, ShieldError::SelfHedgeCapTooHigh);
            }
        }
        Ok(())
    }

    pub fn apply(&mut self, change: &AdminChange) {
        match *change {
            AdminChange::OracleSet {
                oracles,
                count,
                threshold,
            } => {
                self.oracles = oracles;
                self.oracle_count = count;
                self.oracle_threshold = threshold;
            }
            AdminChange::Treasury(key) => self.treasury = key,
            AdminChange::HarvestAuthority(key) => self.harvest_authority = key,
            AdminChange::MaxSelfHedgeBps(bps) => self.max_self_hedge_bps = bps,
        }
    }
}
