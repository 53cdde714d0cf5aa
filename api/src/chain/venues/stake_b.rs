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

use super::{
    anchor_data, anchor_discriminator, key_at, le_u64, read, receipt_account, token_balance,
    unreadable, Cluster, Deposit, ExchangeRate, MarketRead, Transactions, Venue, VenueToken,
    NATIVE_MINT,
};
use crate::chain::holdings::{associated_token_account, TOKEN_PROGRAM};
use crate::chain::ledger::Ledger;
use crate::error::ApiError;
use crate::values::{TokenSymbol, VenueId};

pub const PROGRAM: Pubkey = Pubkey::from_str_const("MarBmsSgKXdrN1egZf5sqe1TMai9K1rChYNDJgjq7aD");
pub const STATE: Pubkey = Pubkey::from_str_const("8szGkuLTAux9XMgZ2vtY39jVSowEcpBfFfD8hXSEqdGC");

/// `State` offsets.
pub mod state {
    pub const MSOL_MINT: usize = 8;
    pub const TREASURY_MSOL_ACCOUNT: usize = 104;
    pub const LIQ_POOL_MSOL_LEG: usize = 420;
    /// SOL per mSOL × 2^32 (`PRICE_DENOMINATOR`).
    pub const MSOL_PRICE: usize = 512;
}
pub const PRICE_DENOMINATOR: u128 = 1 << 32;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    pub msol_mint: Pubkey,
    pub treasury_msol_account: Pubkey,
    pub liq_pool_msol_leg: Pubkey,
    pub msol_price: u64,
}

impl State {
    pub fn decode(data: &[u8]) -> Option<State> {
        if data.get(..8)? != anchor_discriminator("account:State") {
            return None;
        }
        Some(State {
            msol_mint: key_at(data, state::MSOL_MINT)?,
            treasury_msol_account: key_at(data, state::TREASURY_MSOL_ACCOUNT)?,
            liq_pool_msol_leg: key_at(data, state::LIQ_POOL_MSOL_LEG)?,
            msol_price: le_u64(data, state::MSOL_PRICE)?,
        })
    }

    pub fn rate(&self) -> ExchangeRate {
        if self.msol_price == 0 {
            return ExchangeRate::PAR;
        }
        ExchangeRate {
            liquidity: self.msol_price as u128,
            receipt: PRICE_DENOMINATOR,
        }
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
        read(ledger, &[STATE])
            .await?
            .remove(0)
            .filter(|a| a.owner == PROGRAM)
            .and_then(|a| State::decode(&a.data))
            .ok_or_else(|| unreadable(VenueId::StakeB, "state"))
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
