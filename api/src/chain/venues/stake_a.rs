//! `stake_a`: the SPL stake-pool program's Jito pool (jitoSOL), mainnet-targeted. SOL goes in
//! by `DepositSol`; unstaking is refused (spec 7 `jito_unstake_not_supported`: the holder swaps
//! jitoSOL elsewhere).
//!
//! Interface pinned from solana-program/stake-pool `program/src/instruction.rs` and
//! `state.rs` (docs/venues-research.md §3): a native program whose instruction data is a Borsh
//! enum (one-byte variant, then fields); `DepositSol` is variant 14 with its lamports.

use anchor_lang::solana_program::instruction::{AccountMeta, Instruction};
use anchor_lang::solana_program::system_program;
use narrative_sdk::Pubkey;

use super::{
    key_at, le_u64, read, receipt_account, token_balance, unreadable, Cluster, Deposit,
    ExchangeRate, MarketRead, Transactions, Venue, VenueToken, Withdrawals, NATIVE_MINT,
};
use crate::chain::holdings::{associated_token_account, TOKEN_PROGRAM};
use crate::chain::ledger::Ledger;
use crate::error::ApiError;
use crate::values::{TokenSymbol, VenueId};

pub const MAINNET_PROGRAM: Pubkey =
    Pubkey::from_str_const("SPoo1Ku8WFXoNDMHPsrGSTSG1Y47rzgn41SLUNakuHy");
/// Jito's pool on mainnet (jito-stake-unstake-reference `constants/index.ts`).
pub const JITO_POOL: Pubkey = Pubkey::from_str_const("Jito4APyf642JPZPx3hGc6WWJ8zPKtRbRs4P815Awbb");
pub const DEPOSIT_SOL: u8 = 14;

/// The fixed prefix of `StakePool` (Borsh, no discriminator).
pub mod pool {
    pub const ACCOUNT_TYPE: usize = 0;
    pub const RESERVE_STAKE: usize = 130;
    pub const POOL_MINT: usize = 162;
    pub const MANAGER_FEE_ACCOUNT: usize = 194;
    pub const TOKEN_PROGRAM: usize = 226;
    pub const TOTAL_LAMPORTS: usize = 258;
    pub const POOL_TOKEN_SUPPLY: usize = 266;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StakePool {
    pub reserve_stake: Pubkey,
    pub pool_mint: Pubkey,
    pub manager_fee_account: Pubkey,
    pub token_program: Pubkey,
    pub total_lamports: u64,
    pub pool_token_supply: u64,
}

impl StakePool {
    pub fn decode(data: &[u8]) -> Option<StakePool> {
        use pool::*;
        // account_type 1 = StakePool.
        if data.get(ACCOUNT_TYPE) != Some(&1) {
            return None;
        }
        Some(StakePool {
            reserve_stake: key_at(data, RESERVE_STAKE)?,
            pool_mint: key_at(data, POOL_MINT)?,
            manager_fee_account: key_at(data, MANAGER_FEE_ACCOUNT)?,
            token_program: key_at(data, TOKEN_PROGRAM)?,
            total_lamports: le_u64(data, TOTAL_LAMPORTS)?,
            pool_token_supply: le_u64(data, POOL_TOKEN_SUPPLY)?,
        })
    }

    pub fn rate(&self) -> ExchangeRate {
        if self.pool_token_supply == 0 || self.total_lamports == 0 {
            return ExchangeRate::PAR;
        }
        ExchangeRate {
            liquidity: self.total_lamports as u128,
            receipt: self.pool_token_supply as u128,
        }
    }
}

pub fn withdraw_authority(program: &Pubkey, pool: &Pubkey) -> Pubkey {
    narrative_sdk::derive::find_program_address(&[pool.as_ref(), b"withdraw"], program).0
}

/// `DepositSol` of `lamports` from `wallet` into its pool-token account (which is also the
/// referrer account, as Jito's reference client passes it).
pub fn deposit_sol(
    program: &Pubkey,
    pool_address: &Pubkey,
    pool: &StakePool,
    wallet: &Pubkey,
    pool_tokens_to: &Pubkey,
    lamports: u64,
) -> Instruction {
    let mut data = vec![DEPOSIT_SOL];
    data.extend_from_slice(&lamports.to_le_bytes());
    Instruction {
        program_id: *program,
        accounts: vec![
            AccountMeta::new(*pool_address, false),
            AccountMeta::new_readonly(withdraw_authority(program, pool_address), false),
            AccountMeta::new(pool.reserve_stake, false),
            AccountMeta::new(*wallet, true),
            AccountMeta::new(*pool_tokens_to, false),
            AccountMeta::new(pool.manager_fee_account, false),
            AccountMeta::new(*pool_tokens_to, false),
            AccountMeta::new(pool.pool_mint, false),
            AccountMeta::new_readonly(system_program::ID, false),
            AccountMeta::new_readonly(pool.token_program, false),
        ],
        data,
    }
}

pub struct StakeA {
    pub program: Pubkey,
    pub pool: Pubkey,
}

impl StakeA {
    async fn read_pool(&self, ledger: &dyn Ledger) -> Result<StakePool, ApiError> {
        read(ledger, &[self.pool])
            .await?
            .remove(0)
            .filter(|a| a.owner == self.program)
            .and_then(|a| StakePool::decode(&a.data))
            .ok_or_else(|| unreadable(VenueId::StakeA, "stake pool"))
    }
}

#[async_trait::async_trait]
impl Venue for StakeA {
    fn id(&self) -> VenueId {
        VenueId::StakeA
    }

