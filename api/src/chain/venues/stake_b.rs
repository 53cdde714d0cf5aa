//! `stake_b`: Marinade liquid staking (mSOL), mainnet-targeted. SOL in by `deposit`, out by
//! `liquid_unstake` through Marinade's liquidity pool.
//!
//! Interface pinned from Marinade's published IDL (marinade-finance/marinade-ts-sdk
//! `src/programs/idl/json/marinade_finance.json`, committed at
//! tests/ts/venues/idl/marinade.json) and its program's state (docs/venues-research.md §4). The
//! tests in tests/ts build each instruction with `@coral-xyz/anchor` from that IDL.

use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::system_program;
use narrative_sdk::Pubkey;

use poem::http::StatusCode;

use super::{
    above_deposit_limit, anchor_data, anchor_discriminator, key_at, le_u32, le_u64,
    liquidity_insufficient, mul_div, read, read_each, receipt_account, token_balance, unreadable,
    Cluster, Deposit, ExchangeRate, MarketRead, Transactions, Venue, VenueToken, NATIVE_MINT,
};
use crate::chain::holdings::{associated_token_account, TOKEN_PROGRAM};
use crate::chain::ledger::{Ledger, LedgerAccount};
use crate::error::ApiError;
use crate::values::{TokenSymbol, VenueId};

pub const PROGRAM: Pubkey = Pubkey::from_str_const("MarBmsSgKXdrN1egZf5sqe1TMai9K1rChYNDJgjq7aD");
pub const STATE: Pubkey = Pubkey::from_str_const("8szGkuLTAux9XMgZ2vtY39jVSowEcpBfFfD8hXSEqdGC");

/// `State` offsets (docs/venues-research.md §4.4).
pub mod state {
    pub const MSOL_MINT: usize = 8;
    pub const TREASURY_MSOL_ACCOUNT: usize = 104;
    pub const RENT_EXEMPT_FOR_TOKEN_ACC: usize = 138;
    pub const DELAYED_UNSTAKE_COOLING_DOWN: usize = 226;
    pub const TOTAL_ACTIVE_BALANCE: usize = 376;
    pub const LIQ_POOL_MSOL_LEG: usize = 420;
    pub const LP_LIQUIDITY_TARGET: usize = 452;
    /// `Fee { basis_points: u32 }`.
    pub const LP_MAX_FEE: usize = 460;
    pub const LP_MIN_FEE: usize = 464;
    pub const AVAILABLE_RESERVE_BALANCE: usize = 496;
    pub const MSOL_SUPPLY: usize = 504;
    /// SOL per mSOL × 2^32 (`PRICE_DENOMINATOR`), for display: Marinade's own conversions use
    /// the totals below.
    pub const MSOL_PRICE: usize = 512;
    pub const CIRCULATING_TICKET_BALANCE: usize = 528;
    pub const MIN_DEPOSIT: usize = 544;
    pub const MIN_WITHDRAW: usize = 552;
    pub const STAKING_SOL_CAP: usize = 560;
    pub const EMERGENCY_COOLING_DOWN: usize = 568;
    pub const PAUSED: usize = 608;
}
pub const PRICE_DENOMINATOR: u128 = 1 << 32;
const MAX_BASIS_POINTS: u64 = 10_000;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct State {
    pub msol_mint: Pubkey,
    pub treasury_msol_account: Pubkey,
    pub liq_pool_msol_leg: Pubkey,
    pub msol_price: u64,
    /// Lamports the SOL leg keeps back as its rent reserve.
    pub rent_exempt_for_token_acc: u64,
    /// SOL backing every mSOL: active stake, cooling down and in reserve, less what unclaimed
    /// delayed-unstake tickets are owed (`State::total_virtual_staked_lamports`).
    pub total_virtual_staked: u64,
    pub msol_supply: u64,
    pub lp_liquidity_target: u64,
    pub lp_max_fee_bps: u32,
    pub lp_min_fee_bps: u32,
    pub min_deposit: u64,
    pub min_withdraw: u64,
    pub paused: bool,
    /// Active, cooling down and in reserve (`State::total_lamports_under_control`): what the
    /// staking cap is measured against.
    pub under_control: u64,
    /// The most lamports Marinade keeps under control (`staking_sol_cap`).
    pub staking_sol_cap: u64,
}

