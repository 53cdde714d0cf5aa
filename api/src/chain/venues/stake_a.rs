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

use poem::http::StatusCode;

use super::{
    key_at, le_u64, mul_div, read, read_each, receipt_account, token_balance, unreadable, Bought,
    Cluster, Deposit, ExchangeRate, MarketRead, Transactions, Venue, VenueToken, Withdrawals,
    NATIVE_MINT,
};
use crate::chain::holdings::{associated_token_account, TOKEN_PROGRAM};
use crate::chain::ledger::{decode_clock, Ledger, LedgerAccount, CLOCK_SYSVAR};
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
    pub const LAST_UPDATE_EPOCH: usize = 274;
    /// Where the variable-length part starts (`next_epoch_fee`, after `epoch_fee`); read in
    /// order from here.
    pub const NEXT_EPOCH_FEE: usize = 346;
}

/// A stake-pool fee: `numerator / denominator` of an amount, rounded up (`Fee::apply`); none
/// when the denominator is 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fee {
    pub denominator: u64,
    pub numerator: u64,
}

impl Fee {
    fn apply(&self, amount: u64) -> Option<u64> {
        if self.denominator == 0 {
            return Some(0);
        }
        let product = u128::from(amount).checked_mul(u128::from(self.numerator))?;
        u64::try_from(product.div_ceil(u128::from(self.denominator))).ok()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StakePool {
    pub reserve_stake: Pubkey,
    pub pool_mint: Pubkey,
    pub manager_fee_account: Pubkey,
    pub token_program: Pubkey,
    pub total_lamports: u64,
    pub pool_token_supply: u64,
    /// The epoch the pool's balances were last updated in: deposits are refused in a later
    /// one until the permissionless update runs.
    pub last_update_epoch: u64,
    /// Who must co-sign every SOL deposit, when the pool restricts them.
    pub sol_deposit_authority: Option<Pubkey>,
    /// Taken in pool tokens from each SOL deposit.
    pub sol_deposit_fee: Fee,
    /// The referrer's per cent of that fee.
    pub sol_referral_fee: u8,
}

/// Why the stake-pool program would refuse a SOL deposit as the pool stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepositRefusal {
    /// `StakeListAndPoolOutOfDate`: the pool was last updated in an earlier epoch.
    NotUpdated { last_update_epoch: u64, epoch: u64 },
    /// Deposits need the pool's SOL deposit authority's signature.
    Restricted,
    /// `DepositTooSmall`, or fees beyond what the deposit mints.
    TooSmall,
}

/// Borsh fields in order, from an offset.
struct Fields<'a> {
    data: &'a [u8],
    at: usize,
}

impl Fields<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let bytes = self.data.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(bytes)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn fee(&mut self) -> Option<Fee> {
        Some(Fee {
            denominator: self.u64()?,
            numerator: self.u64()?,
        })
    }
    /// `Option<Pubkey>`.
    fn optional_key(&mut self) -> Option<Option<Pubkey>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(Pubkey::new_from_array(
                self.take(32)?.try_into().ok()?,
            ))),
            _ => None,
        }
    }
    /// `FutureEpoch<Fee>`: None, One(fee) or Two(fee); skipped.
    fn skip_future_fee(&mut self) -> Option<()> {
        match self.u8()? {
            0 => Some(()),
            1 | 2 => self.fee().map(|_| ()),
            _ => None,
        }
    }
}

