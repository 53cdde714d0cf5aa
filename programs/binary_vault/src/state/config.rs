use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::BinaryError;

/// Economic and oracle settings (`binary_config`). Markets copy the economic ones at creation,
/// so a change never alters the terms of a market that already holds money.
#[account]
#[derive(InitSpace, Debug)]
pub struct Config {
    /// Share of a Yield market's losing side that is forfeited (losers keep the rest).
    pub capital_loss_bps: u16,
    /// Share of the forfeit sent to crucible_pool; the remainder goes to the winners.
    pub crucible_share_bps: u16,
    /// Votes on one side needed to propose that outcome.
    pub oracle_threshold: u8,
    pub oracle_count: u8,
    /// Listed oracles in `oracles[..oracle_count]`; the rest are zero keys.
    pub oracles: [Pubkey; MAX_ORACLES],
    /// Payout hold after an outcome is proposed; also the dispute window.
    pub resolution_timelock_secs: i64,
    /// After `deadline` + this with no proposed outcome, anyone may trigger a refund.
    pub max_resolution_delay_secs: i64,
    pub dispute_bond_lamports: u64,
    pub treasury: Pubkey,
    /// Backing minimum of SPL markets, in the mint's base units.
    pub min_backing_spl: u64,
    pub bump: u8,
}

impl Config {
    pub fn listed_oracles(&self) -> &[Pubkey] {
        &self.oracles[..self.oracle_count as usize]
    }

    pub fn is_oracle(&self, key: &Pubkey) -> bool {
        self.listed_oracles().contains(key)
    }
}

impl Config {
    /// Replaces the oracle set: 1 to 5 distinct non-zero keys and a threshold within the set.
    pub fn set_oracles(&mut self, oracles: &[Pubkey], threshold: u8) -> Result<()> {
        require!(
            vault_common::oracle_set_is_valid(oracles, threshold, MAX_ORACLES),
            BinaryError::InvalidOracleSet
        );
        self.oracles = [Pubkey::default(); MAX_ORACLES];
        self.oracles[..oracles.len()].copy_from_slice(oracles);
        self.oracle_count = oracles.len() as u8;
        self.oracle_threshold = threshold;
        Ok(())
    }

    /// Checks every bounded field; called after any change.
    pub fn validate(&self) -> Result<()> {
        require!(
            self.capital_loss_bps as u64 <= vault_common::BPS_DENOMINATOR
                && self.crucible_share_bps as u64 <= vault_common::BPS_DENOMINATOR,
            BinaryError::InvalidBps
        );
        require!(
            (MIN_RESOLUTION_TIMELOCK_SECS..=MAX_RESOLUTION_TIMELOCK_SECS)
                .contains(&self.resolution_timelock_secs)
                && (MIN_RESOLUTION_DELAY_SECS..=MAX_RESOLUTION_DELAY_SECS)
                    .contains(&self.max_resolution_delay_secs),
            BinaryError::InvalidDuration
        );
        require!(
            self.min_backing_spl > 0 && self.dispute_bond_lamports > 0,
            BinaryError::ZeroAmount
        );
        require_keys_neq!(self.treasury, Pubkey::default(), BinaryError::WrongTreasury);
        Ok(())
    }
}
