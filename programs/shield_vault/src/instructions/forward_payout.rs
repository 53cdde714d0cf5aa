use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::ShieldError;
use crate::events::PayoutForwarded;
use crate::state::{Coverage, CoverageStatus, PayoutRecipient, ShieldProgramState};

/// Sends a resolved coverage's treasury share, or a partnership's protocol share, from the
/// losing vault to its recipient; anyone, once each. Finalisation leaves both in the vault
/// (counted as held), so a recipient the runtime cannot credit (a sysvar or a builtin program,
/// which it keeps read-only) holds up only this call, never the winners' claims; it can be
/// repeated once the recipient can take it.
#[event_cpi]
#[derive(Accounts)]
pub struct ForwardPayout<'info> {
    #[account(seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ShieldProgramState>,
    #[account(mut, seeds = [SHIELD_STATE_SEED, coverage.protocol_id.as_ref()], bump = coverage.bump)]
    pub coverage: Account<'info, Coverage>,
    /// The losing side's vault (checked against the outcome in the handler).
    #[account(mut)]
    pub loser_vault: SystemAccount<'info>,
    /// CHECK: the configured treasury or the coverage's protocol wallet, as `recipient` says
    /// (checked in the handler).
    #[account(mut)]
    pub recipient_wallet: UncheckedAccount<'info>,
    pub system_program: Program<'info, System>,
}

pub fn handler(mut ctx: Context<ForwardPayout>, recipient: PayoutRecipient) -> Result<()> {
    let accounts = &mut ctx.accounts;
    // Through the account's deref once, so its fields borrow apart.
    let coverage: &mut Coverage = &mut accounts.coverage;
    require!(
        coverage.status == CoverageStatus::Resolved,
        ShieldError::NotResolved
    );
    let (amount, forwarded, wallet, wrong_wallet) = match recipient {
        PayoutRecipient::Treasury => (
            coverage.treasury_payout,
            &mut coverage.treasury_forwarded,
            accounts.program_state.treasury,
            ShieldError::WrongTreasury,
        ),
        PayoutRecipient::Protocol => (
            coverage.protocol_payout,
            &mut coverage.protocol_forwarded,
            coverage.protocol_wallet,
            ShieldError::WrongProtocolWallet,
        ),
    };
    require!(amount > 0 && !*forwarded, ShieldError::NoPayoutWaiting);
    require_keys_eq!(accounts.recipient_wallet.key(), wallet, wrong_wallet);
    *forwarded = true;
    let (loser, expected) = coverage.loser_vault()?;
    require_keys_eq!(
        accounts.loser_vault.key(),
        expected,
        ShieldError::WrongVault
    );
    let pool = coverage.pool_mut(loser);
    pool.held = pool.held.safe_sub(amount)?;
    let protocol_id = coverage.protocol_id;
    let loser_bump = [coverage.vault_bump(loser)];
    vault_common::transfer_sol(
        accounts.loser_vault.to_account_info(),
        accounts.recipient_wallet.to_account_info(),
        amount,
        &[&[loser.vault_seed(), &protocol_id, &loser_bump]],
    )?;
    emit_cpi!(PayoutForwarded {
        protocol_id,
        recipient,
        wallet,
        amount,
    });
    Ok(())
}
