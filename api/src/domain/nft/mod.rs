//! Tier NFTs (spec 4.12): one Token-2022 collection per conviction tier from `ember` up
//! (`crate::chain::tier_nfts`). A wallet whose conviction score reaches a tier may mint that
//! tier's NFT once ([`mint`]); the webhooks re-derive who holds an NFT from the ledger
//! ([`webhooks`]); a wallet's profile honours the highest tier it holds ([`held_tier`]).

pub mod mint;
pub mod webhooks;

use narrative_store::entities::tier_nfts;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
};

use crate::chain::tier_nfts::NftMetadata;
use crate::domain::profiles::conviction::{wallet_score, Tier};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{MintAddress, NftTier, Wallet};

/// A tier as a wallet sees it.
pub struct TierStanding {
    pub tier: NftTier,
    /// The score from which the tier's NFT may be minted.
    pub min_score: f64,
    /// The tier's collection, when deployed.
    pub collection: Option<String>,
    /// The wallet's score reaches the tier.
    pub unlocked: bool,
    /// The NFT this wallet minted in the collection, if any.
    pub minted: Option<String>,
}

/// A wallet's tier NFTs: those the ledger last showed it holding, and every tier's standing.
pub struct WalletNfts {
    pub held: Vec<tier_nfts::Model>,
    /// The highest tier among `held`.
    pub nft_tier: Option<NftTier>,
    pub conviction_score: f64,
    pub tiers: Vec<TierStanding>,
}

/// An NFT with its holder's standing (`/nft/score/:mint`).
pub struct ScoredNft {
    pub nft: tier_nfts::Model,
    pub tier: NftTier,
    /// The score the tier stands for.
    pub tier_min_score: f64,
    /// The holder's conviction score and tier, when a holder is known.
    pub holder: Option<(f64, Tier)>,
}

fn tier_of(row: &tier_nfts::Model) -> Result<NftTier, ApiError> {
    row.tier.parse().map_err(ApiError::internal)
}

/// Orders NFT rows highest tier first (rows of an unknown tier last).
fn highest_first(rows: &mut [tier_nfts::Model]) {
    rows.sort_by_key(|row| std::cmp::Reverse(row.tier.parse::<NftTier>().ok()));
}

/// The tier of the first of rows ordered by [`highest_first`].
fn highest(held: &[tier_nfts::Model]) -> Option<NftTier> {
    held.first().and_then(|row| row.tier.parse().ok())
}

/// The NFTs the ledger last showed `wallet` holding, highest tier first.
async fn held_by(
    db: &impl ConnectionTrait,
    wallet: &Wallet,
) -> Result<Vec<tier_nfts::Model>, DbErr> {
    let mut rows = tier_nfts::Entity::find()
        .filter(tier_nfts::Column::Owner.eq(wallet.to_string()))
        .order_by_asc(tier_nfts::Column::Mint)
        .all(db)
        .await?;
    highest_first(&mut rows);
    Ok(rows)
}

/// The highest tier whose NFT `wallet` holds: what its profile's tier honours (spec 4.7, an
/// `ember` NFT holder qualifies as `ember`).
pub async fn held_tier(
    db: &impl ConnectionTrait,
    wallet: &Wallet,
) -> Result<Option<NftTier>, DbErr> {
    Ok(highest(&held_by(db, wallet).await?))
}

pub async fn wallet_nfts(state: &AppState, wallet: &Wallet) -> Result<WalletNfts, ApiError> {
    let db = state.store.db();
    let address = wallet.to_string();
    // What it holds and what it minted, in one read.
    let rows = tier_nfts::Entity::find()
        .filter(
            Condition::any()
                .add(tier_nfts::Column::Owner.eq(address.as_str()))
                .add(tier_nfts::Column::MintedBy.eq(address.as_str())),
        )
        .order_by_asc(tier_nfts::Column::Mint)
        .all(db)
        .await?;
    let minted: Vec<(String, String)> = rows
        .iter()
        .filter(|row| row.minted_by.as_deref() == Some(address.as_str()))
        .map(|row| (row.tier.clone(), row.mint.clone()))
        .collect();
    let mut held: Vec<tier_nfts::Model> = rows
        .into_iter()
        .filter(|row| row.owner.as_deref() == Some(address.as_str()))
        .collect();
    highest_first(&mut held);
    let nft_tier = highest(&held);
    let score = wallet_score(db, wallet).await?.score;
    let tiers = NftTier::ALL
        .iter()
        .map(|tier| {
            let min_score = Tier::of_nft(*tier).min_score();
            TierStanding {
                tier: *tier,
                min_score,
                collection: state.nft.collections.get(tier).map(ToString::to_string),
                unlocked: score >= min_score,
                minted: minted
                    .iter()
                    .find(|(minted_tier, _)| minted_tier == tier.as_str())
                    .map(|(_, mint)| mint.clone()),
            }
        })
        .collect();
    Ok(WalletNfts {
        held,
        nft_tier,
        conviction_score: score,
        tiers,
    })
}

/// A known tier NFT and its holder's standing; 404 for a mint this service has not seen.
pub async fn scored(state: &AppState, mint: &MintAddress) -> Result<ScoredNft, ApiError> {
    let db = state.store.db();
    let nft = tier_nfts::Entity::find_by_id(mint.to_string())
        .one(db)
        .await?
        .ok_or_else(|| ApiError::not_found("NFT"))?;
    let tier = tier_of(&nft)?;
    let holder = match nft.owner.as_deref().map(str::parse::<Wallet>) {
        Some(Ok(owner)) => {
            let score = wallet_score(db, &owner).await?;
            let held = held_tier(db, &owner).await?;
            Some((score.score, score.tier.honouring(held)))
        }
        _ => None,
    };
    Ok(ScoredNft {
        nft,
        tier,
        tier_min_score: Tier::of_nft(tier).min_score(),
        holder,
    })
}

/// A tier's metadata document: what its NFTs' `uri` serves.
pub struct MetadataDocument {
    pub name: String,
    pub symbol: String,
    pub description: String,
    pub min_score: f64,
}

pub fn metadata_document(state: &AppState, tier: NftTier) -> MetadataDocument {
    let on_chain = NftMetadata::of(tier, &state.nft.metadata_base);
    let min_score = Tier::of_nft(tier).min_score();
    MetadataDocument {
        name: on_chain.name,
        symbol: on_chain.symbol,
        description: format!(
            "Held by a wallet whose conviction score reached {min_score} ({tier}), minted once \
             per wallet; it counts as the {tier} tier for its holder."
        ),
        min_score,
    }
}
