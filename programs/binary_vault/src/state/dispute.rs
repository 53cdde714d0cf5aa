use anchor_lang::prelude::*;

/// What `resolve_dispute` does: anyone but the admin and the market's oracles opens (posting the
/// bond) during the hold; the admin settles by upholding the proposed outcome, or by overturning
/// it or sending the market to refund, both no sooner than [`ruling_from`]; anyone lapses a
/// dispute the admin left unruled until the resolution delay after the hold's end
/// ([`lapses_at`]), which then counts as upheld.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub enum DisputeAction {
    Open,
    Uphold,
    Overturn,
    Refund,
    Lapse,
}

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, PartialEq, Eq, InitSpace, Debug)]
pub enum DisputeStatus {
    Open,
    /// Outcome stood; the bond is forfeit to the treasury (see `Dispute::bond_forwarded`).
    Upheld,
    /// Outcome flipped; the bond went back to the disputer.
    Overturned,
    /// Market refunds everyone; the bond went back to the disputer.
    Refunded,
    /// Left unruled past the delay: the outcome stood and the bond is forfeit to the treasury.
    Lapsed,
}

impl DisputeStatus {
    /// Whether the proposed outcome was ruled to stand (by the admin or by silence), after which
    /// it cannot be disputed again.
    pub fn outcome_stood(self) -> bool {
        matches!(self, DisputeStatus::Upheld | DisputeStatus::Lapsed)
    }
}

vault_common::layout_version!(
    /// The layout version of `Dispute` accounts (see `vault_common::layout`).
    DisputeVersion = 2 for "Dispute"
);

/// The market's dispute record (`binary_dispute` + market_id), reused if a later hold is
/// disputed again. While open it holds the bond lamports; a forfeit bond stays in it until
/// `forward_dispute_bond` sends it to the treasury.
#[account]
#[derive(InitSpace, Debug)]
pub struct Dispute {
    /// First: an account in another layout is refused before any field is misread.
    pub version: DisputeVersion,
    pub market_id: [u8; 32],
    pub disputer: Pubkey,
    pub status: DisputeStatus,
    pub bond_lamports: u64,
    pub opened_at: i64,
    pub settled_at: i64,
    /// How many disputes this market has seen.
    pub dispute_count: u32,
    pub bump: u8,
    /// Whether a forfeit bond (upheld or lapsed) has left for the treasury. The rulings never
    /// pay the treasury themselves, so a treasury the runtime cannot credit (a sysvar or a
    /// builtin program, which it keeps read-only) can delay only its own bond, never a ruling.
    pub bond_forwarded: bool,
}

/// From when the admin may rule against the standing outcome (overturn, refund) of a dispute
/// opened at `opened_at`: `MIN_DISPUTE_RULING_DELAY_SECS` later. Upholding needs no wait.
pub fn ruling_from(opened_at: i64) -> Option<i64> {
    opened_at.checked_add(crate::constants::MIN_DISPUTE_RULING_DELAY_SECS)
}

/// When anyone may lapse a dispute opened at `opened_at` on a market whose hold ends at
/// `hold_ends_at`: the market's resolution delay after the hold's end (never counted from an
/// earlier opening, so a dispute opened early in the hold gets the same ruling time).
pub fn lapses_at(opened_at: i64, hold_ends_at: i64, max_resolution_delay_secs: i64) -> Option<i64> {
    opened_at
        .max(hold_ends_at)
        .checked_add(max_resolution_delay_secs)
}
