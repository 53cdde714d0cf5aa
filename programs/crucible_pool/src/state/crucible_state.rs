use anchor_lang::prelude::*;

use crate::constants::MAX_AUTHORIZED_SOURCES;
use crate::error::CrucibleError;

vault_common::layout_version!(
    /// The layout version of `CrucibleState` accounts (see `vault_common::layout`).
    CrucibleStateVersion = 1 for "CrucibleState"
);

/// Program-wide settings (`crucible_state`).
#[account]
#[derive(InitSpace, Debug)]
pub struct CrucibleState {
    /// First: an account in another layout is refused before any field is misread.
    pub version: CrucibleStateVersion,
    pub admin: Pubkey,
    /// Closes epochs and posts their Merkle roots.
    pub keeper: Pubkey,
    /// CPI signer PDAs of the programs allowed to deposit (binary_vault's `binary_cpi_auth`,
    /// shield_vault's `shield_cpi_auth`). Empty slots hold the zero key.
    pub authorized_sources: [Pubkey; MAX_AUTHORIZED_SOURCES],
    pub epoch_duration_secs: i64,
    pub claim_window_secs: i64,
    pub bump: u8,
    /// The admin's proposed successor, who must accept (`accept_admin`).
    pub pending_admin: Option<Pubkey>,
    /// May veto a posted root besides the admin; the zero key when there is none. Never the
    /// admin itself, so that a second key can stop a bad root.
    pub guardian: Pubkey,
    /// At most one change waits for `ADMIN_ACTION_TIMELOCK_SECS`.
    pub pending_change: Option<PendingCrucibleChange>,
}

/// A change of the keeper, epoch timing, deposit sources or guardian, applied
/// `ADMIN_ACTION_TIMELOCK_SECS` after it is proposed and within the apply window.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub enum CrucibleChange {
    /// Fields left `None` keep their value.
    Settings {
        keeper: Option<Pubkey>,
        epoch_duration_secs: Option<i64>,
        claim_window_secs: Option<i64>,
    },
    /// Lets another program's CPI signer deposit.
    AddSource(Pubkey),
    /// The zero key removes the guardian.
    Guardian(Pubkey),
}

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub struct PendingCrucibleChange {
    pub change: CrucibleChange,
    pub proposed_at: i64,
}

impl CrucibleState {
    /// The admin, or the guardian when one is set.
    pub fn may_veto(&self, key: &Pubkey) -> bool {
        *key == self.admin || (self.guardian != Pubkey::default() && *key == self.guardian)
    }

    /// Applies `change` to the state, checking it as it would become; on error the caller
    /// discards the state (proposals check a copy).
    pub fn apply(&mut self, change: &CrucibleChange) -> Result<()> {
        match *change {
            CrucibleChange::Settings {
                keeper,
                epoch_duration_secs,
                claim_window_secs,
            } => {
                if let Some(keeper) = keeper {
                    self.keeper = keeper;
                }
                self.epoch_duration_secs = epoch_duration_secs.unwrap_or(self.epoch_duration_secs);
                self.claim_window_secs = claim_window_secs.unwrap_or(self.claim_window_secs);
                crate::instructions::initialize::check_durations(
                    self.epoch_duration_secs,
                    self.claim_window_secs,
                )?;
            }
            CrucibleChange::AddSource(source) => self.set_authorized(source, true)?,
            CrucibleChange::Guardian(guardian) => self.guardian = guardian,
        }
        self.check_roles()
    }

    /// The roles stay three keys: the keeper posts roots and the admin and the guardian veto
    /// them, so a keeper that is also a vetoing key could post a root paying itself that nobody
    /// else may stop. Checked at initialisation, at each settings change and at an admin
    /// rotation.
    pub fn check_roles(&self) -> Result<()> {
        require_keys_neq!(self.keeper, Pubkey::default(), CrucibleError::ZeroKey);
        require_keys_neq!(self.keeper, self.admin, CrucibleError::KeeperMayVeto);
        if self.guardian != Pubkey::default() {
            require_keys_neq!(self.guardian, self.admin, CrucibleError::GuardianIsAdmin);
            require_keys_neq!(self.guardian, self.keeper, CrucibleError::KeeperMayVeto);
        }
        Ok(())
    }

    pub fn is_authorized(&self, source: &Pubkey) -> bool {
        *source != Pubkey::default() && self.authorized_sources.contains(source)
    }

    /// Adds or removes `source`; adding twice or removing an absent key changes nothing.
    pub fn set_authorized(&mut self, source: Pubkey, allowed: bool) -> Result<()> {
        require_keys_neq!(source, Pubkey::default(), CrucibleError::InvalidSource);
        let present = self.authorized_sources.iter().position(|s| *s == source);
        match (allowed, present) {
            (true, None) => {
                let free = self
                    .authorized_sources
                    .iter()
                    .position(|s| *s == Pubkey::default())
                    .ok_or(CrucibleError::TooManySources)?;
                self.authorized_sources[free] = source;
            }
            (false, Some(index)) => self.authorized_sources[index] = Pubkey::default(),
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(admin: Pubkey, keeper: Pubkey, guardian: Pubkey) -> CrucibleState {
        CrucibleState {
            version: CrucibleStateVersion::CURRENT,
            admin,
            keeper,
            authorized_sources: [Pubkey::default(); MAX_AUTHORIZED_SOURCES],
            epoch_duration_secs: 0,
            claim_window_secs: 0,
            bump: 0,
            pending_admin: None,
            guardian,
            pending_change: None,
        }
    }

    /// What `initialize` checks (the program-test harness initialises once, with three keys).
    #[test]
    fn the_roles_are_three_keys() {
        let (a, k, g, none) = (
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::default(),
        );
        assert!(state(a, k, g).check_roles().is_ok());
        assert!(state(a, k, none).check_roles().is_ok());
        let refused = |s: CrucibleState, error: CrucibleError| {
            assert_eq!(s.check_roles().unwrap_err(), error.into());
        };
        refused(state(a, a, none), CrucibleError::KeeperMayVeto);
        refused(state(a, none, none), CrucibleError::ZeroKey);
        refused(state(a, k, k), CrucibleError::KeeperMayVeto);
        refused(state(a, k, a), CrucibleError::GuardianIsAdmin);
    }
}
