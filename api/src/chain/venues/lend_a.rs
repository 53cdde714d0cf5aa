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
    key_at, le_u128, le_u64, not_configured, read, token_balance, unreadable, AssociatedAccount,
    Cluster, ExchangeRate, MarketRead, TokenLeg, Transactions, Venue, VenueToken, CLOCK_SYSVAR,
};
use crate::chain::holdings::{associated_token_account, TOKEN_PROGRAM};
use crate::chain::ledger::Ledger;
use crate::error::ApiError;
use crate::values::VenueId;

/// The program on devnet (`token-lending/program/src/lib.rs`, README's deployment table).
pub const DEVNET_PROGRAM: Pubkey =
    Pubkey::from_str_const("6TvznH3B2e3p2mbhufNBpgSrLx6UkgvxtVQvopEZ2kuH");

/// Instruction tags (`LendingInstruction` order).
pub const REFRESH_RESERVE: u8 = 3;
pub const DEPOSIT_RESERVE_LIQUIDITY: u8 = 4;
pub const REDEEM_RESERVE_COLLATERAL: u8 = 5;

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
    pub const LIQUIDITY_ORACLE: usize = 139;
    pub const AVAILABLE_AMOUNT: usize = 171;
    pub const BORROWED_AMOUNT_WADS: usize = 179;
    pub const COLLATERAL_MINT: usize = 227;
    pub const COLLATERAL_MINT_TOTAL_SUPPLY: usize = 259;
    pub const OPTIMAL_UTILIZATION_RATE: usize = 299;
    pub const MIN_BORROW_RATE: usize = 303;
    pub const OPTIMAL_BORROW_RATE: usize = 304;
    pub const MAX_BORROW_RATE: usize = 305;
}

/// A reserve as this service reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reserve {
    pub lending_market: Pubkey,
    pub liquidity_mint: Pubkey,
    pub liquidity_supply: Pubkey,
    pub oracle: Pubkey,
    pub available: u64,
    pub borrowed_wads: u128,
    pub collateral_mint: Pubkey,
    pub collateral_supply: u64,
    /// Percent: the utilisation at the curve's kink, and the borrow rates at 0, the kink and 100 %.
    pub optimal_utilization: u8,
    pub min_borrow_rate: u8,
    pub optimal_borrow_rate: u8,
    pub max_borrow_rate: u8,
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
            oracle: key_at(data, LIQUIDITY_ORACLE)?,
            available: le_u64(data, AVAILABLE_AMOUNT)?,
            borrowed_wads: le_u128(data, BORROWED_AMOUNT_WADS)?,
            collateral_mint: key_at(data, COLLATERAL_MINT)?,
            collateral_supply: le_u64(data, COLLATERAL_MINT_TOTAL_SUPPLY)?,
            optimal_utilization: data[OPTIMAL_UTILIZATION_RATE],
            min_borrow_rate: data[MIN_BORROW_RATE],
            optimal_borrow_rate: data[OPTIMAL_BORROW_RATE],
            max_borrow_rate: data[MAX_BORROW_RATE],
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
    Pubkey::find_program_address(&[market.as_ref()], program).0
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
        })
    }

    async fn deposit(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        token: &VenueToken,
        amount: u64,
    ) -> Result<Transactions, ApiError> {
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
        Ok(vec![ixs])
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
        let (_, reserve) = self.reserve(ledger, token).await?;
        let collateral = associated_token_account(wallet, &reserve.collateral_mint, &TOKEN_PROGRAM);
        Ok(token_balance(&read(ledger, &[collateral]).await?[0]))
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
}
