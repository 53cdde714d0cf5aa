//! Profiles of a wallet: its conviction (spec 2.5) from its resolved backings, and its creator
//! profile (spec 2.3b) from the narratives it published. Rules are in `conviction` and
//! `creator`, unit-tested, and in docs/decisions.md; `eruption` is a wallet's streak and burst
//! state, `leaderboards` ranks wallets by either score.

pub mod conviction;
pub mod creator;
pub mod eruption;
pub mod leaderboards;

use std::collections::BTreeMap;

use narrative_store::entities::{narratives, terms_acceptances};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use crate::domain::terms;
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{NftTier, OracleStatus, Wallet};

pub struct ConvictionProfile {
    pub score: conviction::Score,
    /// The wallet's acceptance of the current platform terms.
    pub terms: Option<terms_acceptances::Model>,
    /// The highest tier NFT it holds, which its tier honours.
    pub nft_tier: Option<NftTier>,
}

/// A wallet's conviction profile; an unseen wallet gets the zeroed one.
pub async fn conviction_profile(
    state: &AppState,
    wallet: &Wallet,
) -> Result<ConvictionProfile, ApiError> {
    Ok(ConvictionProfile {
        score: conviction::wallet_score(state.store.db(), wallet).await?,
        terms: terms::current_acceptance(state, wallet).await?,
        nft_tier: crate::domain::nft::held_tier(state.store.db(), wallet).await?,
    })
}

/// A wallet's creator profile from its published narratives and their indexed markets.
pub async fn creator_profile(
    state: &AppState,
    wallet: &Wallet,
) -> Result<creator::CreatorScore, ApiError> {
    let owner = wallet.to_string();
    Ok(creator_scores(state.store.db(), Some(vec![owner.clone()]))
        .await?
        .remove(&owner)
        .unwrap_or_else(|| creator::creator_score(&[])))
}

/// The creator scores of `creators` (every wallet that published a narrative when `None`), from
/// their narratives and the indexed markets: three queries whatever their number. A wallet that
/// published nothing is absent.
pub async fn creator_scores(
    db: &impl ConnectionTrait,
    creators: Option<Vec<String>>,
) -> Result<BTreeMap<String, creator::CreatorScore>, DbErr> {
    let mut query = narratives::Entity::find();
    if let Some(creators) = creators {
        query = query.filter(narratives::Column::WalletAddress.is_in(creators));
    }
    let published = query.all(db).await?;
    let market_ids: Vec<String> = published.iter().map(|n| n.market_id.clone()).collect();
    let markets = narrative_store::indexed::markets_by_id(db, market_ids.clone()).await?;
    let backers = narrative_store::indexed::backers_by_market(db, market_ids).await?;
    let mut by_creator: BTreeMap<String, Vec<creator::Created>> = BTreeMap::new();
    for n in &published {
        let market = markets.get(&n.market_id);
        // The creator's own stake is not an outside backer.
        let outside = backers.get(&n.market_id).map_or(0, |set| {
            set.iter().filter(|b| **b != n.wallet_address).count()
        });
        by_creator
            .entry(n.wallet_address.clone())
            .or_default()
            .push(creator::Created {
                // A status this version does not know counts as pending.
                oracle_status: n.oracle_status.parse().unwrap_or(OracleStatus::Pending),
                outside_backers: outside as u64,
                crucible_lamports: market
                    .filter(|m| m.finalized)
                    .map_or(0, |m| m.crucible_amount.max(0) as u64),
            });
    }
    Ok(by_creator
        .into_iter()
        .map(|(wallet, created)| (wallet, creator::creator_score(&created)))
        .collect())
}
