use anchor_lang::prelude::*;

use vault_common::SafeMath;

use crate::constants::*;
use crate::error::BinaryError;
use crate::events::MarketCreated;
use crate::state::{Config, Market, MarketSource, MarketVariant, ProgramState};
use crucible_pool::state::{AssetPool as CrucibleAssetPool, CrucibleState};

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug)]
pub struct CreateMarketArgs {
    /// 16 bytes of the market UUID followed by 16 zero bytes.
    pub market_id: [u8; 32],
    pub variant: MarketVariant,
    pub source: MarketSource,
    /// Unix seconds; backing closes and voting opens here.
    pub deadline: i64,
}

/// A SOL market with its two lamport vaults. A Yield market opens at once; a Classic market is
/// approved only when the admin co-signs (otherwise it waits for `approve_market`). Seed
/// liquidity is an ordinary `back_market` by the creator, in the same transaction if wanted.
#[event_cpi]
#[derive(Accounts)]
#[instruction(args: CreateMarketArgs)]
pub struct CreateMarket<'info> {
    #[account(mut)]
    pub creator: Signer<'info>,
    #[account(address = program_state.admin @ BinaryError::NotAdmin)]
    pub admin: Option<Signer<'info>>,
    #[account(mut, seeds = [PROGRAM_STATE_SEED], bump = program_state.bump)]
    pub program_state: Account<'info, ProgramState>,
    #[account(seeds = [CONFIG_SEED], bump = config.bump)]
    pub config: Account<'info, Config>,
    /// CHECK: created by the handler at this PDA (see vault_common::account): its address is
    /// known from the narrative's UUID before creation, so it must survive a donation.
    #[account(mut, seeds = [MARKET_SEED, args.market_id.as_ref()], bump)]
    pub market: UncheckedAccount<'info>,
    #[account(mut, seeds = [YES_VAULT_SEED, args.market_id.as_ref()], bump)]
    pub yes_vault: SystemAccount<'info>,
    #[account(mut, seeds = [NO_VAULT_SEED, args.market_id.as_ref()], bump)]
    pub no_vault: SystemAccount<'info>,
    /// crucible_pool's state: a Yield market needs binary_vault among its sources.
    #[account(
        seeds = [crucible_pool::constants::STATE_SEED],
        bump = crucible_state.bump,
        seeds::program = crucible_pool::ID,
    )]
    pub crucible_state: Account<'info, CrucibleState>,
    /// crucible_pool's SOL pool: its existence is what a Yield forfeit needs.
    #[account(
        seeds = [crucible_pool::constants::ASSET_POOL_SEED, crucible_pool::SOL_MINT.as_ref()],
        bump = crucible_sol_pool.bump,
        seeds::program = crucible_pool::ID,
    )]
    pub crucible_sol_pool: Account<'info, CrucibleAssetPool>,
    pub system_program: Program<'info, System>,
}

/// Whether crucible_pool takes deposits signed by binary_vault's CPI authority.
pub fn crucible_accepts(state: &CrucibleState, program_state: &ProgramState) -> Result<bool> {
    let authority = Pubkey::create_program_address(
        &[CPI_AUTHORITY_SEED, &[program_state.cpi_authority_bump]],
        &crate::ID,
    )
    .map_err(|_| ProgramError::InvalidSeeds)?;
    Ok(state.is_authorized(&authority))
}

/// Everything two creation paths share: checks, the new market's fields, the market counter.
pub struct NewMarket<'a> {
    pub args: &'a CreateMarketArgs,
    pub creator: Pubkey,
    pub admin_signed: bool,
    /// Whether crucible_pool would take this market's forfeit (a Yield market needs it).
    pub crucible_accepts: bool,
    pub mint: Pubkey,
    pub min_backing: u64,
    pub bumps: (u8, u8, u8),
}

