//! `lend_a`: the SPL token-lending program (solana-program-library `token-lending`), devnet-live.
//! Deposit reserve liquidity → collateral tokens in the wallet; redeem collateral → liquidity.
//!
//! Interface pinned from `token-lending/program/src/instruction.rs` and `state/reserve.rs`
//! (docs/venues-research.md §1): a native program whose instruction data is a one-byte tag and
//! little-endian fields; the reserve is a 571-byte packed account. Both deposit and redeem
//! require the reserve refreshed in the same slot, so `RefreshReserve` goes right before them.

use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use narrative_sdk::Pubkey;

use super::{
    fee_on, key_at, le_u128, le_u64, no_collateral, not_configured, read, token_balance,
    too_little_unlent, unreadable, AssociatedAccount, Cluster, Deposit, ExchangeRate, Lender, Loan,
    LoanRead, MarketRead, TokenLeg, Transactions, Venue, VenueToken, CLOCK_SYSVAR, RENT_SYSVAR,
};
use crate::chain::holdings::{associated_token_account, TOKEN_PROGRAM};
use crate::chain::ledger::{Ledger, LedgerAccount};
use crate::chain::seeded::{create_seeded_account, Seed, SeededAddress};
use crate::error::ApiError;
use crate::values::{TokenSymbol, VenueId};

/// The program on devnet (`token-lending/program/src/lib.rs`, README's deployment table).
pub const DEVNET_PROGRAM: Pubkey =
    Pubkey::from_str_const("6TvznH3B2e3p2mbhufNBpgSrLx6UkgvxtVQvopEZ2kuH");

/// Instruction tags (`LendingInstruction` order).
pub const REFRESH_RESERVE: u8 = 3;
pub const DEPOSIT_RESERVE_LIQUIDITY: u8 = 4;
pub const REDEEM_RESERVE_COLLATERAL: u8 = 5;
pub const INIT_OBLIGATION: u8 = 6;
pub const REFRESH_OBLIGATION: u8 = 7;
pub const DEPOSIT_OBLIGATION_COLLATERAL: u8 = 8;
pub const WITHDRAW_OBLIGATION_COLLATERAL: u8 = 9;
pub const BORROW_OBLIGATION_LIQUIDITY: u8 = 10;
pub const REPAY_OBLIGATION_LIQUIDITY: u8 = 11;

/// `OBLIGATION_LEN`: header, then room for one deposit (56 bytes) and nine borrows (80 each).
pub const OBLIGATION_LEN: usize = 916;

/// `Reserve::LEN` and its version byte.
pub const RESERVE_LEN: usize = 571;
pub const RESERVE_VERSION: u8 = 1;
/// Interest compounds per slot over this many slots a year (`SLOTS_PER_YEAR`).
pub const SLOTS_PER_YEAR: f64 = 78_840_000.0;
/// Fixed-point `Decimal`s ("wads") carry 18 decimals.
pub const WAD: u128 = 1_000_000_000_000_000_000;

/// Byte offsets into the packed reserve (sums of `Reserve::unpack_from_slice`'s field sizes).
pub mod offsets {
    pub const VERSION: usize = 0;
    pub const LENDING_MARKET: usize = 10;
    pub const LIQUIDITY_MINT: usize = 42;
    pub const LIQUIDITY_SUPPLY: usize = 75;
    pub const LIQUIDITY_FEE_RECEIVER: usize = 107;
    pub const LIQUIDITY_ORACLE: usize = 139;
    pub const AVAILABLE_AMOUNT: usize = 171;
    pub const BORROWED_AMOUNT_WADS: usize = 179;
    pub const CUMULATIVE_BORROW_RATE_WADS: usize = 195;
    pub const COLLATERAL_MINT: usize = 227;
    pub const COLLATERAL_MINT_TOTAL_SUPPLY: usize = 259;
    pub const COLLATERAL_SUPPLY: usize = 267;
    pub const OPTIMAL_UTILIZATION_RATE: usize = 299;
    pub const MIN_BORROW_RATE: usize = 303;
    pub const OPTIMAL_BORROW_RATE: usize = 304;
    pub const MAX_BORROW_RATE: usize = 305;
    /// `config.fees`: the borrow fee (a wad, 10^18 = 1) and the host's percent of it.
    pub const BORROW_FEE_WAD: usize = 306;
    pub const HOST_FEE_PERCENTAGE: usize = 322;
}

/// A reserve as this service reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reserve {
    pub lending_market: Pubkey,
    pub liquidity_mint: Pubkey,
    pub liquidity_supply: Pubkey,
    /// Where borrow fees go (the borrow names it).
    pub fee_receiver: Pubkey,
    pub oracle: Pubkey,
    pub available: u64,
    pub borrowed_wads: u128,
    /// Debts grow with it (wads; 1.0 at the reserve's start).
    pub cumulative_borrow_rate_wads: u128,
    pub collateral_mint: Pubkey,
    pub collateral_supply: u64,
    /// The token account holding collateral deposited into obligations.
    pub collateral_vault: Pubkey,
    /// Percent: the utilisation at the curve's kink, and the borrow rates at 0, the kink and 100 %.
    pub optimal_utilization: u8,
    pub min_borrow_rate: u8,
    pub optimal_borrow_rate: u8,
    pub max_borrow_rate: u8,
    /// The fee a borrow pays on top of the amount (a wad), and the host's percent of it.
    pub borrow_fee_wad: u64,
    pub host_fee_percentage: u8,
}

impl Reserve {
    pub fn decode(data: &[u8]) -> Option<Reserve> {
        use offsets::*;
        if data.len() != RESERVE_LEN || data[VERSION] != RESERVE_VERSION {
            return None;
        }
        Some(Reserve {
            lending_market: key_at(data, LENDING_MARKET)?,
            liquidity_mint: key_at(data, LIQUIDITY_MINT)?,
            liquidity_supply: key_at(data, LIQUIDITY_SUPPLY)?,
            fee_receiver: key_at(data, LIQUIDITY_FEE_RECEIVER)?,
            oracle: key_at(data, LIQUIDITY_ORACLE)?,
            available: le_u64(data, AVAILABLE_AMOUNT)?,
            borrowed_wads: le_u128(data, BORROWED_AMOUNT_WADS)?,
            cumulative_borrow_rate_wads: le_u128(data, CUMULATIVE_BORROW_RATE_WADS)?,
            collateral_mint: key_at(data, COLLATERAL_MINT)?,
            collateral_supply: le_u64(data, COLLATERAL_MINT_TOTAL_SUPPLY)?,
            collateral_vault: key_at(data, COLLATERAL_SUPPLY)?,
            optimal_utilization: data[OPTIMAL_UTILIZATION_RATE],
            min_borrow_rate: data[MIN_BORROW_RATE],
            optimal_borrow_rate: data[OPTIMAL_BORROW_RATE],
            max_borrow_rate: data[MAX_BORROW_RATE],
            borrow_fee_wad: le_u64(data, BORROW_FEE_WAD)?,
            host_fee_percentage: data[HOST_FEE_PERCENTAGE],
        })
    }