/// Why Marinade would refuse a deposit or a liquid unstake as the state stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Paused,
    /// The deposit is below `min_deposit` (`DepositAmountIsTooLow`).
    BelowMinimumDeposit {
        min_deposit: u64,
    },
    /// The liquidity pool's SOL leg holds less than the payout (`InsufficientLiquidity`).
    InsufficientLiquidity,
    /// The payout is below `min_withdraw` (`WithdrawAmountIsTooLow`).
    BelowMinimumWithdrawal {
        min_withdraw: u64,
    },
    /// The lamports the deposit stakes would pass `staking_sol_cap` (`StakingIsCapped`);
    /// a deposit of at most `room` lamports still goes through.
    StakingCapped {
        room: u64,
    },
}

impl State {
    pub fn decode(data: &[u8]) -> Option<State> {
        use state::*;
        if data.get(..8)? != anchor_discriminator("account:State") {
            return None;
        }
        let under_control = le_u64(data, TOTAL_ACTIVE_BALANCE)?
            .checked_add(le_u64(data, DELAYED_UNSTAKE_COOLING_DOWN)?)?
            .checked_add(le_u64(data, EMERGENCY_COOLING_DOWN)?)?
            .checked_add(le_u64(data, AVAILABLE_RESERVE_BALANCE)?)?;
        Some(State {
            msol_mint: key_at(data, MSOL_MINT)?,
            treasury_msol_account: key_at(data, TREASURY_MSOL_ACCOUNT)?,
            liq_pool_msol_leg: key_at(data, LIQ_POOL_MSOL_LEG)?,
            msol_price: le_u64(data, MSOL_PRICE)?,
            rent_exempt_for_token_acc: le_u64(data, RENT_EXEMPT_FOR_TOKEN_ACC)?,
            total_virtual_staked: under_control
                .saturating_sub(le_u64(data, CIRCULATING_TICKET_BALANCE)?),
            msol_supply: le_u64(data, MSOL_SUPPLY)?,
            lp_liquidity_target: le_u64(data, LP_LIQUIDITY_TARGET)?,
            lp_max_fee_bps: le_u32(data, LP_MAX_FEE)?,
            lp_min_fee_bps: le_u32(data, LP_MIN_FEE)?,
            min_deposit: le_u64(data, MIN_DEPOSIT)?,
            min_withdraw: le_u64(data, MIN_WITHDRAW)?,
            paused: *data.get(PAUSED)? != 0,
            under_control,
            staking_sol_cap: le_u64(data, STAKING_SOL_CAP)?,
        })
    }

    /// What an mSOL is worth, as Marinade converts (`State::msol_to_sol`: the staked total
    /// over the supply); 1:1 before any mSOL exists, as the program has it.
    pub fn rate(&self) -> ExchangeRate {
        if self.msol_supply == 0 {
            return ExchangeRate::PAR;
        }
        ExchangeRate {
            liquidity: u128::from(self.total_virtual_staked),
            receipt: u128::from(self.msol_supply),
        }
    }

    /// The liquidity pool's fee in basis points when `left` lamports stay in its SOL leg after
    /// the unstake: `lp_max_fee` for an empty leg, falling linearly to `lp_min_fee` at the
    /// liquidity target (`LiqPool::linear_fee`).
    fn linear_fee_bps(&self, left: u64) -> u64 {
        if left >= self.lp_liquidity_target {
            return u64::from(self.lp_min_fee_bps);
        }
        let delta = u64::from(self.lp_max_fee_bps.saturating_sub(self.lp_min_fee_bps));
        let off = mul_div(
            u128::from(delta),
            u128::from(left),
            u128::from(self.lp_liquidity_target),
        );
        u64::from(self.lp_max_fee_bps).saturating_sub(off)
    }

    /// Whether a deposit of `lamports` is within the staking cap whatever the liquidity pool's
    /// mSOL leg fills of it (the leg then need not be read).
    pub fn within_cap_alone(&self, lamports: u64) -> bool {
        self.under_control
            .checked_add(lamports)
            .is_some_and(|after| after <= self.staking_sol_cap)
    }

