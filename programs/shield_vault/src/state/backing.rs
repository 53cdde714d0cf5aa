use anchor_lang::prelude::*;

use crate::state::ShieldSide;

vault_common::layout_version!(
    /// The layout version of `ShieldBacking` accounts (see `vault_common::layout`).
    ShieldBackingVersion = 1 for "ShieldBacking"
);

/// One wallet's position on one side of one shield (`shield_back` + protocol_id + backer +
/// side byte). Repeated backings on a side add up here.
#[account]
#[derive(InitSpace, Debug)]
pub struct ShieldBacking {
    /// First: an account in another layout is refused before any field is misread.
    pub version: ShieldBackingVersion,
    pub protocol_id: [u8; 32],
    pub backer: Pubkey,
    pub side: ShieldSide,
    /// Principal; payouts follow this raw amount.
    pub amount_lamports: u64,
    /// Yield shares minted at the side's price when backing.
    pub shares: u128,
    /// Amount-weighted discovery multiplier (20000 bps inside the first 20 % of the window,
    /// 10000 after); feeds conviction scoring only.
    pub multiplier_bps: u16,
    /// Principal backed inside the discovery window.
    pub discovery_lamports: u64,
    pub claimed: bool,
    pub principal_paid: u64,
    pub bonus_paid: u64,
    pub yield_paid: u64,
    pub first_backed_at: i64,
    pub last_backed_at: i64,
    pub bump: u8,
}
