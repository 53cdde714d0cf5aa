use anchor_lang::prelude::*;
use vault_common::SafeMath;

use crate::constants::*;

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub enum ShieldKind {
    /// The protected protocol takes part: it receives 50 % of the SAFE principal on an exploit.
    Partnership,
    Community,
}

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub enum ShieldSide {
    Safe,
    Exploit,
}

impl ShieldSide {
    /// The side byte of backing seeds: 0 SAFE, 1 EXPLOIT.
    pub fn seed_byte(self) -> u8 {
        self as u8
    }

    pub fn opposite(self) -> ShieldSide {
        match self {
            ShieldSide::Safe => ShieldSide::Exploit,
            ShieldSide::Exploit => ShieldSide::Safe,
        }
    }

    pub fn vault_seed(self) -> &'static [u8] {
        match self {
            ShieldSide::Safe => SAFE_VAULT_SEED,
            ShieldSide::Exploit => EXPLOIT_VAULT_SEED,
        }
    }
}

/// An oracle's vote: a side, or that the coverage cannot be resolved. Encoded as `ShieldSide`
/// for the two sides (0 SAFE, 1 EXPLOIT), so a side vote's bytes are what they always were.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub enum ShieldVerdict {
    Safe,
    Exploit,
    /// Counted like a side: at the threshold the coverage refunds everyone.
    Unresolvable,
}

impl From<ShieldSide> for ShieldVerdict {
    fn from(side: ShieldSide) -> Self {
        match side {
            ShieldSide::Safe => ShieldVerdict::Safe,
            ShieldSide::Exploit => ShieldVerdict::Exploit,
        }
    }
}

impl ShieldVerdict {
    pub fn side(self) -> Option<ShieldSide> {
        match self {
            ShieldVerdict::Safe => Some(ShieldSide::Safe),
            ShieldVerdict::Exploit => Some(ShieldSide::Exploit),
            ShieldVerdict::Unresolvable => None,
        }
    }
}

/// The oracles of one coverage, copied from the program's set when it opens: only they vote on
/// it, against this threshold, so a later change of the program's set cannot decide a coverage
/// that already holds money, nor add votes on top of another set's tally.
#[derive(
    AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug, Default,
)]
pub struct CoverageOracles {
    pub oracles: [Pubkey; MAX_ORACLES],
    pub count: u8,
    pub threshold: u8,
}

impl CoverageOracles {
    pub fn listed(&self) -> &[Pubkey] {
        &self.oracles[..(self.count as usize).min(MAX_ORACLES)]
    }

    pub fn contains(&self, key: &Pubkey) -> bool {
        self.listed().contains(key)
    }
}

/// Who a resolved coverage's `forward_payout` pays from the losing vault.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub enum PayoutRecipient {
    /// The configured treasury: `treasury_payout`.
    Treasury,
    /// A partnership's protocol wallet: `protocol_payout`.
    Protocol,
}

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub enum CoverageStatus {
    /// Open for backing until `period_end`, then for oracle votes.
    Active,
    /// Finalised: splits executed, claims open.
    Resolved,
    /// The oracles' threshold found it unresolvable, the admin or anyone refunded it after its
    /// delay, or nobody backed the winning side: everyone gets principal (and yield) back.
    Refunding,
}

/// One side's books. Spec 4.14's `{safe,exploit}_total_assets`, `_shares_total` and
/// `_yield_paid` are `safe.total_assets`, `safe.shares_total`, `safe.yield_paid`, and so on.
#[derive(
    AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug, Default,
)]
pub struct SidePool {
    /// Principal backed on this side.
    pub principal: u64,
    /// Assets behind the side's shares: deposits plus booked yield, less what claims redeemed.
    /// Booked here, never read from the vault: lamports sent to the vault count once booked,
    /// as yield of the shares already there.
    pub total_assets: u64,
    pub shares_total: u128,
    /// Realised yield booked by `harvest_yield`, or by a backing before it mints.
    pub yield_harvested: u64,
    pub yield_paid: u64,
    /// Lamports the side vault must hold above its rent reserve.
    pub held: u64,
    pub backers: u32,
}

impl SidePool {
    pub fn yield_unpaid(&self) -> u64 {
        self.yield_harvested.saturating_sub(self.yield_paid)
    }

    /// Lamports in the side's vault above its rent `reserve` and what is booked: yield that has
    /// arrived and is not booked yet. `None` if the vault holds less than is booked.
    pub fn unbooked(&self, vault_balance: u64, reserve: u64) -> Option<u64> {
        vault_balance.checked_sub(reserve.checked_add(self.held)?)
    }