impl StakePool {
    pub fn decode(data: &[u8]) -> Option<StakePool> {
        use pool::*;
        // account_type 1 = StakePool.
        if data.get(ACCOUNT_TYPE) != Some(&1) {
            return None;
        }
        let mut rest = Fields {
            data,
            at: NEXT_EPOCH_FEE,
        };
        rest.skip_future_fee()?; // next_epoch_fee
        rest.optional_key()?; // preferred_deposit_validator_vote_address
        rest.optional_key()?; // preferred_withdraw_validator_vote_address
        rest.fee()?; // stake_deposit_fee
        rest.fee()?; // stake_withdrawal_fee
        rest.skip_future_fee()?; // next_stake_withdrawal_fee
        rest.u8()?; // stake_referral_fee
        let sol_deposit_authority = rest.optional_key()?;
        let sol_deposit_fee = rest.fee()?;
        let sol_referral_fee = rest.u8()?;
        Some(StakePool {
            reserve_stake: key_at(data, RESERVE_STAKE)?,
            pool_mint: key_at(data, POOL_MINT)?,
            manager_fee_account: key_at(data, MANAGER_FEE_ACCOUNT)?,
            token_program: key_at(data, TOKEN_PROGRAM)?,
            total_lamports: le_u64(data, TOTAL_LAMPORTS)?,
            pool_token_supply: le_u64(data, POOL_TOKEN_SUPPLY)?,
            last_update_epoch: le_u64(data, LAST_UPDATE_EPOCH)?,
            sol_deposit_authority,
            sol_deposit_fee,
            sol_referral_fee,
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

    /// The pool tokens a `DepositSol` of `lamports` credits the depositor whose account is
    /// also the referrer (as [`deposit_sol`] builds it), computed as `process_deposit_sol`
    /// does: the tokens the lamports are worth, less the SOL deposit fee (rounded up), plus
    /// the referrer's share of that fee (rounded down). `None` where the program refuses the
    /// deposit as too small: the fee leaves the depositor nothing.
    pub fn sol_deposit_tokens(&self, lamports: u64) -> Option<u64> {
        let minted = self.rate().receipt_for(lamports);
        let fee = self.sol_deposit_fee.apply(minted)?;
        let kept = minted.checked_sub(fee).filter(|kept| *kept > 0)?;
        let referral = mul_div(u128::from(fee), u128::from(self.sol_referral_fee), 100);
        Some(kept.saturating_add(referral))
    }

    /// [`StakePool::sol_deposit_tokens`] of a deposit made in `epoch`, or why the program
    /// would refuse it as the pool stands.
    pub fn check_sol_deposit(&self, lamports: u64, epoch: u64) -> Result<u64, DepositRefusal> {
        if self.last_update_epoch < epoch {
            return Err(DepositRefusal::NotUpdated {
                last_update_epoch: self.last_update_epoch,
                epoch,
            });
        }
        if self.sol_deposit_authority.is_some() {
            return Err(DepositRefusal::Restricted);
        }
        self.sol_deposit_tokens(lamports)
            .ok_or(DepositRefusal::TooSmall)
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
    fn decode_pool(&self, account: Option<LedgerAccount>) -> Result<StakePool, ApiError> {
        account
            .filter(|a| a.owner == self.program)
            .and_then(|a| StakePool::decode(&a.data))
            .ok_or_else(|| unreadable(VenueId::StakeA, "stake pool"))
    }

    async fn read_pool(&self, ledger: &dyn Ledger) -> Result<StakePool, ApiError> {
        let [pool] = read_each(ledger, [self.pool]).await?;
        self.decode_pool(pool)
    }

    /// The pool and the ledger's epoch, in one read.
    async fn read_pool_in_epoch(&self, ledger: &dyn Ledger) -> Result<(StakePool, u64), ApiError> {
        let [pool, clock] = read_each(ledger, [self.pool, CLOCK_SYSVAR]).await?;
        let epoch = decode_clock(&clock)
            .map_err(|_| unreadable(VenueId::StakeA, "clock"))?
            .epoch;
        Ok((self.decode_pool(pool)?, epoch))
    }
}

/// The answer to a SOL deposit the stake pool would refuse now: the wallet is told before it
/// signs a transaction that would fail.
fn refused(refusal: DepositRefusal) -> ApiError {
    match refusal {
        DepositRefusal::NotUpdated {
            last_update_epoch,
            epoch,
        } => ApiError::unavailable(
            "venue_not_updated",
            format!(
                "the stake pool was last updated in epoch {last_update_epoch} and takes no deposits in epoch {epoch} until its update runs; retry in a few minutes"
            ),
        ),
        DepositRefusal::Restricted => ApiError::unavailable(
            "venue_deposits_restricted",
            "the stake pool takes SOL deposits only with its deposit authority's signature",
        ),
        DepositRefusal::TooSmall => ApiError::coded(
            StatusCode::BAD_REQUEST,
            "amount_below_minimum",
            "this deposit would credit no pool tokens after the pool's deposit fee",
        ),
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
            // Not withdrawn through the service (jito_unstake_not_supported).
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
        let (pool, epoch) = self.read_pool_in_epoch(ledger).await?;
        pool.check_sol_deposit(amount, epoch).map_err(refused)?;
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

    /// What the deposit credited, from the pool as read at confirm (after it landed): the
    /// tokens less the SOL deposit fee, plus the referral share the wallet's own account gets.
    /// Nothing is refused here: the deposit has landed, and it is recorded.
    async fn bought(
        &self,
        ledger: &dyn Ledger,
        _: &VenueToken,
        amount: u64,
    ) -> Result<Bought, ApiError> {
        let pool = self.read_pool(ledger).await?;
        Ok(Bought {
            rate: pool.rate(),
            // The program refused a deposit its fee left nothing of, so a landed one is
            // credited; 0 only if the pool's fee rose that far since.
            receipt: pool.sol_deposit_tokens(amount).unwrap_or(0),
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
    fn automatic_routing_passes_over_every_deposit_refusal() {
        for refusal in [
            DepositRefusal::NotUpdated {
                last_update_epoch: 1,
                epoch: 2,
            },
            DepositRefusal::Restricted,
            DepositRefusal::TooSmall,
        ] {
            assert!(
                crate::chain::venues::refuses_as_it_stands(&refused(refusal)),
                "{refusal:?}"
            );
        }
    }

    const SOL: u64 = 1_000_000_000;

    /// A pool of 1,100 SOL for 1,000 pool tokens, updated in epoch 7, whose optional fields
    /// are set where `present` says (preferred validators and the next fees), with a SOL
    /// deposit fee of `fee` (numerator, denominator) and a referral share of `referral` %.
    fn pool_data(present: bool, fee: (u64, u64), referral: u8) -> Vec<u8> {
        let mut data = vec![0u8; pool::NEXT_EPOCH_FEE];
        data[pool::ACCOUNT_TYPE] = 1;
        data[pool::POOL_MINT..][..32].copy_from_slice(&[2; 32]);
        data[pool::TOTAL_LAMPORTS..][..8].copy_from_slice(&(1_100 * SOL).to_le_bytes());
        data[pool::POOL_TOKEN_SUPPLY..][..8].copy_from_slice(&(1_000 * SOL).to_le_bytes());
        data[pool::LAST_UPDATE_EPOCH..][..8].copy_from_slice(&7u64.to_le_bytes());
        let some_fee = |tag: u8| [&[tag][..], &[5; 16]].concat();
        if present {
            data.extend(some_fee(2)); // next_epoch_fee: Two(fee)
            data.extend([&[1][..], &[6; 32]].concat()); // preferred deposit validator
            data.extend([&[1][..], &[7; 32]].concat()); // preferred withdraw validator
        } else {
            data.extend([0, 0, 0]);
        }
        data.extend([3; 32]); // stake deposit and withdrawal fees
        data.extend(if present { some_fee(1) } else { vec![0] });
        data.push(50); // stake_referral_fee
        data.push(0); // sol_deposit_authority: none
        data.extend(fee.1.to_le_bytes()); // sol_deposit_fee: denominator, then numerator
        data.extend(fee.0.to_le_bytes());
        data.push(referral);
        data.extend([0; 64]); // what follows is not read
        data
    }

    #[test]
    fn the_deposit_fee_is_read_past_the_optional_fields() {
        for present in [false, true] {
            let pool = StakePool::decode(&pool_data(present, (1, 1_000), 25)).unwrap();
            assert_eq!(
                pool.sol_deposit_fee,
                Fee {
                    denominator: 1_000,
                    numerator: 1
                },
                "optional fields present: {present}"
            );
            assert_eq!(pool.sol_referral_fee, 25);
            assert_eq!(pool.sol_deposit_authority, None);
            assert_eq!(pool.last_update_epoch, 7);
        }
        let mut bad = pool_data(false, (0, 0), 0);
        bad[pool::NEXT_EPOCH_FEE] = 3;
        assert!(
            StakePool::decode(&bad).is_none(),
            "no FutureEpoch variant 3"
        );
        let short = &pool_data(false, (0, 0), 0)[..pool::NEXT_EPOCH_FEE + 40];
        assert!(StakePool::decode(short).is_none());
    }

    #[test]
    fn a_sol_deposit_credits_its_tokens_less_the_fee_plus_the_referral_share() {
        // 1.1 SOL buys 1 pool token (1e9 units); a fee of 0.1 %, rounded up, is 1e6 units,
        // and a quarter of it comes back to the depositor as its own referrer.
        let pool = StakePool::decode(&pool_data(true, (1, 1_000), 25)).unwrap();
        assert_eq!(pool.sol_deposit_tokens(1_100_000_000), Some(999_250_000));
        assert_eq!(pool.check_sol_deposit(1_100_000_000, 7), Ok(999_250_000));
        // 3 units of lamports buy 2 units; the fee rounds up to 1.
        assert_eq!(pool.sol_deposit_tokens(3), Some(1));
        // No fee: the tokens the lamports are worth.
        let free = StakePool::decode(&pool_data(false, (0, 0), 0)).unwrap();
        assert_eq!(free.sol_deposit_tokens(1_100_000_000), Some(SOL));
    }

    #[test]
    fn a_sol_deposit_is_refused_as_the_program_refuses_it() {
        let pool = StakePool::decode(&pool_data(false, (1, 1_000), 0)).unwrap();
        assert_eq!(
            pool.check_sol_deposit(SOL, 8),
            Err(DepositRefusal::NotUpdated {
                last_update_epoch: 7,
                epoch: 8
            })
        );
        // One lamport buys no whole unit.
        assert_eq!(pool.check_sol_deposit(1, 7), Err(DepositRefusal::TooSmall));
        let restricted = StakePool {
            sol_deposit_authority: Some(Pubkey::new_from_array([4; 32])),
            ..pool
        };
        assert_eq!(
            restricted.check_sol_deposit(SOL, 7),
            Err(DepositRefusal::Restricted)
        );
    }

    #[test]
    fn deposit_sol_is_variant_14_with_ten_accounts() {
        let mut data = pool_data(false, (0, 0), 0);
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