/// Checks the creation and creates the market account; returns what was written.
pub fn create_new_market<'info>(
    program_state: &mut ProgramState,
    config: &Config,
    payer: &AccountInfo<'info>,
    market_account: &AccountInfo<'info>,
    new: NewMarket,
) -> Result<Market> {
    let now = Clock::get()?.unix_timestamp;
    let args = new.args;
    require!(!program_state.paused, BinaryError::Paused);
    require!(
        args.deadline > now && args.deadline <= now.safe_add(MAX_MARKET_DURATION_SECS)?,
        BinaryError::InvalidDeadline
    );
    require!(
        args.source == MarketSource::Seed || new.admin_signed,
        BinaryError::SourceNeedsAdmin
    );
    require!(
        args.variant != MarketVariant::Yield || new.crucible_accepts,
        BinaryError::CrucibleRefusesForfeits
    );
    let (bump, yes_vault_bump, no_vault_bump) = new.bumps;
    let market = Market {
        version: crate::state::MarketVersion::CURRENT,
        market_id: args.market_id,
        creator: new.creator,
        variant: args.variant,
        source: args.source,
        mint: new.mint,
        approved: args.variant == MarketVariant::Yield || new.admin_signed,
        oracle_status: ORACLE_STATUS_OPEN,
        finalized: false,
        outcome: None,
        created_at: now,
        deadline: args.deadline,
        resolution_proposed_at: 0,
        finalized_at: 0,
        yes_total: 0,
        no_total: 0,
        yes_backers: 0,
        no_backers: 0,
        yes_votes: 0,
        no_votes: 0,
        total_yield: 0,
        min_backing: new.min_backing,
        capital_loss_bps: config.capital_loss_bps,
        crucible_share_bps: config.crucible_share_bps,
        resolution_timelock_secs: config.resolution_timelock_secs,
        max_resolution_delay_secs: config.max_resolution_delay_secs,
        winner_bonus_pool: 0,
        loser_refund_pool: 0,
        crucible_amount: 0,
        total_paid_out: 0,
        claims_count: 0,
        bump,
        yes_vault_bump,
        no_vault_bump,
        oracle_set: config.oracle_set(),
        crucible_forwarded: false,
        dispute_bond_lamports: config.dispute_bond_lamports,
    };
    vault_common::init_account(
        payer,
        market_account,
        &[MARKET_SEED, args.market_id.as_ref(), &[bump]],
        &market,
    )?;
    program_state.market_count = program_state.market_count.safe_add(1)?;
    Ok(market)
}

pub fn created_event(market: &Market, address: Pubkey) -> MarketCreated {
    MarketCreated {
        market_id: market.market_id,
        market: address,
        creator: market.creator,
        variant: market.variant,
        source: market.source,
        mint: market.mint,
        deadline: market.deadline,
        approved: market.approved,
    }
}

pub fn handler(mut ctx: Context<CreateMarket>, args: CreateMarketArgs) -> Result<()> {
    let accounts = &mut ctx.accounts;
    let accepts = crucible_accepts(&accounts.crucible_state, &accounts.program_state)?;
    let market = create_new_market(
        &mut accounts.program_state,
        &accounts.config,
        &accounts.creator.to_account_info(),
        &accounts.market,
        NewMarket {
            args: &args,
            creator: accounts.creator.key(),
            admin_signed: accounts.admin.is_some(),
            crucible_accepts: accepts,
            mint: Pubkey::default(),
            min_backing: MIN_BACKING_LAMPORTS,
            bumps: (ctx.bumps.market, ctx.bumps.yes_vault, ctx.bumps.no_vault),
        },
    )?;
    // Vaults are system-owned PDAs; they must stay rent-exempt after the last claim drains
    // them, so each gets a rent reserve that is never counted as backing. Lamports someone
    // already sent to the address count towards it.
    let reserve = Rent::get()?.minimum_balance(0);
    for vault in [&accounts.yes_vault, &accounts.no_vault] {
        vault_common::transfer_sol(
            accounts.creator.to_account_info(),
            vault.to_account_info(),
            reserve.saturating_sub(vault.lamports()),
            &[],
        )?;
    }
    emit_cpi!(created_event(&market, ctx.accounts.market.key()));
    Ok(())
}
