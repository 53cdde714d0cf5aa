use anchor_lang::prelude::*;

vault_common::layout_version!(
    /// The layout version of `ProgramState` accounts (see `vault_common::layout`).
    ProgramStateVersion = 1 for "ProgramState"
);

/// Roles and the pause switch (`binary_program_state`).
#[account]
#[derive(InitSpace, Debug)]
pub struct ProgramState {
    /// First: an account in another layout is refused before any field is misread.
    pub version: ProgramStateVersion,
    pub admin: Pubkey,
    /// Refuses new markets and backings; claims, refunds and disputes stay open.
    pub paused: bool,
    pub market_count: u64,
    /// Bump of the `binary_cpi_auth` signer PDA, found once at initialisation.
    pub cpi_authority_bump: u8,
    pub bump: u8,
    /// The admin's proposed successor, who must accept (`accept_admin`).
    pub pending_admin: Option<Pubkey>,
}
