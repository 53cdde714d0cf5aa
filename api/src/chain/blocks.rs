//! Wallets blocked from protocol writes (spec 4.9): a wallet that screening flagged is refused
//! by every prepare with 403 `wallet_blocked` until an operator lifts the block. Blocks are
//! kept in memory under the `terms` generation, which every write to `blocked_wallets` bumps,
//! so the hot prepares ask the database nothing while no block changed, and the runner checks
//! again as of its write when one did (see `Chain::prepare_checked`).

use narrative_sdk::Pubkey;
use narrative_store::entities::blocked_wallets;
use narrative_store::freshness::{Generations, Topic};
use narrative_store::Store;
use poem::http::StatusCode;
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait, QueryFilter};

use crate::error::ApiError;
use crate::freshness::Memo;
use crate::values::Wallet;

/// Wallets whose standing is kept; past it the memo starts over (see `Memo::new`).
const KEPT_WALLETS: usize = 100_000;

/// The topic whose generation a block moves.
pub const BLOCKS_TOPIC: Topic = Topic::Terms;

pub fn wallet_blocked() -> ApiError {
    ApiError::coded(
        StatusCode::FORBIDDEN,
        "wallet_blocked",
        "this wallet is blocked from protocol writes after screening; an operator can review it",
    )
}

/// Whether `wallet` is blocked now, read in `db` (a caller's transaction sees its own writes).
pub async fn is_blocked(db: &impl ConnectionTrait, wallet: &str) -> Result<bool, DbErr> {
    Ok(blocked_wallets::Entity::find()
        .filter(blocked_wallets::Column::Wallet.eq(wallet))
        .filter(blocked_wallets::Column::LiftedAt.is_null())
        .count(db)
        .await?
        > 0)
}

pub struct WalletBlocks {
    store: Store,
    /// Keyed by the wallet's key: a prepare looks one up without allocating.
    memo: Memo<Pubkey, bool>,
}

impl WalletBlocks {
    pub fn new(store: Store) -> WalletBlocks {
        WalletBlocks {
            store,
            memo: Memo::new(BLOCKS_TOPIC, KEPT_WALLETS),
        }
    }

    /// 403 `wallet_blocked` if `wallet` is blocked as of `at`.
    pub async fn check(&self, wallet: &Wallet, at: &Generations) -> Result<(), ApiError> {
        let blocked = self
            .memo
            .get(at, wallet.pubkey(), || async {
                is_blocked(self.store.db(), &wallet.to_string()).await
            })
            .await?;
        if blocked {
            Err(wallet_blocked())
        } else {
            Ok(())
        }
    }

    /// 403 `wallet_blocked` if `wallet` is blocked, read in `db` (the caller's transaction).
    pub async fn check_in(db: &impl ConnectionTrait, wallet: &Wallet) -> Result<(), ApiError> {
        if is_blocked(db, &wallet.to_string()).await? {
            Err(wallet_blocked())
        } else {
            Ok(())
        }
    }
}