    /// Refuses a `deposit` of `lamports` that would pass the staking cap when the pool's mSOL
    /// leg holds `msol_leg` (`deposit.rs`): the leg sells the depositor what it holds first
    /// (no fee), and only the lamports left after that are staked and checked against
    /// `staking_sol_cap`. The room is what the leg sells plus what the cap leaves.
    pub fn check_staking_cap(&self, lamports: u64, msol_leg: u64) -> Result<(), Refusal> {
        let rate = self.rate();
        let buy_order = rate.receipt_for(lamports);
        let sold = buy_order.min(msol_leg);
        let staked = if sold == buy_order {
            0
        } else {
            lamports.saturating_sub(rate.value_of(sold))
        };
        let cap_room = self.staking_sol_cap.saturating_sub(self.under_control);
        if staked > cap_room {
            return Err(Refusal::StakingCapped {
                room: rate.value_of(msol_leg).saturating_add(cap_room),
            });
        }
        Ok(())
    }

    /// Refuses a `deposit` of `lamports` as the program's first checks would (`deposit.rs`):
    /// paused, or below `min_deposit` (the staking cap: [`State::check_staking_cap`]).
    pub fn check_deposit(&self, lamports: u64) -> Result<(), Refusal> {
        if self.paused {
            return Err(Refusal::Paused);
        }
        if lamports < self.min_deposit {
            return Err(Refusal::BelowMinimumDeposit {
                min_deposit: self.min_deposit,
            });
        }
        Ok(())
    }

    /// The lamports `liquid_unstake` of `msol_amount` pays when the pool's SOL leg holds
    /// `sol_leg_lamports`, computed as the program computes it (`liquid_unstake.rs`): the fee
    /// is taken in mSOL at the rate the leg is left at, and the rest converted, rounded down.
    pub fn liquid_unstake_payout(
        &self,
        msol_amount: u64,
        sol_leg_lamports: u64,
    ) -> Result<u64, Refusal> {
        if self.paused {
            return Err(Refusal::Paused);
        }
        let rate = self.rate();
        let available = sol_leg_lamports.saturating_sub(self.rent_exempt_for_token_acc);
        let removed = rate.value_of(msol_amount);
        let fee_bps = if removed >= available {
            u64::from(self.lp_max_fee_bps)
        } else {
            self.linear_fee_bps(available - removed)
        };
        let msol_fee = mul_div(
            u128::from(msol_amount),
            u128::from(fee_bps),
            u128::from(MAX_BASIS_POINTS),
        );
        let paid = rate.value_of(msol_amount.saturating_sub(msol_fee));
        if paid.saturating_add(self.rent_exempt_for_token_acc) > sol_leg_lamports {
            return Err(Refusal::InsufficientLiquidity);
        }
        if paid < self.min_withdraw {
            return Err(Refusal::BelowMinimumWithdrawal {
                min_withdraw: self.min_withdraw,
            });
        }
        Ok(paid)
    }
}

fn pda(suffix: &[u8]) -> Pubkey {
    narrative_sdk::derive::find_program_address(&[STATE.as_ref(), suffix], &PROGRAM).0
}

pub fn reserve_pda() -> Pubkey {
    pda(b"reserve")
}
pub fn msol_mint_authority() -> Pubkey {
    pda(b"st_mint")
}
pub fn liq_pool_sol_leg() -> Pubkey {
    pda(b"liq_sol")
}
pub fn liq_pool_msol_leg_authority() -> Pubkey {
    pda(b"liq_st_sol_authority")
}

