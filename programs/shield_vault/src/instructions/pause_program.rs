use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::ShieldPauseChanged;
use crate::state::ShieldProgramState;

/// Emergency stop: an oracle or the admin may pause (for instance when an exploit is under
/// way, so nobody can back EXPLOIT on known news); only the admin may resume.
#[event_cpi]
#[derive(Accounts)]
pub struct PauseProgram<'info> {
    #[account(constraint = program_state.is_oracle_or_admin(&authority.key()) @ ShieldError::NotOracleOrAdmin)]
    pub authority: Signer<'info>,
    #[account(mut, seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ShieldProgramState>,
}

pub fn handler(ctx: Context<PauseProgram>, paused: bool) -> Result<()> {
    let state = &mut ctx.accounts.program_state;
    if !paused {
        require_keys_eq!(
            ctx.accounts.authority.key(),
            state.admin,
            ShieldError::NotAdmin
        );
    }
    state.paused = paused;
    emit_cpi!(ShieldPauseChanged {
        paused,
        by: ctx.accounts.authority.key(),
    });
    Ok(())
}
