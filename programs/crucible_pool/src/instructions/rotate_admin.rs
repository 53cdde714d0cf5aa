//! Two-step rotation of the admin key: the admin proposes, the successor accepts.

use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::{CrucibleAdminProposed, CrucibleAdminRotated};
use crate::state::CrucibleState;

#[event_cpi]
#[derive(Accounts)]
pub struct ProposeAdmin<'info> {
    pub admin: Signer<'info>,
    #[account(mut, seeds = [STATE_SEED], bump = state.bump, has_one = admin @ CrucibleError::NotAdmin)]
    pub state: Account<'info, CrucibleState>,
}

/// The admin names its successor (`None` withdraws the proposal); the role moves only when the
/// successor accepts, so a mistyped key cannot orphan the program.
pub fn propose(ctx: Context<ProposeAdmin>, new_admin: Option<Pubkey>) -> Result<()> {
    if let Some(key) = new_admin {
        require_keys_neq!(key, Pubkey::default(), CrucibleError::ZeroKey);
    }
    ctx.accounts.state.pending_admin = new_admin;
    emit_cpi!(CrucibleAdminProposed { new_admin });
    Ok(())
}

#[event_cpi]
#[derive(Accounts)]
pub struct AcceptAdmin<'info> {
    pub new_admin: Signer<'info>,
    #[account(
        mut,
        seeds = [STATE_SEED],
        bump = state.bump,
        constraint = state.pending_admin == Some(new_admin.key()) @ CrucibleError::NotPendingAdmin,
    )]
    pub state: Account<'info, CrucibleState>,
}

/// The proposed successor takes the admin role.
pub fn accept(ctx: Context<AcceptAdmin>) -> Result<()> {
    let state = &mut ctx.accounts.state;
    let previous = state.admin;
    state.admin = ctx.accounts.new_admin.key();
    state.pending_admin = None;
    // The successor must not be the keeper or the guardian: one key would hold two roles.
    state.check_roles()?;
    emit_cpi!(CrucibleAdminRotated {
        previous,
        admin: state.admin,
    });
    Ok(())
}
