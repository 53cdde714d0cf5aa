//! shield_vault: parimutuel exploit-coverage markets, SAFE against EXPLOIT (spec 3.6, 4.14).
//!
//! The admin opens a coverage period (30, 60 or 90 days, fee at period start); wallets back
//! SAFE or EXPLOIT with 0.1–100 SOL and receive yield shares at their side's price; the harvest
//! authority books real surplus lamports as yield. After the period, oracles vote; once the
//! threshold is met and 172800 s have passed, anyone finalises: the losing principal is split
//! (spec 4.14 constants) and each backer claims once. Principal crosses vaults; yield never
//! does. Sensitive settings change only after a 259200 s admin timelock.

use anchor_lang::prelude::*;

pub mod constants;
pub mod error;
pub mod events;
pub mod instructions;
pub mod math;
pub mod state;

use instructions::*;
use state::{AdminChange, PayoutRecipient, ShieldSide, ShieldVerdict};

declare_id!("4sN79w8KeYcWa68vCGC5dLLbkMJ3Ng3SycwG9rdRZ5w7");

#[program]
pub mod shield_vault {
    use super::*;

    /// Sets oracle signers, treasury, seam pool program and harvest authority; once, by the
    /// upgrade authority, who becomes the admin.
    pub fn initialize_program(
        ctx: Context<InitializeProgram>,
        args: InitializeProgramArgs,
    ) -> Result<()> {
        instructions::initialize_program::handler(ctx, args)
    }

    /// Proposes a new self-hedge cap (at most 5000 bps), applied after the admin timelock.
    pub fn set_max_self_hedge_bps(ctx: Context<AdminOnly>, bps: u16) -> Result<()> {
        instructions::admin_change::set_max_self_hedge_bps(ctx, bps)
    }

    /// Proposes a change of oracle set, treasury, harvest authority or self-hedge cap.
    pub fn propose_admin_change(ctx: Context<AdminOnly>, change: AdminChange) -> Result<()> {
        instructions::admin_change::propose(ctx, change)
    }

    /// Applies the pending change once `ADMIN_ACTION_TIMELOCK_SECS` have passed and before its
    /// apply window closes; admin only.
    pub fn apply_admin_change(ctx: Context<AdminOnly>) -> Result<()> {
        instructions::admin_change::apply(ctx)
    }

    /// Drops the pending change; admin only.
    pub fn cancel_admin_change(ctx: Context<AdminOnly>) -> Result<()> {
        instructions::admin_change::cancel(ctx)
    }

    /// Names the admin's successor (or withdraws the proposal); admin only.
    pub fn propose_admin(ctx: Context<AdminOnly>, new_admin: Option<Pubkey>) -> Result<()> {
        instructions::admin_change::propose_admin(ctx, new_admin)
    }

    /// The proposed successor takes the admin role.
    pub fn accept_admin(ctx: Context<AcceptShieldAdmin>) -> Result<()> {
        instructions::admin_change::accept_admin(ctx)
    }

    /// Pauses (oracle or admin) or resumes (admin) new coverage and backings.
    pub fn pause_program(ctx: Context<PauseProgram>, paused: bool) -> Result<()> {
        instructions::pause_program::handler(ctx, paused)
    }

    /// Opens a coverage period for a protocol; admin only.
    pub fn open_coverage(ctx: Context<OpenCoverage>, args: OpenCoverageArgs) -> Result<()> {
        instructions::open_coverage::handler(ctx, args)
    }

    /// Commits SOL to SAFE or EXPLOIT and mints yield shares.
    pub fn back_shield(ctx: Context<BackShield>, side: ShieldSide, amount: u64) -> Result<()> {
        instructions::back_shield::handler(ctx, side, amount)
    }

    /// Books real surplus lamports of a side vault as yield; harvest authority only.
    pub fn harvest_yield(ctx: Context<HarvestYield>, side: ShieldSide) -> Result<()> {
        instructions::harvest_yield::handler(ctx, side)
    }

    /// A coverage oracle's SAFE or EXPLOIT vote after the period ends, or UNRESOLVABLE at any
    /// time before a side is proposed; once per oracle.
    pub fn submit_oracle_resolution(
        ctx: Context<SubmitOracleResolution>,
        vote: ShieldVerdict,
    ) -> Result<()> {
        instructions::submit_oracle_resolution::handler(ctx, vote)
    }

    /// Executes the splits after the resolution timelock; anyone.
    pub fn finalize_resolution(ctx: Context<FinalizeResolution>) -> Result<()> {
        instructions::finalize_resolution::handler(ctx)
    }

    /// Sends a resolved coverage's treasury or protocol share to its wallet; anyone, once each.
    pub fn forward_payout(ctx: Context<ForwardPayout>, recipient: PayoutRecipient) -> Result<()> {
        instructions::forward_payout::handler(ctx, recipient)
    }

    /// Sends a resolved coverage's seam share to crucible_pool; anyone, once.
    pub fn forward_seam_share(ctx: Context<ForwardSeamShare>) -> Result<()> {
        instructions::forward_seam_share::handler(ctx)
    }

    /// SAFE backer of a SAFE outcome: principal, own-side yield, pro-rata EXPLOIT principal.
    pub fn claim_safe_winner(ctx: Context<ShieldClaim>) -> Result<()> {
        instructions::claim::handler(ctx, ClaimKind::SafeWinner)
    }

    /// EXPLOIT backer of an EXPLOIT outcome: principal, own-side yield, pro-rata SAFE share.
    pub fn claim_exploit_winner(ctx: Context<ShieldClaim>) -> Result<()> {
        instructions::claim::handler(ctx, ClaimKind::ExploitWinner)
    }

    /// Losing backer: share-derived yield from the own vault only.
    pub fn claim_loser_yield(ctx: Context<ShieldClaim>) -> Result<()> {
        instructions::claim::handler(ctx, ClaimKind::LoserYield)
    }

    /// Any backer after `refund_all`: 100 % of principal (and the side's yield share).
    pub fn claim_refund(ctx: Context<ShieldClaim>) -> Result<()> {
        instructions::claim::handler(ctx, ClaimKind::Refund)
    }

    /// Refund mode for a coverage the oracles left undecided 48 h past its period; admin only.
    pub fn refund_all(ctx: Context<RefundAll>) -> Result<()> {
        instructions::refund_all::handler(ctx)
    }

    /// Refund mode for a coverage left unresolved past the resolution delay; anyone.
    pub fn trigger_timeout_refund(ctx: Context<TriggerShieldTimeoutRefund>) -> Result<()> {
        instructions::trigger_timeout_refund::handler(ctx)
    }

    /// Returns a settled shield's vote rent to its oracle.
    pub fn close_shield_vote(ctx: Context<CloseShieldVote>) -> Result<()> {
        instructions::close_shield_vote::handler(ctx)
    }
}
