//! The Echo Pool as clients read it (spec 2.6, 4.3): the open epoch with its projected pools,
//! the last closed epochs, a wallet's preview for the open epoch (from the keeper's own
//! computation, so it equals the claim when nothing changes before the close) and a wallet's
//! history of shares and claims.

use std::collections::HashMap;
use std::sync::Arc;

use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::{
    crucible_claims, crucible_epochs, echo_allocations, echo_distributions, program_events,
    ruffler_rounds,
};
use narrative_store::freshness::Topic;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

use super::distribution::{self, Computed, OpenEpoch};
use super::keeper::{ROLLED_OVER, SUPERSEDED, VETOED};
use super::ruffler;
use super::rules::Share;
use crate::domain::profiles::conviction;
use crate::error::ApiError;
use crate::freshness::{Covers, LastBuilt};
use crate::state::AppState;
use crate::values::Wallet;

/// Spec 8: the Echo Pool history lists the last 12 epochs.
pub const HISTORY_EPOCHS: u64 = 12;

fn not_indexed() -> ApiError {
    ApiError::coded(
        poem::http::StatusCode::NOT_FOUND,
        "echo_pool_not_found",
        "the Echo Pool (crucible_pool's SOL epochs) is not indexed yet",
    )
}

/// The open epoch and its distribution as it would be computed now.
pub struct Projection {
    pub epoch: OpenEpoch,
    pub computed: Computed,
}

/// What a projection was built from: the generations of markets (the results and the
/// winners' histories) and of the Echo Pool (epochs, distributions), the newest indexed event
/// (the forfeits are events), and the second it was computed at (its window ends a margin
/// before it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltFrom {
    markets: i64,
    echo: i64,
    newest_event: Option<i64>,
    at: i64,
}

impl Covers for BuiltFrom {
    /// Every part grows: a projection from newer data and a later second holds every result
    /// an earlier one would (its window reaches further), so it answers that request too.
    fn covers(&self, other: &BuiltFrom) -> bool {
        self.markets >= other.markets
            && self.echo >= other.echo
            && self.newest_event >= other.newest_event
            && self.at >= other.at
    }
}

/// The last projection of the open epoch. Every read of the epoch and every wallet's preview
/// needs the whole epoch's split (every win of the window, every winner's history): built once
/// for what it was built from and shared (`echo_projection_builds_total`).
pub struct ProjectionMemo(LastBuilt<BuiltFrom, Arc<Projection>>);

impl Default for ProjectionMemo {
    fn default() -> Self {
        ProjectionMemo(LastBuilt::new("echo_projection"))
    }
}

impl ProjectionMemo {
    /// The `/metrics` lines.
    pub fn render(&self) -> String {
        self.0.render()
    }
}

pub async fn current(state: &AppState, memo: &ProjectionMemo) -> Result<Arc<Projection>, ApiError> {
    let db = state.store.db();
    // Read after the request arrived: a build under the same is as new as this request needs.
    let built_from = match state.freshness.current().await {
        Ok(generations) => {
            let newest_event: Option<i64> = program_events::Entity::find()
                .select_only()
                .column_as(program_events::Column::Id.max(), "newest")
                .into_tuple()
                .one(db)
                .await?
                .flatten();
            Some(BuiltFrom {
                markets: generations.of(Topic::Markets),
                echo: generations.of(Topic::Echo),
                newest_event,
                at: state.now(),
            })
        }
        Err(error) => {
            tracing::warn!(%error, "freshness unknown: the epoch's projection is built anew");
            None
        }
    };
    // Computed at the key's second, which the kept projection is filed under.
    let at = built_from.map_or_else(|| state.now(), |key| key.at);
    let store = state.store.clone();
    memo.0
        .get(built_from, || async move {
            let db = store.db();
            let epoch = distribution::open_epoch(db)
                .await?
                .ok_or_else(not_indexed)?;
            let computed = distribution::compute(db, &epoch, at).await?;
            Ok::<_, ApiError>(Arc::new(Projection { epoch, computed }))
        })
        .await
}

/// A wallet's standing in the open epoch.
pub struct Preview {
    pub projection: Arc<Projection>,
    pub share: Share,
    pub score: conviction::Score,
    /// Its ruffler tickets in the open epoch's round.
    pub tickets: u64,
}

pub async fn preview(
    state: &AppState,
    memo: &ProjectionMemo,
    wallet: &Wallet,
) -> Result<Preview, ApiError> {
    let projection = current(state, memo).await?;
    let key = wallet.to_string();
    let db = state.store.db();
    Ok(Preview {
        share: projection
            .computed
            .split
            .shares
            .get(&key)
            .copied()
            .unwrap_or_default(),
        score: conviction::wallet_score(db, wallet).await?,
        tickets: ruffler::tickets_held(db, &key, projection.epoch.number).await?,
        projection,
    })
}

/// A closed epoch as the index and the keeper's record hold it.
pub struct ClosedEpoch {
    pub epoch: crucible_epochs::Model,
    pub distribution: Option<echo_distributions::Model>,
    pub ruffler: Option<ruffler_rounds::Model>,
}

