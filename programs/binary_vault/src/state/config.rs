use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::BinaryError;

/// An oracle set: `oracles[..count]` listed, the rest zero keys; `threshold` votes on one side
/// propose that outcome.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub struct OracleSet {
    pub oracles: [Pubkey; MAX_ORACLES],
    pub count: u8,
    pub threshold: u8,
}

impl OracleSet {
    /// 1 to 5 distinct non-zero keys and a threshold within the set.
    pub fn new(oracles: &[Pubkey], threshold: u8) -> Result<Self> {
        require!(
            vault_common::oracle_set_is_valid(oracles, threshold, MAX_ORACLES),
            BinaryError::InvalidOracleSet
        );
        let mut keys = [Pubkey::default(); MAX_ORACLES];
        keys[..oracles.len()].copy_from_slice(oracles);
        Ok(OracleSet {
            oracles: keys,
            count: oracles.len() as u8,
            threshold,
        })
    }

    pub fn listed(&self) -> &[Pubkey] {
        &self.oracles[..(self.count as usize).min(MAX_ORACLES)]
    }

    pub fn contains(&self, key: &Pubkey) -> bool {
        self.listed().contains(key)
    }

    /// Whether the set is one `new` accepts, with nothing beyond `count`.
    pub fn is_valid(&self) -> bool {
        (self.count as usize) <= MAX_ORACLES
            && self.oracles[self.count as usize..]
                .iter()
                .all(|k| *k == Pubkey::default())
            && vault_common::oracle_set_is_valid(self.listed(), self.threshold, MAX_ORACLES)
    }
}

/// Fields left `None` keep their value. Changes apply to markets created afterwards; existing
/// markets keep the terms and the oracle set they were created with.
#[derive(
    AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug, Default,
)]
pub struct ConfigUpdate {
    pub capital_loss_bps: Option<u16>,
    pub crucible_share_bps: Option<u16>,
    pub resolution_timelock_secs: Option<i64>,
    pub max_resolution_delay_secs: Option<i64>,
    pub dispute_bond_lamports: Option<u64>,
    pub treasury: Option<Pubkey>,
    pub oracle_set: Option<OracleSet>,
}

/// A proposed change and when it was proposed; it applies `ADMIN_ACTION_TIMELOCK_SECS` later.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub struct PendingConfigChange {
    pub update: ConfigUpdate,
    pub proposed_at: i64,
}

vault_common::layout_version!(
    /// The layout version of `Config` accounts (see `vault_common::layout`).
    ConfigVersion = 1 for "Config"
);

/// Economic and oracle settings (`binary_config`). Markets copy the economic ones at creation,
/// so a change never alters the terms of a market that already holds money.
#[account]
#[derive(InitSpace, Debug)]
pub struct Config {
    /// First: an account in another layout is refused before any field is misread.
    pub version: ConfigVersion,
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
    pub bump: u8,
    /// At most one change waits for the admin timelock.
    pub pending_change: Option<PendingConfigChange>,
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
    /// Replaces the oracle set (checked by `OracleSet::new`).
    pub fn set_oracles(&mut self, oracles: &[Pubkey], threshold: u8) -> Result<()> {
        self.set_oracle_set(OracleSet::new(oracles, threshold)?);
        Ok(())
    }

    pub fn oracle_set(&self) -> OracleSet {
        OracleSet {
            oracles: self.oracles,
            count: self.oracle_count,
            threshold: self.oracle_threshold,
        }
    }

    fn set_oracle_set(&mut self, set: OracleSet) {
        self.oracles = set.oracles;
        self.oracle_count = set.count;
        self.oracle_threshold = set.threshold;
    }

    /// Applies `update` and checks the result; on error nothing the caller keeps has changed
    /// (callers apply to a copy when proposing, and to the account only once it was checked).
    pub fn apply(&mut self, update: &ConfigUpdate) -> Result<()> {
        if let Some(v) = update.capital_loss_bps {
            self.capital_loss_bps = v;
        }
        if let Some(v) = update.crucible_share_bps {
            self.crucible_share_bps = v;
        }
        if let Some(v) = update.resolution_timelock_secs {
            self.resolution_timelock_secs = v;
        }
        if let Some(v) = update.max_resolution_delay_secs {
            self.max_resolution_delay_secs = v;
        }
        if let Some(v) = update.dispute_bond_lamports {
            self.dispute_bond_lamports = v;
        }
        if let Some(v) = update.treasury {
            self.treasury = v;
        }
        if let Some(set) = update.oracle_set {
            require!(set.is_valid(), BinaryError::InvalidOracleSet);
            self.set_oracle_set(set);
        }
        self.validate(Rent::get()?.minimum_balance(0))
    }

    /// Checks every bounded field; called after any change. `min_bond` is the rent-exempt
    /// minimum of an empty account.
    pub fn validate(&self, min_bond: u64) -> Result<()> {
        require!(
            self.capital_loss_bps <= MAX_CAPITAL_LOSS_BPS
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
            (min_bond..=MAX_DISPUTE_BOND_LAMPORTS).contains(&self.dispute_bond_lamports),
            BinaryError::InvalidDisputeBond
        );
        require_keys_neq!(self.treasury, Pubkey::default(), BinaryError::WrongTreasury);
        Ok(())
    }
}
