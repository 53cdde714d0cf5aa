use anchor_lang::prelude::*;

use crate::constants::MAX_AUTHORIZED_SOURCES;
use crate::error::CrucibleError;

/// Program-wide settings (`crucible_state`).
#[account]
#[derive(InitSpace, Debug)]
pub struct CrucibleState {
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
}

impl CrucibleState {
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