impl ClosedEpoch {
    /// `closed`, `rolled_over`, `vetoed` or `superseded`.
    pub fn status(&self) -> &str {
        match self.distribution.as_ref().map(|d| d.status.as_str()) {
            Some(status @ (VETOED | SUPERSEDED | ROLLED_OVER)) => status,
            _ if self.epoch.status == "rolledover" => ROLLED_OVER,
            _ => "closed",
        }
    }
}

/// The last [`HISTORY_EPOCHS`] closed SOL epochs, newest first.
pub async fn history(state: &AppState) -> Result<Vec<ClosedEpoch>, ApiError> {
    let db = state.store.db();
    let epochs = crucible_epochs::Entity::find()
        .filter(crucible_epochs::Column::Mint.is_null())
        .filter(crucible_epochs::Column::Status.ne("open"))
        .filter(crucible_epochs::Column::Closed.eq(false))
        .order_by_desc(crucible_epochs::Column::Epoch)
        .limit(HISTORY_EPOCHS)
        .all(db)
        .await?;
    let addresses: Vec<String> = epochs.iter().map(|e| e.address.clone()).collect();
    let mut distributions: HashMap<String, echo_distributions::Model> =
        echo_distributions::Entity::find()
            .filter(echo_distributions::Column::EpochAddress.is_in(addresses))
            .all(db)
            .await?
            .into_iter()
            .map(|d| (d.epoch_address.clone(), d))
            .collect();
    let rounds: Vec<i64> = epochs.iter().map(|e| e.epoch).collect();
    let mut draws: HashMap<i64, ruffler_rounds::Model> = ruffler_rounds::Entity::find()
        .filter(ruffler_rounds::Column::Round.is_in(rounds))
        .all(db)
        .await?
        .into_iter()
        .map(|r| (r.round, r))
        .collect();
    Ok(epochs
        .into_iter()
        .map(|epoch| ClosedEpoch {
            distribution: distributions.remove(&epoch.address),
            ruffler: draws.remove(&epoch.epoch),
            epoch,
        })
        .collect())
}

/// Where a wallet's share of a closed epoch stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShareStatus {
    /// No share in this epoch.
    None,
    /// Waiting out the root's challenge delay.
    Pending,
    Claimable,
    Claimed,
    /// The claim window passed unclaimed.
    Expired,
    /// The admin vetoed the root (its pools rolled into a later epoch), or another root
    /// replaced it.
    Void,
}

impl ShareStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ShareStatus::None => "none",
            ShareStatus::Pending => "pending",
            ShareStatus::Claimable => "claimable",
            ShareStatus::Claimed => "claimed",
            ShareStatus::Expired => "expired",
            ShareStatus::Void => "void",
        }
    }
}

/// A wallet's share of one closed epoch.
pub struct WalletEpoch {
    pub closed: ClosedEpoch,
    pub allocation: Option<echo_allocations::Model>,
    pub claim: Option<crucible_claims::Model>,
    pub status: ShareStatus,
}

/// The wallet's shares of the last [`HISTORY_EPOCHS`] closed epochs, newest first.
pub async fn wallet_history(
    state: &AppState,
    wallet: &Wallet,
) -> Result<Vec<WalletEpoch>, ApiError> {
    let db = state.store.db();
    let closed = history(state).await?;
    let addresses: Vec<String> = closed.iter().map(|c| c.epoch.address.clone()).collect();
    let mut allocations: HashMap<String, echo_allocations::Model> =
        echo_allocations::Entity::find()
            .filter(echo_allocations::Column::Wallet.eq(wallet.to_string()))
            .filter(echo_allocations::Column::EpochAddress.is_in(addresses.clone()))
            .all(db)
            .await?
            .into_iter()
            .map(|a| (a.epoch_address.clone(), a))
            .collect();
    let receipts: Vec<String> = addresses
        .iter()
        .filter_map(|a| a.parse::<Pubkey>().ok())
        .map(|epoch| pda::crucible::claim_receipt(&epoch, &wallet.pubkey()).to_string())
        .collect();
    let mut claims: HashMap<String, crucible_claims::Model> = crucible_claims::Entity::find()
        .filter(crucible_claims::Column::Address.is_in(receipts))
        .all(db)
        .await?
        .into_iter()
        .map(|c| (c.epoch.clone(), c))
        .collect();
    let now = state.now();
    Ok(closed
        .into_iter()
        .map(|closed| {
            let allocation = allocations.remove(&closed.epoch.address);
            let claim = claims.remove(&closed.epoch.address);
            let status = match (&allocation, &claim, closed.status()) {
                (None, _, _) => ShareStatus::None,
                (_, Some(_), _) => ShareStatus::Claimed,
                (_, None, VETOED | SUPERSEDED) => ShareStatus::Void,
                (_, None, ROLLED_OVER) => ShareStatus::Expired,
                _ if now < closed.epoch.claimable_at => ShareStatus::Pending,
                _ if now > closed.epoch.claim_deadline => ShareStatus::Expired,
                _ => ShareStatus::Claimable,
            };
            WalletEpoch {
                closed,
                allocation,
                claim,
                status,
            }
        })
        .collect())
}
