//! Claiming a wallet's Echo Pool share: a prepared `claim_sol` carrying the amount and proof the
//! keeper stored for it, confirmed by signature through the one runner. The claim itself is on
//! chain (its receipt PDA makes it once per wallet and epoch); confirm records nothing of its
//! own and refreshes the epoch, the receipt and the pool, so reads show the claim at once.

use narrative_sdk::crucible_pool::SOL_MINT;
use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::{crucible_claims, echo_allocations, echo_distributions};
use poem::http::StatusCode;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};
use serde::{Deserialize, Serialize};

use super::keeper::CLOSED;
use crate::chain::{MoneyFlow, Prepared, Unsigned};
use crate::clock::iso;
use crate::domain::system::ensure_running;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{Base58Signature, Component, PreparedId, Wallet};

/// What prepare stores for confirm.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub epoch_number: u64,
    pub epoch_address: String,
    pub amount_lamports: u64,
    pub conviction_lamports: u64,
    pub creator_lamports: u64,
}

pub struct PreparedClaim {
    pub unsigned: Unsigned,
    pub params: Params,
}

pub type Confirmed = crate::chain::Confirmed<Params>;

/// The Echo Pool claim flow.
pub struct EchoClaim;

/// Whether `wallet` claimed from `epoch` (its receipt is indexed).
async fn claimed(
    db: &DatabaseConnection,
    epoch: &Pubkey,
    wallet: &Wallet,
) -> Result<bool, ApiError> {
    let receipt = pda::crucible::claim_receipt(epoch, &wallet.pubkey());
    Ok(crucible_claims::Entity::find_by_id(receipt.to_string())
        .one(db)
        .await?
        .is_some())
}

/// Prepares the claim of `wallet`'s share of epoch `epoch_number`, or, without one, of the
/// oldest epoch it can claim now.
pub async fn prepare(
    state: &AppState,
    wallet: Wallet,
    epoch_number: Option<u64>,
) -> Result<PreparedClaim, ApiError> {
    let db = state.store.db();
    ensure_running(db, Component::EchoPool).await?;
    let mut query = echo_allocations::Entity::find()
        .filter(echo_allocations::Column::Wallet.eq(wallet.to_string()))
        .order_by_asc(echo_allocations::Column::EpochNumber);
    if let Some(number) = epoch_number {
        query = query.filter(echo_allocations::Column::EpochNumber.eq(number as i64));
    }
    let allocations = query.all(db).await?;
    let nothing = || {
        ApiError::coded(
            StatusCode::NOT_FOUND,
            "nothing_to_claim",
            "this wallet has no Echo Pool share to claim",
        )
    };
    let now = state.now();
    // The first refusal met, answered when no allocation can be claimed now.
    let mut refusal: Option<ApiError> = None;
    for allocation in allocations {
        let Some(distribution) =
            echo_distributions::Entity::find_by_id(allocation.epoch_address.clone())
                .one(db)
                .await?
                .filter(|d| d.status == CLOSED)
        else {
            continue;
        };
        let epoch: Pubkey = allocation
            .epoch_address
            .parse()
            .map_err(ApiError::internal)?;
        if claimed(db, &epoch, &wallet).await? {
            refusal.get_or_insert_with(|| {
                ApiError::coded(
                    StatusCode::CONFLICT,
                    "already_claimed",
                    "this epoch's share was claimed",
                )
                .with("epoch_number", allocation.epoch_number)
            });
            continue;
        }
        let (Some(opens), Some(closes)) = (distribution.claimable_at, distribution.claim_deadline)
        else {
            continue;
        };
        if now < opens {
            refusal.get_or_insert_with(|| {
                ApiError::coded(
                    StatusCode::FORBIDDEN,
                    "claim_not_open",
                    "claims open once the epoch's root has waited out its challenge delay",
                )
                .with("epoch_number", allocation.epoch_number)
                .with("claimable_at", iso(opens))
            });
            continue;
        }
        if now > closes {
            refusal.get_or_insert_with(|| {
                ApiError::coded(
                    StatusCode::FORBIDDEN,
                    "claim_window_closed",
                    "the epoch's claim window has passed; its remainder rolls into a later epoch",
                )
                .with("epoch_number", allocation.epoch_number)
                .with("claim_deadline", iso(closes))
            });
            continue;
        }
        let proof: Vec<String> =
            serde_json::from_value(allocation.proof.clone()).map_err(ApiError::internal)?;
        let proof: Vec<[u8; 32]> = proof
            .iter()
            .map(|node| {
                let mut bytes = [0u8; 32];
                hex::decode_to_slice(node, &mut bytes).map(|_| bytes)
            })
            .collect::<Result<_, _>>()
            .map_err(ApiError::internal)?;
        let number = allocation.epoch_number as u64;
        let amount = allocation.amount as u64;
        let ix = narrative_sdk::crucible::claim_sol(wallet.pubkey(), number, amount, proof);
        let params = Params {
            epoch_number: number,
            epoch_address: allocation.epoch_address.clone(),
            amount_lamports: amount,
            conviction_lamports: allocation.conviction_amount as u64,
            creator_lamports: allocation.creator_amount as u64,
        };
        let unsigned = state
            .chain
            .prepare(&EchoClaim, &wallet, &[ix], &params)
            .await?;
        return Ok(PreparedClaim { unsigned, params });
    }
    Err(refusal.unwrap_or_else(nothing))
}

#[async_trait::async_trait]
impl MoneyFlow for EchoClaim {
    const KIND: &'static str = "echo_claim";
    type Params = Params;
    type Confirmed = Confirmed;

    fn component(&self, _: &Params) -> Component {
        Component::EchoPool
    }

    /// The epoch (its claimed total), the wallet's receipt and the pool.
    fn changed(&self, prepared: &Prepared<Params>) -> Vec<Pubkey> {
        let epoch = pda::crucible::epoch(&SOL_MINT, prepared.params.epoch_number);
        vec![
            epoch,
            pda::crucible::claim_receipt(&epoch, &prepared.wallet.pubkey()),
            pda::crucible::sol_asset_pool(),
        ]
    }

    async fn answer(
        &self,
        _: &DatabaseConnection,
        prepared: &Prepared<Params>,
        _fresh: bool,
    ) -> Result<Confirmed, ApiError> {
        prepared.confirmed()
    }
}

pub async fn confirm(
    state: &AppState,
    prepared_id: PreparedId,
    signature: Base58Signature,
) -> Result<Confirmed, ApiError> {
    state
        .chain
        .confirm(&EchoClaim, prepared_id, signature)
        .await
}