    /// Liquidity in wads: what is available plus what is lent out.
    fn total_liquidity_wads(&self) -> u128 {
        (self.available as u128)
            .saturating_mul(WAD)
            .saturating_add(self.borrowed_wads)
    }

    /// Collateral tokens against total liquidity (1:1 before the first deposit).
    pub fn rate(&self) -> ExchangeRate {
        if self.collateral_supply == 0 || self.total_liquidity_wads() == 0 {
            return ExchangeRate::PAR;
        }
        ExchangeRate {
            liquidity: self.total_liquidity_wads(),
            receipt: (self.collateral_supply as u128).saturating_mul(WAD),
        }
    }

    /// The fee `BorrowObligationLiquidity` adds to a borrow of `amount` (`calculate_borrow_fees`,
    /// exclusive): the amount times the fee, at least 1 base unit (2 where a host takes part of
    /// it), rounded to the nearest unit.
    pub fn borrow_fee(&self, amount: u64) -> u64 {
        let minimum = if self.host_fee_percentage > 0 { 2 } else { 1 };
        fee_on(amount, self.borrow_fee_wad, WAD, minimum)
    }

    /// Whether the reserve can lend `amount` now: the program takes the amount and its fee out
    /// of the unlent liquidity and refuses more than there is (`InsufficientLiquidity`).
    pub fn can_lend(&self, amount: u64) -> bool {
        amount.saturating_add(self.borrow_fee(amount)) <= self.available
    }

    /// Lent out over total liquidity, 0 to 1 (for the rate curve; display only).
    pub fn utilization(&self) -> f64 {
        let total = self.total_liquidity_wads();
        if total == 0 {
            return 0.0;
        }
        self.borrowed_wads as f64 / total as f64
    }

    /// The borrow APR in percent at the current utilisation (`Reserve::current_borrow_rate`).
    pub fn borrow_apr_pct(&self) -> f64 {
        let u = self.utilization();
        let optimal = f64::from(self.optimal_utilization) / 100.0;
        let (min, opt, max) = (
            f64::from(self.min_borrow_rate),
            f64::from(self.optimal_borrow_rate),
            f64::from(self.max_borrow_rate),
        );
        if self.optimal_utilization == 100 || u < optimal {
            let share = if optimal == 0.0 { 0.0 } else { u / optimal };
            min + share * (opt - min)
        } else {
            opt + (u - optimal) / (1.0 - optimal) * (max - opt)
        }
    }

    /// The supply APY in percent: the borrow APR times utilisation, compounded per slot.
    pub fn supply_apy_pct(&self) -> f64 {
        let apr = self.borrow_apr_pct() / 100.0 * self.utilization();
        ((1.0 + apr / SLOTS_PER_YEAR).powf(SLOTS_PER_YEAR) - 1.0) * 100.0
    }
}

/// The lending market's authority: the program address of the market alone (the program's
/// `InitLendingMarket` finds it so and keeps its bump).
pub fn market_authority(program: &Pubkey, market: &Pubkey) -> Pubkey {
    narrative_sdk::derive::find_program_address(&[market.as_ref()], program).0
}

/// A reserve as its instructions name it: the program, the reserve's address and accounts, and
/// its market's authority (derived once: the accounts never change).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReserveAccounts {
    pub program: Pubkey,
    pub address: Pubkey,
    pub reserve: Reserve,
    pub authority: Pubkey,
}

impl ReserveAccounts {
    pub fn new(program: Pubkey, address: Pubkey, reserve: Reserve) -> ReserveAccounts {
        ReserveAccounts {
            authority: market_authority(&program, &reserve.lending_market),
            program,
            address,
            reserve,
        }
    }
}

/// `RefreshReserve` (3): reserve [w], its liquidity oracle, the clock.
pub fn refresh_reserve(
    program: &Pubkey,
    reserve_address: &Pubkey,
    reserve: &Reserve,
) -> Instruction {
    Instruction {
        program_id: *program,
        accounts: vec![
            AccountMeta::new(*reserve_address, false),
            AccountMeta::new_readonly(reserve.oracle, false),
            AccountMeta::new_readonly(CLOCK_SYSVAR, false),
        ],
        data: vec![REFRESH_RESERVE],
    }
}

