//! binary_vault: YES/NO markets in SOL or an SPL token (spec 3.5, 4.13).
//!
//! Life of a market: `create_market[_spl]` (Yield opens at once, Classic after admin review) →
//! `back_market[_spl]` until the deadline → oracles `submit_oracle_resolution` after it; the
//! first side to reach the threshold is proposed and a 48 h payout hold starts, during which
//! anyone may open a dispute with a bond (`resolve_dispute`) → `finalize_resolution[_spl]`
//! after the hold (status 1), or a refund (status 4) by the admin's ruling or by the
//! permissionless `trigger_timeout_refund` → each backer `claim`s once.

use anchor_lang::prelude::*;

pub mod constants;
pub mod error;
pub mod events;
pub mod instructions;
pub mod math;
pub mod state;

use instructions::*;
use state::{DisputeAction, Side};

declare_id!("BvoAHVQaf3ra2cdgXBfmAt8BqmQzbYLGZpNz5itFdmxV");

#[program]
pub mod binary_vault {
    use super::*;

    /// Creates program state and config; the program's upgrade authority becomes the admin.
    pub fn initialize(ctx: Context<Initialize>, args: InitializeArgs) -> Result<()> {
        instructions::initialize::handler(ctx, args)
    }

    /// Proposes a change of config values (bps, hold, refund delay, bond, treasury) and/or
    /// the oracle set; admin only. Applies after `ADMIN_ACTION_TIMELOCK_SECS`.
    pub fn propose_config_change(ctx: Context<AdminConfig>, update: ConfigUpdate) -> Result<()> {
        instructions::admin::propose_config_change(ctx, update)
    }

    /// Applies the pending change once the timelock has passed; admin only.
    pub fn apply_config_change(ctx: Context<AdminConfig>) -> Result<()> {
        instructions::admin::apply_config_change(ctx)
    }

    /// Drops the pending change; admin only.
    pub fn cancel_config_change(ctx: Context<AdminConfig>) -> Result<()> {
        instructions::admin::cancel_config_change(ctx)
    }

    /// Names the admin's successor (or withdraws the proposal); admin only.
    pub fn propose_admin(ctx: Context<AdminState>, new_admin: Option<Pubkey>) -> Result<()> {
        instructions::admin::propose_admin(ctx, new_admin)
    }

    /// The proposed successor takes the admin role.
    pub fn accept_admin(ctx: Context<AcceptAdmin>) -> Result<()> {
        instructions::admin::accept_admin(ctx)
    }

    /// Pauses or resumes new markets and backings; admin only.
    pub fn set_paused(ctx: Context<AdminState>, paused: bool) -> Result<()> {
        instructions::admin::set_paused(ctx, paused)
    }

    /// A SOL market with its lamport vaults.
    pub fn create_market(ctx: Context<CreateMarket>, args: CreateMarketArgs) -> Result<()> {
        instructions::create_market::handler(ctx, args)
    }

    /// An SPL market with its token vaults.
    pub fn create_market_spl(ctx: Context<CreateMarketSpl>, args: CreateMarketArgs) -> Result<()> {
        instructions::create_market_spl::handler(ctx, args)
    }

    /// Admin review of a Classic market created without the admin's co-signature.
    pub fn approve_market(ctx: Context<ApproveMarket>) -> Result<()> {
        instructions::approve_market::handler(ctx)
    }

    /// Lamports on one side of a SOL market (minimum 0.01 SOL).
    pub fn back_market(ctx: Context<BackMarket>, side: Side, amount: u64) -> Result<()> {
        instructions::back_market::handler(ctx, side, amount)
    }

    /// Tokens on one side of an SPL market (minimum from the config).
    pub fn back_market_spl(ctx: Context<BackMarketSpl>, side: Side, amount: u64) -> Result<()> {
        instructions::back_market_spl::handler(ctx, side, amount)
    }

    /// An oracle's vote (confidence 7000–10000 bps) after the deadline; once per oracle.
    pub fn submit_oracle_resolution(
        ctx: Context<SubmitOracleResolution>,
        vote: Side,
        confidence_bps: u16,
    ) -> Result<()> {
        instructions::submit_oracle_resolution::handler(ctx, vote, confidence_bps)
    }

    /// Opens a dispute with a bond during the hold, or settles one (admin).
    pub fn resolve_dispute(ctx: Context<ResolveDispute>, action: DisputeAction) -> Result<()> {
        instructions::resolve_dispute::handler(ctx, action)
    }

    /// Settles a dispute left unruled past the resolution delay: the outcome stands; anyone.
    pub fn lapse_dispute(ctx: Context<LapseDispute>) -> Result<()> {
        instructions::lapse_dispute::handler(ctx)
    }

    /// Sends an upheld or lapsed dispute's forfeit bond to the treasury; anyone, once.
    pub fn forward_dispute_bond(ctx: Context<ForwardDisputeBond>) -> Result<()> {
        instructions::forward_dispute_bond::handler(ctx)
    }

    /// Finalises a market (SOL or SPL) after the hold; anyone. Moves no money.
    pub fn finalize_resolution(ctx: Context<FinalizeResolution>) -> Result<()> {
        instructions::finalize_resolution::handler(ctx)
    }

    /// Sends a finalised SOL Yield market's crucible share to crucible_pool; anyone, once.
    pub fn forward_crucible_share(ctx: Context<ForwardCrucibleShare>) -> Result<()> {
        instructions::forward_crucible_share::handler(ctx)
    }

    /// Sends a finalised SPL Yield market's crucible share to crucible_pool; anyone, once.
    pub fn forward_crucible_share_spl(ctx: Context<ForwardCrucibleShareSpl>) -> Result<()> {
        instructions::forward_crucible_share_spl::handler(ctx)
    }

    /// Sends a market no oracle threshold resolved to refund after the delay; anyone.
    pub fn trigger_timeout_refund(ctx: Context<TriggerTimeoutRefund>) -> Result<()> {
        instructions::trigger_timeout_refund::handler(ctx)
    }

    /// A backer's payout from a SOL market; once per backing.
    pub fn claim(ctx: Context<Claim>) -> Result<()> {
        instructions::claim::handler(ctx)
    }

    /// A backer's payout from an SPL market; once per backing.
    pub fn claim_spl(ctx: Context<ClaimSpl>) -> Result<()> {
        instructions::claim_spl::handler(ctx)
    }

    /// Returns a finalised market's vote rent to its oracle.
    pub fn close_oracle_vote(ctx: Context<CloseOracleVote>) -> Result<()> {
        instructions::close_oracle_vote::handler(ctx)
    }

    /// Scaffold (spec 4.13): refuses with `YieldVenueNotConfigured`; admin only.
    pub fn deposit_to_yield(ctx: Context<YieldScaffold>, side: Side, amount: u64) -> Result<()> {
        instructions::yield_scaffold::handler(ctx, side, amount)
    }

    /// Scaffold (spec 4.13): refuses with `YieldVenueNotConfigured`; admin only.
    pub fn withdraw_from_yield(ctx: Context<YieldScaffold>, side: Side, amount: u64) -> Result<()> {
        instructions::yield_scaffold::handler(ctx, side, amount)
    }
}