    /// Books `surplus` as realised yield of the side's current shares.
    pub fn book_yield(&mut self, surplus: u64) -> Result<()> {
        self.total_assets = self.total_assets.safe_add(surplus)?;
        self.yield_harvested = self.yield_harvested.safe_add(surplus)?;
        self.held = self.held.safe_add(surplus)?;
        Ok(())
    }
}

vault_common::layout_version!(
    /// The layout version of `Coverage` accounts (see `vault_common::layout`).
    CoverageVersion = 2 for "Coverage"
);

/// One coverage period of one protocol (`shield_state` + protocol_id).
#[account]
#[derive(InitSpace, Debug)]
pub struct Coverage {
    /// First: an account in another layout is refused before any field is misread.
    pub version: CoverageVersion,
    pub protocol_id: [u8; 32],
    pub kind: ShieldKind,
    /// The protected protocol's wallet (zero key on a community shield).
    pub protocol_wallet: Pubkey,
    pub period_days: u16,
    pub period_start: i64,
    pub period_end: i64,
    pub fee_lamports: u64,
    pub status: CoverageStatus,
    /// Proposed when the vote threshold is met; final once finalised.
    pub outcome: Option<ShieldSide>,
    pub safe_votes: u8,
    pub exploit_votes: u8,
    pub outcome_proposed_at: i64,
    pub finalized_at: i64,
    pub safe: SidePool,
    pub exploit: SidePool,
    /// Set at finalisation: the losing principal's split.
    pub winner_bonus_pool: u64,
    pub protocol_payout: u64,
    pub treasury_payout: u64,
    pub seam_payout: u64,
    /// Paid by claims: principal back, share of the losing principal.
    pub principal_returned: u64,
    pub bonus_paid: u64,
    pub claims_count: u32,
    pub bump: u8,
    pub safe_vault_bump: u8,
    pub exploit_vault_bump: u8,
    /// Whether `seam_payout` has left the losing vault for crucible_pool. Until then it waits
    /// there (counted in the losing side's `held`), so finalisation never depends on it.
    pub seam_forwarded: bool,
    /// Votes that the coverage cannot be resolved; at the threshold it refunds.
    pub unresolvable_votes: u8,
    /// Who votes on this coverage, copied at open.
    pub oracles: CoverageOracles,
    /// Whether `treasury_payout`, and a partnership's `protocol_payout`, have left the losing
    /// vault (`forward_payout`). Like the seam share they wait there, counted in the losing
    /// side's `held`, so a recipient the runtime cannot credit (a sysvar or a builtin program,
    /// which it keeps read-only) delays only its own payout, never the finalisation and the
    /// winners' claims.
    pub treasury_forwarded: bool,
    pub protocol_forwarded: bool,
}

impl Coverage {
    pub fn pool(&self, side: ShieldSide) -> &SidePool {
        match side {
            ShieldSide::Safe => &self.safe,
            ShieldSide::Exploit => &self.exploit,
        }
    }

    pub fn pool_mut(&mut self, side: ShieldSide) -> &mut SidePool {
        match side {
            ShieldSide::Safe => &mut self.safe,
            ShieldSide::Exploit => &mut self.exploit,
        }
    }

    /// A resolved coverage's losing side and the address of its vault, which holds the payouts
    /// still to forward.
    pub fn loser_vault(&self) -> Result<(ShieldSide, Pubkey)> {
        let loser = self
            .outcome
            .ok_or(crate::error::ShieldError::ThresholdNotMet)?
            .opposite();
        let address = Pubkey::create_program_address(
            &[
                loser.vault_seed(),
                &self.protocol_id,
                &[self.vault_bump(loser)],
            ],
            &crate::ID,
        )
        .map_err(|_| ProgramError::InvalidSeeds)?;
        Ok((loser, address))
    }

    pub fn vault_bump(&self, side: ShieldSide) -> u8 {
        match side {
            ShieldSide::Safe => self.safe_vault_bump,
            ShieldSide::Exploit => self.exploit_vault_bump,
        }
    }

    /// End of the discovery window: the first `DISCOVERY_WINDOW_PCT` % of the period.
    pub fn discovery_ends_at(&self) -> Option<i64> {
        let length = self.period_end.checked_sub(self.period_start)?;
        self.period_start
            .checked_add(length.checked_mul(DISCOVERY_WINDOW_PCT)? / 100)
    }
}