/// `DepositReserveLiquidity` (4) of `amount` from `source` into collateral at `destination`.
pub fn deposit_reserve_liquidity(
    r: &ReserveAccounts,
    source: &Pubkey,
    destination: &Pubkey,
    owner: &Pubkey,
    amount: u64,
) -> Instruction {
    let mut data = vec![DEPOSIT_RESERVE_LIQUIDITY];
    data.extend_from_slice(&amount.to_le_bytes());
    Instruction {
        program_id: r.program,
        accounts: vec![
            AccountMeta::new(*source, false),
            AccountMeta::new(*destination, false),
            AccountMeta::new(r.address, false),
            AccountMeta::new(r.reserve.liquidity_supply, false),
            AccountMeta::new(r.reserve.collateral_mint, false),
            AccountMeta::new_readonly(r.reserve.lending_market, false),
            AccountMeta::new_readonly(r.authority, false),
            AccountMeta::new_readonly(*owner, true),
            AccountMeta::new_readonly(CLOCK_SYSVAR, false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
        ],
        data,
    }
}

/// `RedeemReserveCollateral` (5) of `collateral` from `source` into liquidity at `destination`.
pub fn redeem_reserve_collateral(
    r: &ReserveAccounts,
    source: &Pubkey,
    destination: &Pubkey,
    owner: &Pubkey,
    collateral: u64,
) -> Instruction {
    let mut data = vec![REDEEM_RESERVE_COLLATERAL];
    data.extend_from_slice(&collateral.to_le_bytes());
    Instruction {
        program_id: r.program,
        accounts: vec![
            AccountMeta::new(*source, false),
            AccountMeta::new(*destination, false),
            AccountMeta::new(r.address, false),
            AccountMeta::new(r.reserve.collateral_mint, false),
            AccountMeta::new(r.reserve.liquidity_supply, false),
            AccountMeta::new_readonly(r.reserve.lending_market, false),
            AccountMeta::new_readonly(r.authority, false),
            AccountMeta::new_readonly(*owner, true),
            AccountMeta::new_readonly(CLOCK_SYSVAR, false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
        ],
        data,
    }
}

fn tagged(tag: u8, amount: Option<u64>) -> Vec<u8> {
    let mut data = vec![tag];
    if let Some(amount) = amount {
        data.extend_from_slice(&amount.to_le_bytes());
    }
    data
}

/// `InitObligation` (6) of the `owner`'s obligation account, created just before it.
pub fn init_obligation(
    program: &Pubkey,
    obligation: &Pubkey,
    market: &Pubkey,
    owner: &Pubkey,
) -> Instruction {
    Instruction {
        program_id: *program,
        accounts: vec![
            AccountMeta::new(*obligation, false),
            AccountMeta::new_readonly(*market, false),
            AccountMeta::new_readonly(*owner, true),
            AccountMeta::new_readonly(CLOCK_SYSVAR, false),
            AccountMeta::new_readonly(RENT_SYSVAR, false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
        ],
        data: tagged(INIT_OBLIGATION, None),
    }
}

/// `RefreshObligation` (7): every deposit reserve, then every borrow reserve, in the
/// obligation's order.
pub fn refresh_obligation(
    program: &Pubkey,
    obligation: &Pubkey,
    deposit_reserves: &[Pubkey],
    borrow_reserves: &[Pubkey],
) -> Instruction {
    let mut accounts = vec![
        AccountMeta::new(*obligation, false),
        AccountMeta::new_readonly(CLOCK_SYSVAR, false),
    ];
    accounts.extend(
        deposit_reserves
            .iter()
            .chain(borrow_reserves)
            .map(|r| AccountMeta::new_readonly(*r, false)),
    );
    Instruction {
        program_id: *program,
        accounts,
        data: tagged(REFRESH_OBLIGATION, None),
    }
}

/// `DepositObligationCollateral` (8) of `collateral` tokens from `source`; the owner is also
/// the transfer authority.
pub fn deposit_obligation_collateral(
    r: &ReserveAccounts,
    source: &Pubkey,
    obligation: &Pubkey,
    owner: &Pubkey,
    collateral: u64,
) -> Instruction {
    Instruction {
        program_id: r.program,
        accounts: vec![
            AccountMeta::new(*source, false),
            AccountMeta::new(r.reserve.collateral_vault, false),
            AccountMeta::new_readonly(r.address, false),
            AccountMeta::new(*obligation, false),
            AccountMeta::new_readonly(r.reserve.lending_market, false),
            AccountMeta::new_readonly(*owner, true),
            AccountMeta::new_readonly(*owner, true),
            AccountMeta::new_readonly(CLOCK_SYSVAR, false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
        ],
        data: tagged(DEPOSIT_OBLIGATION_COLLATERAL, Some(collateral)),
    }
}

/// `WithdrawObligationCollateral` (9) of `collateral` tokens to `destination`.
pub fn withdraw_obligation_collateral(
    r: &ReserveAccounts,
    destination: &Pubkey,
    obligation: &Pubkey,
    owner: &Pubkey,
    collateral: u64,
) -> Instruction {
    Instruction {
        program_id: r.program,
        accounts: vec![
            AccountMeta::new(r.reserve.collateral_vault, false),
            AccountMeta::new(*destination, false),
            AccountMeta::new_readonly(r.address, false),
            AccountMeta::new(*obligation, false),
            AccountMeta::new_readonly(r.reserve.lending_market, false),
            AccountMeta::new_readonly(r.authority, false),
            AccountMeta::new_readonly(*owner, true),
            AccountMeta::new_readonly(CLOCK_SYSVAR, false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
        ],
        data: tagged(WITHDRAW_OBLIGATION_COLLATERAL, Some(collateral)),
    }
}

/// `BorrowObligationLiquidity` (10) of `amount` to `destination` (`slippage_limit` 0: it
/// applies only to a borrow of all the obligation's power, which the service never asks).
pub fn borrow_obligation_liquidity(
    r: &ReserveAccounts,
    destination: &Pubkey,
    obligation: &Pubkey,
    owner: &Pubkey,
    amount: u64,
) -> Instruction {
    let mut data = tagged(BORROW_OBLIGATION_LIQUIDITY, Some(amount));
    data.extend_from_slice(&0u64.to_le_bytes());
    Instruction {
        program_id: r.program,
        accounts: vec![
            AccountMeta::new(r.reserve.liquidity_supply, false),
            AccountMeta::new(*destination, false),
            AccountMeta::new(r.address, false),
            AccountMeta::new(r.reserve.fee_receiver, false),
            AccountMeta::new(*obligation, false),
            AccountMeta::new_readonly(r.reserve.lending_market, false),
            AccountMeta::new_readonly(r.authority, false),
            AccountMeta::new_readonly(*owner, true),
            AccountMeta::new_readonly(CLOCK_SYSVAR, false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
        ],
        data,
    }
}

/// `RepayObligationLiquidity` (11) of `amount` (u64::MAX: all it owes) from `source`.
pub fn repay_obligation_liquidity(
    r: &ReserveAccounts,
    source: &Pubkey,
    obligation: &Pubkey,
    owner: &Pubkey,
    amount: u64,
) -> Instruction {
    Instruction {
        program_id: r.program,
        accounts: vec![
            AccountMeta::new(*source, false),
            AccountMeta::new(r.reserve.liquidity_supply, false),
            AccountMeta::new(r.address, false),
            AccountMeta::new(*obligation, false),
            AccountMeta::new_readonly(r.reserve.lending_market, false),
            AccountMeta::new_readonly(*owner, true),
            AccountMeta::new_readonly(CLOCK_SYSVAR, false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
        ],
        data: tagged(REPAY_OBLIGATION_LIQUIDITY, Some(amount)),
    }
}

/// An obligation as this service reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Obligation {
    pub lending_market: Pubkey,
    pub owner: Pubkey,
    /// (reserve, collateral tokens), in the obligation's order.
    pub deposits: Vec<(Pubkey, u64)>,
    /// (reserve, cumulative borrow rate when last grown, debt in wads), in its order.
    pub borrows: Vec<(Pubkey, u128, u128)>,
}

impl Obligation {
    pub fn decode(data: &[u8]) -> Option<Obligation> {
        if data.len() != OBLIGATION_LEN || data[0] != 1 {
            return None;
        }
        let (deposits_len, borrows_len) = (usize::from(data[138]), usize::from(data[139]));
        if deposits_len + borrows_len > 10 {
            return None;
        }
        let mut at = 140;
        let mut deposits = Vec::with_capacity(deposits_len);
        for _ in 0..deposits_len {
            deposits.push((key_at(data, at)?, le_u64(data, at + 32)?));
            at += 56;
        }
        let mut borrows = Vec::with_capacity(borrows_len);
        for _ in 0..borrows_len {
            borrows.push((
                key_at(data, at)?,
                le_u128(data, at + 32)?,
                le_u128(data, at + 48)?,
            ));
            at += 80;
        }
        Some(Obligation {
            lending_market: key_at(data, 10)?,
            owner: key_at(data, 42)?,
            deposits,
            borrows,
        })
    }

    pub fn deposit_reserves(&self) -> Vec<Pubkey> {
        self.deposits.iter().map(|(r, _)| *r).collect()
    }

    pub fn borrow_reserves(&self) -> Vec<Pubkey> {
        self.borrows.iter().map(|(r, _, _)| *r).collect()
    }

    /// What it owes `reserve` now: its debt grown by the reserve's cumulative rate since it
    /// was last grown, in base units rounded up.
    pub fn owed(&self, reserve: &Pubkey, reserve_rate_wads: u128) -> u64 {
        self.borrows
            .iter()
            .filter(|(r, _, _)| r == reserve)
            .map(|(_, rate, wads)| {
                let divisor = (*rate).max(1).saturating_mul(WAD);
                let floor = super::mul_div(*wads, reserve_rate_wads, divisor);
                // Counted rounded up: exact only when the product divides evenly.
                let exact = wads
                    .checked_mul(reserve_rate_wads)
                    .is_some_and(|p| p % divisor == 0);
                if exact {
                    floor
                } else {
                    floor.saturating_add(1)
                }
            })
            .fold(0u64, u64::saturating_add)
    }
}

/// The venue: the program and one reserve per token.
pub struct LendA {
    pub program: Pubkey,
    pub reserves: Vec<(VenueToken, Pubkey)>,
    /// Reserves as first read, with their market's authority: their accounts (market, supply,
    /// mints, oracle) never change, so a deposit builds from this and reads only the wallet's
    /// token accounts.
    pub known: std::sync::Mutex<std::collections::HashMap<Pubkey, ReserveAccounts>>,
}

impl LendA {
    pub fn new(program: Pubkey, reserves: Vec<(VenueToken, Pubkey)>) -> LendA {
        LendA {
            program,
            reserves,
            known: Default::default(),
        }
    }

    /// The reserve's accounts and its market's authority, read and derived once.
    async fn reserve_accounts(
        &self,
        ledger: &dyn Ledger,
        token: &VenueToken,
    ) -> Result<ReserveAccounts, ApiError> {
        let address = self.reserve_of(token)?;
        if let Some(known) = self.known.lock().expect("reserves").get(&address) {
            return Ok(known.clone());
        }
        let (address, reserve) = self.reserve(ledger, token).await?;
        let accounts = ReserveAccounts::new(self.program, address, reserve);
        self.known
            .lock()
            .expect("reserves")
            .insert(address, accounts.clone());
        Ok(accounts)
    }
}

/// What a loan transaction is built from, read in one call.
struct LoanState {
    /// The slot the obligation was read at.
    slot: u64,
    obligation_address: Pubkey,
    /// The obligation, None when the wallet has none yet.
    obligation: Option<Obligation>,
    /// What the obligation's address holds when there is no obligation.
    seeded: SeededAddress,
    /// The configured reserves of the market, their numbers as read now.
    reserves: Vec<(VenueToken, ReserveAccounts)>,
    /// The collateral tokens the wallet holds of each, in its own account.
    in_wallet: Vec<u64>,
}

impl LoanState {
    fn reserve(&self, address: &Pubkey) -> Option<&(VenueToken, ReserveAccounts)> {
        self.reserves.iter().find(|(_, r)| r.address == *address)
    }

    fn reserve_of(&self, token: &VenueToken) -> Result<&ReserveAccounts, ApiError> {
        self.reserves
            .iter()
            .find(|(t, _)| t.symbol == token.symbol)
            .map(|(_, r)| r)
            .ok_or_else(|| not_configured(VenueId::LendA, token.symbol))
    }

    /// The collateral tokens of `reserve` the obligation holds.
    fn pledged(&self, reserve: &Pubkey) -> u64 {
        self.obligation.as_ref().map_or(0, |o| {
            o.deposits
                .iter()
                .filter(|(r, _)| r == reserve)
                .map(|(_, amount)| *amount)
                .sum()
        })
    }

    /// `RefreshReserve` of each of `reserves` once, in order.
    fn refreshes(&self, reserves: &[Pubkey]) -> Vec<Instruction> {
        let mut seen: Vec<Pubkey> = Vec::new();
        reserves
            .iter()
            .filter(|r| {
                let first = !seen.contains(r);
                seen.push(**r);
                first
            })
            .filter_map(|r| self.reserve(r))
            .map(|(_, r)| refresh_reserve(&r.program, &r.address, &r.reserve))
            .collect()
    }
}

impl LendA {
    /// The seed of a wallet's obligation in `market`: the market's address, its first 32
    /// characters (the system program's limit on a seed).
    fn obligation_seed(market: &Pubkey) -> String {
        market.to_string().chars().take(32).collect()
    }

    /// The wallet's obligation in `market`.
    pub fn obligation_address(&self, wallet: &Pubkey, market: &Pubkey) -> Pubkey {
        Seed {
            base: wallet,
            seed: &Self::obligation_seed(market),
            owner: &self.program,
        }
        .address()
    }

    /// The market of the configured reserves (the first's; a reserve of another market is
    /// left out of loans).
    async fn loan_market(&self, ledger: &dyn Ledger) -> Result<Pubkey, ApiError> {
        let (token, _) = self
            .reserves
            .first()
            .ok_or_else(|| not_configured(VenueId::LendA, TokenSymbol::Sol))?;
        Ok(self
            .reserve_accounts(ledger, token)
            .await?
            .reserve
            .lending_market)
    }

    async fn loan_state(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
    ) -> Result<LoanState, ApiError> {
        let market = self.loan_market(ledger).await?;
        let mut known = Vec::new();
        for (token, _) in &self.reserves {
            let r = self.reserve_accounts(ledger, token).await?;
            if r.reserve.lending_market == market {
                known.push((*token, r));
            }
        }
        let obligation_address = self.obligation_address(wallet, &market);
        let mut addresses = vec![obligation_address];
        addresses.extend(known.iter().map(|(_, r)| r.address));
        addresses.extend(known.iter().map(|(_, r)| {
            associated_token_account(wallet, &r.reserve.collateral_mint, &TOKEN_PROGRAM)
        }));
        let (slot, found) = ledger.accounts(&addresses).await?;
        if found.len() != addresses.len() {
            return Err(unreadable(VenueId::LendA, "obligation"));
        }
        let n = known.len();
        let obligation = match &found[0] {
            Some(account) if account.owner == self.program => Some(
                Obligation::decode(&account.data)
                    .filter(|o| o.owner == *wallet && o.lending_market == market)
                    .ok_or_else(|| unreadable(VenueId::LendA, "obligation"))?,
            ),
            _ => None,
        };
        let seeded = SeededAddress::of(found[0].as_ref());
        let mut reserves = Vec::with_capacity(n);
        for ((token, known), account) in known.into_iter().zip(&found[1..=n]) {
            let reserve = self.decoded(account, &token)?;
            reserves.push((token, ReserveAccounts { reserve, ..known }));
        }
        let in_wallet = found[n + 1..].iter().map(token_balance).collect();
        Ok(LoanState {
            slot,
            obligation_address,
            obligation,
            seeded,
            reserves,
            in_wallet,
        })
    }

    /// A reserve account as read, checked: the program's, of the token's mint.
    fn decoded(
        &self,
        account: &Option<LedgerAccount>,
        token: &VenueToken,
    ) -> Result<Reserve, ApiError> {
        account
            .as_ref()
            .filter(|a| a.owner == self.program)
            .and_then(|a| Reserve::decode(&a.data))
            .filter(|r| r.liquidity_mint == token.mint)
            .ok_or_else(|| unreadable(VenueId::LendA, "reserve"))
    }

    /// The set-up of a wallet without an obligation: the account for the program at its seeded
    /// address (topped up and assigned when someone funded the address first), initialised.
    fn obligation_setup(
        &self,
        wallet: &Pubkey,
        state: &LoanState,
        market: &Pubkey,
    ) -> Result<Vec<Instruction>, ApiError> {
        let prefunded = match state.seeded {
            SeededAddress::Free { lamports } => lamports,
            SeededAddress::Taken => return Err(unreadable(VenueId::LendA, "obligation address")),
        };
        let seed = Self::obligation_seed(market);
        let mut ixs = create_seeded_account(
            wallet,
            &state.obligation_address,
            Seed {
                base: wallet,
                seed: &seed,
                owner: &self.program,
            },
            anchor_lang::solana_program::rent::Rent::default().minimum_balance(OBLIGATION_LEN),
            OBLIGATION_LEN as u64,
            prefunded,
        );
        ixs.push(init_obligation(
            &self.program,
            &state.obligation_address,
            market,
            wallet,
        ));
        Ok(ixs)
    }

    /// The obligation's refresh once `new_deposits` joined its deposits, with every reserve it
    /// names refreshed first.
    fn refreshed(
        &self,
        state: &LoanState,
        extra: &[Pubkey],
        new_deposits: &[Pubkey],
    ) -> (Vec<Instruction>, Instruction) {
        let (mut deposits, borrows) = match &state.obligation {
            Some(o) => (o.deposit_reserves(), o.borrow_reserves()),
            None => (vec![], vec![]),
        };
        for r in new_deposits {
            if !deposits.contains(r) {
                deposits.push(*r);
            }
        }
        let all: Vec<Pubkey> = deposits
            .iter()
            .chain(&borrows)
            .chain(extra)
            .copied()
            .collect();
        let refresh = refresh_obligation(
            &self.program,
            &state.obligation_address,
            &deposits,
            &borrows,
        );
        (state.refreshes(&all), refresh)
    }
}

impl LendA {
    fn reserve_of(&self, token: &VenueToken) -> Result<Pubkey, ApiError> {
        self.reserves
            .iter()
            .find(|(t, _)| t.symbol == token.symbol)
            .map(|(_, reserve)| *reserve)
            .ok_or_else(|| not_configured(VenueId::LendA, token.symbol))
    }

    /// The reserve for `token`, read and checked: owned by the program, of the token's mint.
    async fn reserve(
        &self,
        ledger: &dyn Ledger,
        token: &VenueToken,
    ) -> Result<(Pubkey, Reserve), ApiError> {
        let address = self.reserve_of(token)?;
        let account = read(ledger, &[address]).await?.remove(0);
        account
            .filter(|a| a.owner == self.program)
            .and_then(|a| Reserve::decode(&a.data))
            .filter(|r| r.liquidity_mint == token.mint)
            .map(|r| (address, r))
            .ok_or_else(|| unreadable(VenueId::LendA, "reserve"))
    }
}

#[async_trait::async_trait]
impl Venue for LendA {
    fn id(&self) -> VenueId {
        VenueId::LendA
    }

    fn label(&self) -> &'static str {
        "SPL Token Lending"
    }

    fn tokens(&self) -> Vec<VenueToken> {
        self.reserves.iter().map(|(t, _)| *t).collect()
    }

    fn live_on(&self) -> &'static [Cluster] {
        // Mainnet's operating program of this family (Solend/Save) differs in its account
        // lists; it is not wired yet (docs/decisions.md).
        &[Cluster::Devnet]
    }

    fn lender(&self) -> Option<&dyn Lender> {
        Some(self)
    }

    async fn market(
        &self,
        ledger: &dyn Ledger,
        token: &VenueToken,
    ) -> Result<MarketRead, ApiError> {
        let (_, reserve) = self.reserve(ledger, token).await?;
        Ok(MarketRead {
            rate: reserve.rate(),
            supply_apy_pct: Some(reserve.supply_apy_pct()),
            borrow_apr_pct: Some(reserve.borrow_apr_pct()),
            available: Some(reserve.available),
        })
    }

    async fn deposit(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
        amount: u64,
    ) -> Result<Deposit, ApiError> {
        // The refresh in the transaction brings the reserve's numbers up to date on chain; its
        // accounts are all this needs, so the wallet's two token accounts are the one read.
        let r = self.reserve_accounts(ledger, token).await?;
        let collateral = AssociatedAccount::of(wallet, &r.reserve.collateral_mint, &TOKEN_PROGRAM);
        let source_account = AssociatedAccount::of(wallet, &token.mint, &TOKEN_PROGRAM);
        let found = read(ledger, &[source_account.address, collateral.address]).await?;
        let source = TokenLeg::source_as_read(wallet, token, amount, &source_account, &found[0])?;
        let mut ixs = source.before;
        if found[1].is_none() {
            ixs.push(collateral.create(wallet));
        }
        ixs.push(refresh_reserve(&r.program, &r.address, &r.reserve));
        ixs.push(deposit_reserve_liquidity(
            &r,
            &source.account,
            &collateral.address,
            wallet,
            amount,
        ));
        ixs.extend(source.after);
        Ok(Deposit {
            transactions: vec![ixs],
            receipt_account: collateral.address,
        })
    }

    async fn withdraw(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
        receipt: u64,
    ) -> Result<Transactions, ApiError> {
        let r = self.reserve_accounts(ledger, token).await?;
        let destination = TokenLeg::destination(ledger, wallet, token).await?;
        let collateral =
            associated_token_account(wallet, &r.reserve.collateral_mint, &TOKEN_PROGRAM);
        let mut ixs = destination.before;
        // Collateral a borrow moved into the obligation comes back out first (what stays must
        // cover the obligation's debts: the program refuses otherwise).
        let state = self.loan_state(ledger, wallet).await?;
        let held = state
            .reserves
            .iter()
            .position(|(t, _)| t.symbol == token.symbol)
            .map_or(0, |i| state.in_wallet[i]);
        let pledged = state.pledged(&r.address);
        if held < receipt && pledged > 0 {
            if state
                .obligation
                .as_ref()
                .is_some_and(|o| !o.borrows.is_empty())
            {
                return Err(ApiError::coded(
                    poem::http::StatusCode::CONFLICT,
                    "collateral_pledged",
                    "this deposit is collateral of an open lend_a borrow: repay it first",
                ));
            }
            let (refreshes, refresh) = self.refreshed(&state, &[r.address], &[]);
            ixs.extend(refreshes);
            ixs.push(refresh);
            ixs.push(withdraw_obligation_collateral(
                &r,
                &collateral,
                &state.obligation_address,
                wallet,
                (receipt - held).min(pledged),
            ));
        }
        ixs.push(refresh_reserve(&r.program, &r.address, &r.reserve));
        ixs.push(redeem_reserve_collateral(
            &r,
            &collateral,
            &destination.account,
            wallet,
            receipt,
        ));
        ixs.extend(destination.after);
        Ok(vec![ixs])
    }

    async fn receipt_balance(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
    ) -> Result<u64, ApiError> {
        // In the wallet, and pledged to its obligation by a borrow.
        let state = self.loan_state(ledger, wallet).await?;
        let r = state.reserve_of(token)?;
        let index = state
            .reserves
            .iter()
            .position(|(_, known)| known.address == r.address)
            .expect("reserve_of found it");
        Ok(state.in_wallet[index].saturating_add(state.pledged(&r.address)))
    }
}

#[async_trait::async_trait]
impl Lender for LendA {
    async fn loan_account(&self, ledger: &dyn Ledger, wallet: &Pubkey) -> Result<Pubkey, ApiError> {
        Ok(self.obligation_address(wallet, &self.loan_market(ledger).await?))
    }

    async fn borrow(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
        amount: u64,
    ) -> Result<Transactions, ApiError> {
        let state = self.loan_state(ledger, wallet).await?;
        let borrow_reserve = state.reserve_of(token)?.clone();
        if !borrow_reserve.reserve.can_lend(amount) {
            return Err(too_little_unlent(VenueId::LendA, "this borrow"));
        }
        let market = borrow_reserve.reserve.lending_market;
        // Every collateral token in the wallet goes into the obligation.
        let moving: Vec<(&ReserveAccounts, u64)> = state
            .reserves
            .iter()
            .zip(&state.in_wallet)
            .filter(|(_, held)| **held > 0)
            .map(|((_, r), held)| (r, *held))
            .collect();
        let pledged = state
            .obligation
            .as_ref()
            .is_some_and(|o| !o.deposits.is_empty());
        if moving.is_empty() && !pledged {
            return Err(no_collateral(VenueId::LendA));
        }
        let mut transactions = Vec::new();
        if state.obligation.is_none() {
            transactions.push(self.obligation_setup(wallet, &state, &market)?);
        }
        let new: Vec<Pubkey> = moving.iter().map(|(r, _)| r.address).collect();
        let (refreshes, refresh) = self.refreshed(&state, &[borrow_reserve.address], &new);
        let mut ixs = refreshes;
        for (r, held) in &moving {
            let source =
                associated_token_account(wallet, &r.reserve.collateral_mint, &TOKEN_PROGRAM);
            ixs.push(deposit_obligation_collateral(
                r,
                &source,
                &state.obligation_address,
                wallet,
                *held,
            ));
        }
        ixs.push(refresh);
        let destination = TokenLeg::destination(ledger, wallet, token).await?;
        ixs.extend(destination.before);
        ixs.push(borrow_obligation_liquidity(
            &borrow_reserve,
            &destination.account,
            &state.obligation_address,
            wallet,
            amount,
        ));
        ixs.extend(destination.after);
        transactions.push(ixs);
        Ok(transactions)
    }

    async fn repay(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
    ) -> Result<(Transactions, u64), ApiError> {
        let state = self.loan_state(ledger, wallet).await?;
        let r = state.reserve_of(token)?.clone();
        let owed = state.obligation.as_ref().map_or(0, |o| {
            o.owed(&r.address, r.reserve.cumulative_borrow_rate_wads)
        });
        if owed == 0 {
            return Err(ApiError::not_found("lend_a debt in that token"));
        }
        // Interest accrues between this read and the refresh in the transaction: the wallet
        // brings 0.1 % more (and a base unit), and repays whatever is owed then.
        let margin = owed / 1_000 + 1;
        let source = TokenLeg::source(ledger, wallet, token, owed.saturating_add(margin)).await?;
        let (refreshes, refresh) = self.refreshed(&state, &[r.address], &[]);
        let mut ixs = source.before;
        ixs.extend(refreshes);
        ixs.push(refresh);
        ixs.push(repay_obligation_liquidity(
            &r,
            &source.account,
            &state.obligation_address,
            wallet,
            u64::MAX,
        ));
        ixs.extend(source.after);
        Ok((vec![ixs], owed))
    }

    async fn loan(&self, ledger: &dyn Ledger, wallet: &Pubkey) -> Result<LoanRead, ApiError> {
        let state = self.loan_state(ledger, wallet).await?;
        let Some(obligation) = &state.obligation else {
            return Ok(LoanRead {
                slot: state.slot,
                loan: None,
            });
        };
        let collateral = obligation
            .deposits
            .iter()
            .filter_map(|(reserve, amount)| {
                let (token, r) = state.reserve(reserve)?;
                Some((token.symbol, r.reserve.rate().value_of(*amount)))
            })
            .collect();
        let debts = obligation
            .borrows
            .iter()
            .filter_map(|(reserve, _, _)| {
                let (token, r) = state.reserve(reserve)?;
                Some((
                    token.symbol,
                    obligation.owed(reserve, r.reserve.cumulative_borrow_rate_wads),
                ))
            })
            .collect();
        Ok(LoanRead {
            slot: state.slot,
            loan: Some(Loan {
                account: state.obligation_address,
                collateral,
                debts,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reserve packed at the pinned offsets, independently of [`Reserve::decode`].
    fn packed(available: u64, borrowed_wads: u128, collateral_supply: u64) -> Vec<u8> {
        let mut data = vec![0u8; RESERVE_LEN];
        data[0] = 1;
        data[10..42].copy_from_slice(&[7; 32]);
        data[42..74].copy_from_slice(&[8; 32]);
        data[74] = 9;
        data[75..107].copy_from_slice(&[10; 32]);
        data[139..171].copy_from_slice(&[11; 32]);
        data[171..179].copy_from_slice(&available.to_le_bytes());
        data[179..195].copy_from_slice(&borrowed_wads.to_le_bytes());
        data[227..259].copy_from_slice(&[12; 32]);
        data[259..267].copy_from_slice(&collateral_supply.to_le_bytes());
        data[299] = 80; // optimal utilisation %
        data[303] = 0; // min borrow rate %
        data[304] = 8; // optimal borrow rate %
        data[305] = 100; // max borrow rate %
        data
    }

    #[test]
    fn a_reserve_is_read_at_the_pinned_offsets() {
        let reserve = Reserve::decode(&packed(1_000, 3_000 * WAD, 3_800)).unwrap();
        assert_eq!(reserve.lending_market, Pubkey::new_from_array([7; 32]));
        assert_eq!(reserve.liquidity_mint, Pubkey::new_from_array([8; 32]));
        assert_eq!(reserve.liquidity_supply, Pubkey::new_from_array([10; 32]));
        assert_eq!(reserve.oracle, Pubkey::new_from_array([11; 32]));
        assert_eq!(reserve.collateral_mint, Pubkey::new_from_array([12; 32]));
        assert_eq!(reserve.available, 1_000);
        assert_eq!(reserve.collateral_supply, 3_800);
        // 4,000 of liquidity against 3,800 collateral tokens.
        assert_eq!(reserve.rate().value_of(3_800), 4_000);
        assert_eq!(reserve.rate().receipt_for(4_000), 3_800);
        assert_eq!(reserve.utilization(), 0.75);
        // Below the kink: 0 + 0.75 / 0.8 × 8 % = 7.5 %.
        assert!((reserve.borrow_apr_pct() - 7.5).abs() < 1e-9);
        // Supply APR 7.5 % × 0.75 = 5.625 %, compounded per slot ≈ 5.786 %.
        let apy = reserve.supply_apy_pct();
        assert!((apy - 5.786).abs() < 0.001, "{apy}");
        let mut wrong = packed(1, 0, 0);
        wrong[0] = 2;
        assert!(Reserve::decode(&wrong).is_none(), "another layout version");
        assert!(Reserve::decode(&packed(1, 0, 0)[..570]).is_none(), "short");
        assert_eq!(
            Reserve::decode(&packed(0, 0, 0)).unwrap().rate(),
            ExchangeRate::PAR
        );
    }

    #[test]
    fn above_the_kink_the_rate_climbs_to_the_maximum() {
        // 90 % utilised: 8 + (0.9 − 0.8) / 0.2 × (100 − 8) = 54 %.
        let reserve = Reserve::decode(&packed(100, 900 * WAD, 1_000)).unwrap();
        assert!((reserve.borrow_apr_pct() - 54.0).abs() < 1e-9);
    }

    #[test]
    fn instructions_follow_the_published_layout() {
        let program = DEVNET_PROGRAM;
        let reserve = Reserve::decode(&packed(1, 0, 0)).unwrap();
        let (address, source, destination, owner) = (
            Pubkey::new_from_array([20; 32]),
            Pubkey::new_from_array([21; 32]),
            Pubkey::new_from_array([22; 32]),
            Pubkey::new_from_array([23; 32]),
        );
        let accounts = ReserveAccounts::new(program, address, reserve.clone());
        let deposit = deposit_reserve_liquidity(&accounts, &source, &destination, &owner, 258);
        assert_eq!(deposit.data, [4, 2, 1, 0, 0, 0, 0, 0, 0]);
        let flags: Vec<(bool, bool)> = deposit
            .accounts
            .iter()
            .map(|m| (m.is_signer, m.is_writable))
            .collect();
        let (r, w, s) = ((false, false), (false, true), (true, false));
        assert_eq!(flags, [w, w, w, w, w, r, r, s, r, r]);
        assert_eq!(deposit.accounts[3].pubkey, reserve.liquidity_supply);
        assert_eq!(deposit.accounts[4].pubkey, reserve.collateral_mint);
        // The market's authority: the program address of the market alone.
        assert_eq!(
            deposit.accounts[6].pubkey,
            Pubkey::find_program_address(&[reserve.lending_market.as_ref()], &program).0
        );
        assert_eq!(deposit.accounts[8].pubkey, CLOCK_SYSVAR);
        let redeem = redeem_reserve_collateral(&accounts, &destination, &source, &owner, 1);
        assert_eq!(redeem.data, [5, 1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(redeem.accounts[3].pubkey, reserve.collateral_mint);
        assert_eq!(redeem.accounts[4].pubkey, reserve.liquidity_supply);
        let refresh = refresh_reserve(&program, &address, &reserve);
        assert_eq!(refresh.data, [3]);
        assert_eq!(
            refresh
                .accounts
                .iter()
                .map(|m| m.pubkey)
                .collect::<Vec<_>>(),
            [address, reserve.oracle, CLOCK_SYSVAR]
        );
    }

    #[test]
    fn obligation_instructions_follow_the_published_layout() {
        let program = DEVNET_PROGRAM;
        let mut data = packed(1, 0, 0);
        data[107..139].copy_from_slice(&[13; 32]); // fee receiver
        data[267..299].copy_from_slice(&[14; 32]); // collateral supply account
        let reserve = Reserve::decode(&data).unwrap();
        assert_eq!(reserve.fee_receiver, Pubkey::new_from_array([13; 32]));
        assert_eq!(reserve.collateral_vault, Pubkey::new_from_array([14; 32]));
        let r = ReserveAccounts::new(program, Pubkey::new_from_array([20; 32]), reserve.clone());
        let (obligation, owner, user) = (
            Pubkey::new_from_array([30; 32]),
            Pubkey::new_from_array([31; 32]),
            Pubkey::new_from_array([32; 32]),
        );
        let (r_, w, s) = ((false, false), (false, true), (true, false));
        let flags = |ix: &Instruction| -> Vec<(bool, bool)> {
            ix.accounts
                .iter()
                .map(|m| (m.is_signer, m.is_writable))
                .collect()
        };

        let init = init_obligation(&program, &obligation, &reserve.lending_market, &owner);
        assert_eq!(init.data, [6]);
        assert_eq!(flags(&init), [w, r_, s, r_, r_, r_]);
        assert_eq!(init.accounts[4].pubkey, RENT_SYSVAR);

        let deposit = deposit_obligation_collateral(&r, &user, &obligation, &owner, 5);
        assert_eq!(deposit.data, [8, 5, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(flags(&deposit), [w, w, r_, w, r_, s, s, r_, r_]);
        assert_eq!(deposit.accounts[1].pubkey, reserve.collateral_vault);

        let withdraw = withdraw_obligation_collateral(&r, &user, &obligation, &owner, 5);
        assert_eq!(withdraw.data[0], 9);
        assert_eq!(flags(&withdraw), [w, w, r_, w, r_, r_, s, r_, r_]);
        assert_eq!(withdraw.accounts[0].pubkey, reserve.collateral_vault);
        assert_eq!(withdraw.accounts[5].pubkey, r.authority);

        let borrow = borrow_obligation_liquidity(&r, &user, &obligation, &owner, 258);
        // The amount, then a slippage limit of 0.
        assert_eq!(
            borrow.data,
            [10, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(flags(&borrow), [w, w, w, w, w, r_, r_, s, r_, r_]);
        assert_eq!(borrow.accounts[0].pubkey, reserve.liquidity_supply);
        assert_eq!(borrow.accounts[3].pubkey, reserve.fee_receiver);

        let repay = repay_obligation_liquidity(&r, &user, &obligation, &owner, u64::MAX);
        assert_eq!(repay.data, [11, 255, 255, 255, 255, 255, 255, 255, 255]);
        assert_eq!(flags(&repay), [w, w, w, w, r_, s, r_, r_]);
        assert_eq!(repay.accounts[1].pubkey, reserve.liquidity_supply);

        let (a, b) = (
            Pubkey::new_from_array([40; 32]),
            Pubkey::new_from_array([41; 32]),
        );
        let refresh = refresh_obligation(&program, &obligation, &[a], &[b]);
        assert_eq!(refresh.data, [7]);
        assert_eq!(
            refresh
                .accounts
                .iter()
                .map(|m| m.pubkey)
                .collect::<Vec<_>>(),
            [obligation, CLOCK_SYSVAR, a, b]
        );
        assert_eq!(flags(&refresh), [w, r_, r_, r_]);
    }

    #[test]
    fn an_obligation_is_read_at_the_pinned_offsets_and_its_debt_grows_with_the_rate() {
        let mut data = vec![0u8; OBLIGATION_LEN];
        data[0] = 1;
        data[10..42].copy_from_slice(&[7; 32]);
        data[42..74].copy_from_slice(&[8; 32]);
        data[138] = 1;
        data[139] = 1;
        // One deposit (56 bytes), then one borrow.
        data[140..172].copy_from_slice(&[9; 32]);
        data[172..180].copy_from_slice(&950u64.to_le_bytes());
        data[196..228].copy_from_slice(&[10; 32]);
        data[228..244].copy_from_slice(&WAD.to_le_bytes());
        data[244..260].copy_from_slice(&(300 * WAD + 1).to_le_bytes());
        let o = Obligation::decode(&data).unwrap();
        assert_eq!(o.lending_market, Pubkey::new_from_array([7; 32]));
        assert_eq!(o.owner, Pubkey::new_from_array([8; 32]));
        assert_eq!(o.deposits, [(Pubkey::new_from_array([9; 32]), 950)]);
        let reserve = Pubkey::new_from_array([10; 32]);
        assert_eq!(o.borrow_reserves(), [reserve]);
        // 300 and a hair owes 301 at the same rate (rounded up), 330.0…01 → 331 at 1.1.
        assert_eq!(o.owed(&reserve, WAD), 301);
        assert_eq!(o.owed(&reserve, WAD * 11 / 10), 331);
        assert_eq!(o.owed(&Pubkey::new_from_array([11; 32]), WAD), 0);
        let mut exact = data.clone();
        exact[244..260].copy_from_slice(&(300 * WAD).to_le_bytes());
        assert_eq!(
            Obligation::decode(&exact)
                .unwrap()
                .owed(&reserve, WAD * 11 / 10),
            330
        );
        let mut uninitialised = data.clone();
        uninitialised[0] = 0;
        assert!(Obligation::decode(&uninitialised).is_none());
        assert!(Obligation::decode(&data[..915]).is_none());
    }

    #[test]
    fn a_borrow_pays_its_fee_out_of_the_unlent_liquidity() {
        let mut data = vec![0u8; RESERVE_LEN];
        data[offsets::VERSION] = RESERVE_VERSION;
        data[offsets::AVAILABLE_AMOUNT..][..8].copy_from_slice(&10_000u64.to_le_bytes());
        // 0.1 %.
        let wad = u64::try_from(WAD / 1_000).unwrap();
        data[offsets::BORROW_FEE_WAD..][..8].copy_from_slice(&wad.to_le_bytes());
        let reserve = Reserve::decode(&data).unwrap();
        assert_eq!(reserve.borrow_fee_wad, wad);
        assert_eq!(reserve.borrow_fee(0), 0);
        assert_eq!(reserve.borrow_fee(100), 1, "at least one unit");
        assert_eq!(reserve.borrow_fee(1_499), 1);
        assert_eq!(reserve.borrow_fee(1_500), 2, "1.5 rounds up");
        assert_eq!(reserve.borrow_fee(u64::MAX), 18_446_744_073_709_552);
        // 9,990 and its fee of 10 take all 10,000; one more unit does not fit.
        assert!(reserve.can_lend(9_990));
        assert!(!reserve.can_lend(9_991));
        // With a host's share the minimum is two units.
        data[offsets::HOST_FEE_PERCENTAGE] = 20;
        let hosted = Reserve::decode(&data).unwrap();
        assert_eq!(hosted.borrow_fee(100), 2);
        // No fee: the amount alone.
        data[offsets::BORROW_FEE_WAD..][..8].copy_from_slice(&0u64.to_le_bytes());
        let free = Reserve::decode(&data).unwrap();
        assert!(free.can_lend(10_000));
        assert!(!free.can_lend(10_001));
    }
}
