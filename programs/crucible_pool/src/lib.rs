//! crucible_pool: receives binary_vault's forfeits and shield_vault's seam share, and pays them
//! out per epoch (the Echo Pool of spec 2.6).
//!
//! Money enters only from authorised sources (other programs' CPI signer PDAs), is booked to the
//! asset's open epoch, and leaves only through Merkle-proven claims of a closed epoch. What an
//! epoch does not distribute, or what its wallets leave unclaimed past the claim window, rolls
//! into a later epoch, so the vault always equals the sum of the epochs' open balances (plus its
//! rent reserve).

use anchor_lang::prelude::*;

pub mod constants;
pub mod error;
pub mod events;
pub mod instructions;
pub mod merkle;
pub mod state;

use instructions::*;

declare_id!("6szCdBan3PkPCVbPoPSP5jgNArhqpqLRAsajeWevLjnW");

/// The key that stands for native SOL in per-mint seeds and records.
pub const SOL_MINT: Pubkey = Pubkey::new_from_array([0; 32]);

#[program]
pub mod crucible_pool {
    use super::*;

    /// Creates the program state; upgrade authority only.
    pub fn initialize(ctx: Context<Initialize>, args: InitializeArgs) -> Result<()> {
        instructions::initialize::handler(ctx, args)
    }

    /// Proposes a change of keeper and epoch timing, applied after the admin timelock; admin
    /// only.
    pub fn update_settings(ctx: Context<UpdateSettings>, args: UpdateSettingsArgs) -> Result<()> {
        instructions::update_settings::handler(ctx, args)
    }

    /// Proposes a guardian (a second key that may veto roots; the zero key removes it), applied
    /// after the admin timelock; admin only.
    pub fn set_guardian(ctx: Context<UpdateSettings>, guardian: Pubkey) -> Result<()> {
        instructions::update_settings::propose(ctx, state::CrucibleChange::Guardian(guardian))
    }

    /// Applies the pending settings change after the admin timelock, within its apply window;
    /// admin only.
    pub fn apply_settings_change(ctx: Context<UpdateSettings>) -> Result<()> {
        instructions::update_settings::apply(ctx)
    }

    /// Drops the pending settings change; admin only.
    pub fn cancel_settings_change(ctx: Context<UpdateSettings>) -> Result<()> {
        instructions::update_settings::cancel(ctx)
    }

    /// Names the admin's successor (or withdraws the proposal); admin only.
    pub fn propose_admin(ctx: Context<ProposeAdmin>, new_admin: Option<Pubkey>) -> Result<()> {
        instructions::rotate_admin::propose(ctx, new_admin)
    }

    /// The proposed successor takes the admin role.
    pub fn accept_admin(ctx: Context<AcceptAdmin>) -> Result<()> {
        instructions::rotate_admin::accept(ctx)
    }

    /// Proposes allowing a depositing program's CPI signer (applied after the admin timelock),
    /// or forbids one at once; admin only.
    pub fn set_authorized_source(
        ctx: Context<SetAuthorizedSource>,
        source: Pubkey,
        allowed: bool,
    ) -> Result<()> {
        instructions::set_authorized_source::handler(ctx, source, allowed)
    }

    /// Opens SOL accounting (asset pool, epoch 0, vault); admin only.
    pub fn init_sol_pool(ctx: Context<InitSolPool>) -> Result<()> {
        instructions::init_sol_pool::handler(ctx)
    }

    /// Opens accounting for an SPL mint; admin only.
    pub fn init_token_pool(ctx: Context<InitTokenPool>) -> Result<()> {
        instructions::init_token_pool::handler(ctx)
    }

    /// Lamports from an authorised source into the current epoch.
    pub fn deposit_sol(ctx: Context<DepositSol>, amount: u64) -> Result<()> {
        instructions::deposit_sol::handler(ctx, amount)
    }

    /// Tokens from an authorised source into the current epoch.
    pub fn deposit_spl(ctx: Context<DepositSpl>, amount: u64) -> Result<()> {
        instructions::deposit_spl::handler(ctx, amount)
    }

    /// Posts an epoch's distribution root and opens the next epoch; keeper only.
    pub fn close_epoch(ctx: Context<CloseEpoch>, args: CloseEpochArgs) -> Result<()> {
        instructions::close_epoch::handler(ctx, args)
    }

    /// A wallet's SOL share of a closed epoch, with its Merkle proof; once per wallet.
    pub fn claim_sol(ctx: Context<ClaimSol>, amount: u64, proof: Vec<[u8; 32]>) -> Result<()> {
        instructions::claim_sol::handler(ctx, amount, proof)
    }

    /// A wallet's token share of a closed epoch, with its Merkle proof; once per wallet.
    pub fn claim_spl(ctx: Context<ClaimSpl>, amount: u64, proof: Vec<[u8; 32]>) -> Result<()> {
        instructions::claim_spl::handler(ctx, amount, proof)
    }

    /// Returns a claim receipt's rent to its wallet once the epoch has rolled over.
    pub fn close_claim_receipt(ctx: Context<CloseClaimReceipt>) -> Result<()> {
        instructions::close_claim_receipt::handler(ctx)
    }

    /// Vetoes a posted root during its challenge delay; its distribution rolls into the open
    /// epoch. Admin or guardian.
    pub fn veto_epoch_root(ctx: Context<VetoEpochRoot>) -> Result<()> {
        instructions::veto_epoch_root::handler(ctx)
    }

    /// Carries an expired epoch's unclaimed remainder into the current epoch; anyone.
    pub fn rollover(ctx: Context<Rollover>) -> Result<()> {
        instructions::rollover::handler(ctx)
    }
}
