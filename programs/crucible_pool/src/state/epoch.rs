use anchor_lang::prelude::*;

use vault_common::SafeMath;

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub enum EpochStatus {
    /// Receiving deposits and rollovers.
    Open,
    /// Root posted; wallets claim with proofs from `claimable_at` until `claim_deadline`.
    Closed,
    /// What was not claimed moved into a later epoch.
    RolledOver,
}

vault_common::layout_version!(
    /// The layout version of `Epoch` accounts (see `vault_common::layout`).
    EpochVersion = 1 for "Epoch"
);

/// One epoch of one asset (`crucible_epoch` + mint + epoch number LE).
#[account]
#[derive(InitSpace, Debug)]
pub struct Epoch {
    /// First: an account in another layout is refused before any field is misread.
    pub version: EpochVersion,
    pub mint: Pubkey,
    pub epoch: u64,
    pub status: EpochStatus,
    pub started_at: i64,
    pub closed_at: i64,
    pub claim_deadline: i64,
    /// Deposits from authorised sources during this epoch.
    pub deposited: u64,
    /// Carried in from earlier epochs (undistributed remainder and unclaimed amounts).
    pub rolled_in: u64,
    pub conviction_pool: u64,
    pub creator_pool: u64,
    pub merkle_root: [u8; 32],
    pub claimed: u64,
    pub claims: u32,
    /// Unclaimed amount moved on after the claim window.
    pub rolled_out: u64,
    pub bump: u8,
    /// End of the root's challenge delay: claims open here, and the admin's veto closes.
    pub claimable_at: i64,
}

impl Epoch {
    /// A new epoch receiving deposits from `now`, starting with `rolled_in` carried from earlier.
    pub fn open(mint: Pubkey, epoch: u64, rolled_in: u64, now: i64, bump: u8) -> Self {
        Epoch {
            version: crate::state::EpochVersion::CURRENT,
            mint,
            epoch,
            status: EpochStatus::Open,
            started_at: now,
            closed_at: 0,
            claim_deadline: 0,
            deposited: 0,
            rolled_in,
            conviction_pool: 0,
            creator_pool: 0,
            merkle_root: [0; 32],
            claimed: 0,
            claims: 0,
            rolled_out: 0,
            bump,
            claimable_at: 0,
        }
    }

    /// Everything this epoch holds for distribution.
    pub fn available(&self) -> Result<u64> {
        self.deposited.safe_add(self.rolled_in)
    }

    /// What the posted root distributes.
    pub fn distributable(&self) -> Result<u64> {
        self.conviction_pool.safe_add(self.creator_pool)
    }

    /// Moves what this closed epoch still owes into `into` (an open epoch): it becomes part of
    /// the next distribution. Returns the amount moved.
    pub fn roll_into(&mut self, into: &mut Epoch) -> Result<u64> {
        let amount = self.unclaimed()?;
        self.rolled_out = amount;
        self.status = EpochStatus::RolledOver;
        into.rolled_in = into.rolled_in.safe_add(amount)?;
        Ok(amount)
    }

    /// What is still owed to wallets of a closed epoch.
    pub fn unclaimed(&self) -> Result<u64> {
        self.distributable()?.safe_sub(self.claimed)
    }
}
