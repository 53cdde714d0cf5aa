use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::SourceAuthorizationChanged;
use crate::instructions::update_settings::propose_on;
use crate::state::{CrucibleChange, CrucibleState};

/// Allowing a source (another program's CPI signer PDA: only that program can produce its
/// signature) is proposed and waits the admin timelock, like every change of who may move money
/// into the pool. Forbidding one takes effect at once: it only stops that program's deposits,
/// whose shares wait in its own vaults (binary_vault and shield_vault finalise and pay claims
/// without crucible_pool) until the source is allowed again, so a compromised source can be cut
/// off without a three-day wait and nobody's money is held by it.
#[event_cpi]
#[derive(Accounts)]
pub struct SetAuthorizedSource<'info> {
    pub admin: Signer<'info>,
    #[account(mut, seeds = [STATE_SEED], bump = state.bump, has_one = admin @ CrucibleError::NotAdmin)]
    pub state: Account<'info, CrucibleState>,
}

pub fn handler(ctx: Context<SetAuthorizedSource>, source: Pubkey, allowed: bool) -> Result<()> {
    if allowed {
        // Checked as it would apply (a zero key, a full list) before it is recorded.
        let event = propose_on(&mut ctx.accounts.state, CrucibleChange::AddSource(source))?;
        emit_cpi!(event);
        return Ok(());
    }
    ctx.accounts.state.set_authorized(source, false)?;
    emit_cpi!(SourceAuthorizationChanged {
        source,
        allowed: false,
    });
    Ok(())
}