    fn label(&self) -> &'static str {
        "Jito Liquid Staking"
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

    fn withdrawals(&self) -> Withdrawals {
        Withdrawals::Refused("jito_unstake_not_supported")
    }

    async fn market(&self, ledger: &dyn Ledger, _: &VenueToken) -> Result<MarketRead, ApiError> {
        // The pool's APY needs its ratio across epochs: from the rate API, not this read.
        Ok(MarketRead {
            rate: self.read_pool(ledger).await?.rate(),
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
        let pool = self.read_pool(ledger).await?;
        let (to, create) = receipt_account(ledger, wallet, &pool.pool_mint).await?;
        let mut ixs: Vec<Instruction> = create.into_iter().collect();
        ixs.push(deposit_sol(
            &self.program,
            &self.pool,
            &pool,
            wallet,
            &to,
            amount,
        ));
        Ok(Deposit {
            transactions: vec![ixs],
            receipt_account: to,
        })
    }

    async fn withdraw(
        &self,
        _: &dyn Ledger,
        _: &Pubkey,
        _: &VenueToken,
        _: u64,
    ) -> Result<Transactions, ApiError> {
        Err(super::unstake_refused())
    }

    async fn receipt_balance(
        &self,
        ledger: &dyn Ledger,
        wallet: &Pubkey,
        _: &VenueToken,
    ) -> Result<u64, ApiError> {
        let pool = self.read_pool(ledger).await?;
        let account = associated_token_account(wallet, &pool.pool_mint, &TOKEN_PROGRAM);
        Ok(token_balance(&read(ledger, &[account]).await?[0]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deposit_sol_is_variant_14_with_ten_accounts() {
        let mut data = vec![0u8; 346];
        data[0] = 1;
        data[pool::RESERVE_STAKE..][..32].copy_from_slice(&[1; 32]);
        data[pool::POOL_MINT..][..32].copy_from_slice(&[2; 32]);
        data[pool::MANAGER_FEE_ACCOUNT..][..32].copy_from_slice(&[3; 32]);
        data[pool::TOKEN_PROGRAM..][..32].copy_from_slice(TOKEN_PROGRAM.as_ref());
        data[pool::TOTAL_LAMPORTS..][..8].copy_from_slice(&1_100u64.to_le_bytes());
        data[pool::POOL_TOKEN_SUPPLY..][..8].copy_from_slice(&1_000u64.to_le_bytes());
        let pool = StakePool::decode(&data).unwrap();
        assert_eq!(pool.rate().value_of(1_000), 1_100);
        let wallet = Pubkey::new_from_array([9; 32]);
        let to = Pubkey::new_from_array([8; 32]);
        let ix = deposit_sol(&MAINNET_PROGRAM, &JITO_POOL, &pool, &wallet, &to, 5);
        assert_eq!(ix.data, [14, 5, 0, 0, 0, 0, 0, 0, 0]);
        let keys: Vec<(Pubkey, bool, bool)> = ix
            .accounts
            .iter()
            .map(|m| (m.pubkey, m.is_signer, m.is_writable))
            .collect();
        assert_eq!(
            keys,
            [
                (JITO_POOL, false, true),
                (
                    withdraw_authority(&MAINNET_PROGRAM, &JITO_POOL),
                    false,
                    false
                ),
                (pool.reserve_stake, false, true),
                (wallet, true, true),
                (to, false, true),
                (pool.manager_fee_account, false, true),
                (to, false, true),
                (pool.pool_mint, false, true),
                (system_program::ID, false, false),
                (TOKEN_PROGRAM, false, false),
            ]
        );
        data[0] = 2;
        assert!(
            StakePool::decode(&data).is_none(),
            "a validator list is no pool"
        );
    }
}