/// `deposit` of `lamports` from `wallet`, mSOL minted to `mint_to`.
pub fn deposit(state: &State, wallet: &Pubkey, mint_to: &Pubkey, lamports: u64) -> Instruction {
    Instruction {
        program_id: PROGRAM,
        accounts: vec![
            AccountMeta::new(STATE, false),
            AccountMeta::new(state.msol_mint, false),
            AccountMeta::new(liq_pool_sol_leg(), false),
            AccountMeta::new(state.liq_pool_msol_leg, false),
            AccountMeta::new_readonly(liq_pool_msol_leg_authority(), false),
            AccountMeta::new(reserve_pda(), false),
            AccountMeta::new(*wallet, true),
            AccountMeta::new(*mint_to, false),
            AccountMeta::new_readonly(msol_mint_authority(), false),
            AccountMeta::new_readonly(system_program::ID, false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
        ],
        data: anchor_data("deposit", &lamports.to_le_bytes()),
    }
}

/// `liquid_unstake` of `msol_amount` from `msol_from`, SOL to the wallet.
pub fn liquid_unstake(
    state: &State,
    wallet: &Pubkey,
    msol_from: &Pubkey,
    msol_amount: u64,
) -> Instruction {
    Instruction {
        program_id: PROGRAM,
        accounts: vec![
            AccountMeta::new(STATE, false),
            AccountMeta::new(state.msol_mint, false),
            AccountMeta::new(liq_pool_sol_leg(), false),
            AccountMeta::new(state.liq_pool_msol_leg, false),
            AccountMeta::new(state.treasury_msol_account, false),
            AccountMeta::new(*msol_from, false),
            AccountMeta::new_readonly(*wallet, true),
            AccountMeta::new(*wallet, false),
            AccountMeta::new_readonly(system_program::ID, false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
        ],
        data: anchor_data("liquid_unstake", &msol_amount.to_le_bytes()),
    }
}

pub struct StakeB;

impl StakeB {
    async fn read_state(&self, ledger: &dyn Ledger) -> Result<State, ApiError> {
        let [state] = read_each(ledger, [STATE]).await?;
        decode_state(state)
    }
}

/// Marinade's state from its account as read: 503 `venue_state_unreadable` when it is missing,
/// owned by another program or not a `State`.
fn decode_state(account: Option<LedgerAccount>) -> Result<State, ApiError> {
    account
        .filter(|a| a.owner == PROGRAM)
        .and_then(|a| State::decode(&a.data))
        .ok_or_else(|| unreadable(VenueId::StakeB, "state"))
}

/// The answer to a deposit or liquid unstake Marinade would refuse now: the wallet is told before it
/// signs a transaction that would fail.
fn refused(refusal: Refusal) -> ApiError {
    match refusal {
        Refusal::Paused => ApiError::unavailable(
            "venue_paused",
            "Marinade is paused; it refuses every deposit and withdrawal until it resumes",
        ),
        Refusal::BelowMinimumDeposit { min_deposit } => ApiError::coded(
            StatusCode::BAD_REQUEST,
            "amount_below_minimum",
            format!("a Marinade deposit is at least {min_deposit} lamports"),
        ),
        Refusal::InsufficientLiquidity => liquidity_insufficient(
            "Marinade's liquidity pool holds too little SOL for this unstake now",
        ),
        Refusal::StakingCapped { room } => {
            above_deposit_limit("this deposit would pass Marinade's staking cap", room)
        }
        Refusal::BelowMinimumWithdrawal { min_withdraw } => ApiError::coded(
            StatusCode::BAD_REQUEST,
            "amount_below_minimum",
            format!(
                "this unstake would pay less than Marinade's minimum withdrawal of {min_withdraw} lamports"
            ),
        ),
    }
}

#[async_trait::async_trait]
impl Venue for StakeB {
    fn id(&self) -> VenueId {
        VenueId::StakeB
    }

    fn label(&self) -> &'static str {
        "Marinade Liquid Staking"
    }

    fn tokens(&self) -> Vec<VenueToken> {
        vec![VenueToken {
            symbol: TokenSymbol::Sol,
            mint: NATIVE_MINT,
            decimals: 9,
        }]
    }

    fn live_on(&self) -> &'static [Cluster] {
        &[Cluster::Mainnet]
    }

    async fn market(&self, ledger: &dyn Ledger, _: &VenueToken) -> Result<MarketRead, ApiError> {
        Ok(MarketRead {
            rate: self.read_state(ledger).await?.rate(),
            supply_apy_pct: None,
            borrow_apr_pct: None,
            // The liquid unstake's own bound is the pool's SOL leg (`payout`).
            available: None,
        })
    }

    async fn deposit(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        _: &VenueToken,
        amount: u64,
    ) -> Result<Deposit, ApiError> {
        let state = self.read_state(ledger).await?;
        state.check_deposit(amount).map_err(refused)?;
        if !state.within_cap_alone(amount) {
            // Near the cap (never on mainnet as it stands): what the pool's mSOL leg sells
            // decides.
            let [leg] = read_each(ledger, [state.liq_pool_msol_leg]).await?;
            state
                .check_staking_cap(amount, token_balance(&leg))
                .map_err(refused)?;
        }
        let (to, create) = receipt_account(ledger, wallet, &state.msol_mint).await?;
        let mut ixs: Vec<Instruction> = create.into_iter().collect();
        ixs.push(deposit(&state, wallet, &to, amount));
        Ok(Deposit {
            transactions: vec![ixs],
            receipt_account: to,
        })
    }

    async fn withdraw(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        _: &VenueToken,
        receipt: u64,
    ) -> Result<Transactions, ApiError> {
        let state = self.read_state(ledger).await?;
        let from = associated_token_account(wallet, &state.msol_mint, &TOKEN_PROGRAM);
        Ok(vec![vec![liquid_unstake(&state, wallet, &from, receipt)]])
    }

    /// What `liquid_unstake` pays: the receipt's value less the liquidity pool's fee (0.3 % to
    /// 3 % on mainnet as the pool stands), read from the state and the pool's SOL leg together.
    async fn payout(
        &self,
        ledger: &dyn Ledger,
        _: &VenueToken,
        receipt: u64,
    ) -> Result<u64, ApiError> {
        let [state, sol_leg] = read_each(ledger, [STATE, liq_pool_sol_leg()]).await?;
        let state = decode_state(state)?;
        let sol_leg_lamports = sol_leg.map_or(0, |a| a.lamports);
        state
            .liquid_unstake_payout(receipt, sol_leg_lamports)
            .map_err(refused)
    }

    async fn receipt_balance(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        _: &VenueToken,
    ) -> Result<u64, ApiError> {
        let state = self.read_state(ledger).await?;
        let account = associated_token_account(wallet, &state.msol_mint, &TOKEN_PROGRAM);
        Ok(token_balance(&read(ledger, &[account]).await?[0]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOL: u64 = 1_000_000_000;
    const RENT: u64 = 2_039_280;

    /// A `State` of 1,000 mSOL backed by 1,200 SOL (1,000 active, 100 and 50 cooling down,
    /// 100 in reserve, 50 owed to tickets), a pool targeting 100 SOL at 3 % to 0.3 %.
    fn state_data() -> Vec<u8> {
        use state::*;
        let mut data = vec![0u8; 620];
        let mut put = |at: usize, bytes: &[u8]| data[at..at + bytes.len()].copy_from_slice(bytes);
        put(0, &anchor_discriminator("account:State"));
        put(RENT_EXEMPT_FOR_TOKEN_ACC, &RENT.to_le_bytes());
        put(TOTAL_ACTIVE_BALANCE, &(1_000 * SOL).to_le_bytes());
        put(DELAYED_UNSTAKE_COOLING_DOWN, &(100 * SOL).to_le_bytes());
        put(EMERGENCY_COOLING_DOWN, &(50 * SOL).to_le_bytes());
        put(AVAILABLE_RESERVE_BALANCE, &(100 * SOL).to_le_bytes());
        put(CIRCULATING_TICKET_BALANCE, &(50 * SOL).to_le_bytes());
        put(MSOL_SUPPLY, &(1_000 * SOL).to_le_bytes());
        put(LP_LIQUIDITY_TARGET, &(100 * SOL).to_le_bytes());
        put(LP_MAX_FEE, &300u32.to_le_bytes());
        put(LP_MIN_FEE, &30u32.to_le_bytes());
        data
    }

    #[test]
    fn the_rate_is_the_staked_total_over_the_supply() {
        let state = State::decode(&state_data()).unwrap();
        assert_eq!(state.total_virtual_staked, 1_200 * SOL);
        assert_eq!(state.rate().value_of(10 * SOL), 12 * SOL);
        let empty = State {
            msol_supply: 0,
            ..state
        };
        assert_eq!(empty.rate(), ExchangeRate::PAR);
    }

    #[test]
    fn a_liquid_unstake_pays_the_value_less_the_pools_fee() {
        let state = State::decode(&state_data()).unwrap();
        // 10 mSOL (12 SOL) from a leg of 1,000 SOL: 988 SOL stay, above the target, so the
        // minimum fee of 0.3 %: 0.03 mSOL, and 9.97 mSOL paid at 1.2.
        assert_eq!(
            state.liquid_unstake_payout(10 * SOL, 1_000 * SOL + RENT),
            Ok(11_964_000_000)
        );
        // From a leg of 62 SOL: 50 stay, half the target, so 3 % − 2.7 % × 50/100 = 1.65 %.
        assert_eq!(
            state.liquid_unstake_payout(10 * SOL, 62 * SOL + RENT),
            Ok(11_802_000_000)
        );
        // From a leg of exactly 12 SOL: nothing stays, the maximum fee of 3 %.
        assert_eq!(
            state.liquid_unstake_payout(10 * SOL, 12 * SOL + RENT),
            Ok(11_640_000_000)
        );
        // From 11 SOL the leg cannot pay even after the fee.
        assert_eq!(
            state.liquid_unstake_payout(10 * SOL, 11 * SOL + RENT),
            Err(Refusal::InsufficientLiquidity)
        );
    }

    #[test]
    fn the_staking_cap_counts_only_what_the_pools_msol_leg_does_not_sell() {
        // 1,250 SOL under control, a cap 3 SOL above it; the mSOL leg holds 2 mSOL (2.4 SOL).
        let mut data = state_data();
        data[state::STAKING_SOL_CAP..][..8].copy_from_slice(&(1_253 * SOL).to_le_bytes());
        let s = State::decode(&data).unwrap();
        assert_eq!(s.under_control, 1_250 * SOL);
        assert!(s.within_cap_alone(3 * SOL));
        assert!(!s.within_cap_alone(3 * SOL + 1));
        let leg = 2 * SOL;
        // 6 SOL: the leg sells 2 mSOL for 2.4 SOL, the other 3.6 would be staked past the cap.
        let room = 5 * SOL + 4 * SOL / 10;
        assert_eq!(
            s.check_staking_cap(6 * SOL, leg),
            Err(Refusal::StakingCapped { room })
        );
        // 5.4 SOL stakes exactly the 3 SOL left; one lamport more does not fit.
        assert_eq!(s.check_staking_cap(room, leg), Ok(()));
        assert_eq!(
            s.check_staking_cap(room + 1, leg),
            Err(Refusal::StakingCapped { room })
        );
        // A leg that fills the whole order stakes nothing.
        assert_eq!(s.check_staking_cap(6 * SOL, 10 * SOL), Ok(()));
        // Past the cap already (lowered below what is under control): only the leg's sale.
        data[state::STAKING_SOL_CAP..][..8].copy_from_slice(&(1_000 * SOL).to_le_bytes());
        let capped = State::decode(&data).unwrap();
        assert_eq!(
            capped.check_staking_cap(3 * SOL, leg),
            Err(Refusal::StakingCapped {
                room: 2_400_000_000
            })
        );
        assert_eq!(capped.check_staking_cap(2_400_000_000, leg), Ok(()));
    }

    #[test]
    fn deposits_and_unstakes_are_refused_as_marinade_refuses_them() {
        let state = State::decode(&state_data()).unwrap();
        let floor = State {
            min_withdraw: 12 * SOL,
            ..state.clone()
        };
        assert_eq!(
            floor.liquid_unstake_payout(10 * SOL, 1_000 * SOL),
            Err(Refusal::BelowMinimumWithdrawal {
                min_withdraw: 12 * SOL
            })
        );
        let paused = State {
            paused: true,
            ..state.clone()
        };
        assert_eq!(
            paused.liquid_unstake_payout(10 * SOL, 1_000 * SOL),
            Err(Refusal::Paused)
        );
        assert_eq!(paused.check_deposit(SOL), Err(Refusal::Paused));
        let minimum = State {
            min_deposit: SOL / 100 + 1,
            ..state
        };
        assert_eq!(
            minimum.check_deposit(SOL / 100),
            Err(Refusal::BelowMinimumDeposit {
                min_deposit: SOL / 100 + 1
            })
        );
        assert_eq!(minimum.check_deposit(SOL / 100 + 1), Ok(()));
    }

    #[test]
    fn automatic_routing_passes_over_every_deposit_refusal() {
        for refusal in [
            Refusal::Paused,
            Refusal::BelowMinimumDeposit { min_deposit: 1 },
            Refusal::StakingCapped { room: 1 },
        ] {
            assert!(
                crate::chain::venues::refuses_as_it_stands(&refused(refusal)),
                "{refusal:?}"
            );
        }
    }

    #[test]
    fn the_published_discriminators() {
        assert_eq!(
            hex::encode(anchor_discriminator("global:liquid_unstake")),
            "1e1e77f0bfe30c10"
        );
        assert_eq!(
            hex::encode(anchor_discriminator("account:State")),
            "d8926b5e684bb6b1"
        );
    }
}
