use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::SourceAuthorizationChanged;
use crate::state::CrucibleState;

/// Allows or forbids deposits signed by `source`, which should be another program's CPI signer
/// PDA: only that program can produce its signature.
#[event_cpi]
#[derive(Accounts)]
pub struct SetAuthorizedSource<'info> {
    pub admin: Signer<'info>,
    #[account(mut, seeds = [STATE_SEED], bump = state.bump, has_one = admin @ CrucibleError::NotAdmin)]
    pub state: Account<'info, CrucibleState>,
}

pub fn handler(ctx: Context<SetAuthorizedSource>, source: Pubkey, allowed: bool) -> Result<()> {
    ctx.accounts.state.set_authorized(source, allowed)?;
    emit_cpi!(SourceAuthorizationChanged { source, allowed });
    Ok(())
}
