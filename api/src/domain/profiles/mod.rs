//! Profiles of a wallet: its conviction (spec 2.5) from its resolved backings, and its creator
//! profile (spec 2.3b) from the narratives it published. Rules are in `conviction` and
//! `creator`, unit-tested, and in docs/decisions.md.

pub mod conviction;
pub mod creator;

use narrative_store::entities::{narratives, shield_terms_acknowledgements};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use crate::domain::shield::terms;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{OracleStatus, Wallet};

pub struct ConvictionProfile {
    pub score: conviction::Score,
    /// The wallet's acknowledgement of the current shield terms.
    pub terms: Option<shield_terms_acknowledgements::Model>,
}

/// A wallet's conviction profile; an unseen wallet gets the zeroed one.
pub async fn conviction_profile(
    state: &AppState,
    wallet: &Wallet,
) -> Result<ConvictionProfile, ApiError> {
    Ok(ConvictionProfile {
        score: conviction::wallet_score(state.store.db(), wallet).await?,
        terms: terms::current(state, wallet).await?,
    })
}

/// A wallet's creator profile from its published narratives and their indexed markets.
pub async fn creator_profile(
    state: &AppState,
    wallet: &Wallet,
) -> Result<creator::CreatorScore, ApiError> {
    let db = state.store.db();
    let owner = wallet.to_string();
    let published = narratives::Entity::find()
        .filter(narratives::Column::WalletAddress.eq(owner.as_str()))
        .all(db)
        .await?;
    let market_ids: Vec<String> = published.iter().map(|n| n.market_id.clone()).collect();
    let markets = narrative_store::indexed::markets_by_id(db, market_ids.clone()).await?;
    // The creator's own stake is not an outside backer.
    let outside = narrative_store::indexed::distinct_backers(db, market_ids, Some(&owner)).await?;
    let created: Vec<creator::Created> = published
        .iter()
        .map(|n| {
            let market = markets.get(&n.market_id);
            creator::Created {
                // A status this version does not know counts as pending.
                oracle_status: n.oracle_status.parse().unwrap_or(OracleStatus::Pending),
                outside_backers: outside.get(&n.market_id).copied().unwrap_or(0) as u64,
                crucible_lamports: market
                    .filter(|m| m.finalized)
                    .map_or(0, |m| m.crucible_amount.max(0) as u64),
            }
        })
        .collect();
    Ok(creator::creator_score(&created))
}
