use anchor_lang::prelude::*;

use crate::constants::*;
use crate::error::CrucibleError;
use crate::events::CrucibleSettingsUpdated;
use crate::instructions::initialize::check_durations;
use crate::state::CrucibleState;

/// Fields left `None` keep their value. New durations apply to epochs closed from now on.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, Default)]
pub struct UpdateSettingsArgs {
    pub keeper: Option<Pubkey>,
    pub epoch_duration_secs: Option<i64>,
    pub claim_window_secs: Option<i64>,
}

#[event_cpi]
#[derive(Accounts)]
pub struct UpdateSettings<'info> {
    pub admin: Signer<'info>,
    #[account(mut, seeds = [STATE_SEED], bump = state.bump, has_one = admin @ CrucibleError::NotAdmin)]
    pub state: Account<'info, CrucibleState>,
}

pub fn handler(ctx: Context<UpdateSettings>, args: UpdateSettingsArgs) -> Result<()> {
    let state = &mut ctx.accounts.state;
    let epoch_duration_secs = args
        .epoch_duration_secs
        .unwrap_or(state.epoch_duration_secs);
    let claim_window_secs = args.claim_window_secs.unwrap_or(state.claim_window_secs);
    check_durations(epoch_duration_secs, claim_window_secs)?;
    state.keeper = args.keeper.unwrap_or(state.keeper);
    state.epoch_duration_secs = epoch_duration_secs;
    state.claim_window_secs = claim_window_secs;
    emit_cpi!(CrucibleSettingsUpdated {
        keeper: state.keeper,
        epoch_duration_secs,
        claim_window_secs,
    });
    Ok(())
}
