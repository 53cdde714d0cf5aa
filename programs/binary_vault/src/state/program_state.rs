use anchor_lang::prelude::*;

/// Roles and the pause switch (`binary_program_state`).
#[account]
#[derive(InitSpace, Debug)]
pub struct ProgramState {
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
