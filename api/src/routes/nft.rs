//! Tier NFTs (spec 4.12): a wallet's NFTs and tiers, an NFT's holder standing, the mint
//! (prepare, then confirm), each tier's metadata document, and the inbound webhooks the
//! on-chain indexer calls, server to server, with the shared secret.

use std::sync::Arc;

use narrative_store::entities::tier_nfts;
use poem_openapi::param::Path;
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use crate::clock::iso;
use crate::domain::nft::{self, mint, webhooks};
use crate::error::{refusals, Answer};
use crate::http::auth::WebhookAuth;
use crate::routes::{ConfirmRefusals, ConfirmRequest, Tag};
use crate::state::AppState;
use crate::values::{Base58Signature, JsonDocument, MintAddress, NftTier, PreparedId, Wallet};

pub struct NftApi {
    pub state: Arc<AppState>,
}

/// A tier NFT as the ledger last showed it.
#[derive(Object)]
pub struct TierNft {
    pub mint: String,
    /// `ember` … `volcanic`.
    pub tier: String,
    /// The tier's collection (its token group).
    pub collection: String,
    pub name: String,
    /// The metadata document (`GET /v1/nft/metadata/{tier}`).
    pub uri: String,
    /// The wallet the ledger last showed holding it; null when none of the wallets it was
    /// asked about holds it.
    pub owner: Option<String>,
    /// The wallet that minted it through this service.
    pub minted_by: Option<String>,
    pub mint_signature: Option<String>,
    pub minted_at: Option<String>,
    /// When its holder was last read from the ledger.
    pub owner_checked_at: String,
}

impl From<tier_nfts::Model> for TierNft {
    fn from(row: tier_nfts::Model) -> Self {
        TierNft {
            mint: row.mint,
            tier: row.tier,
            collection: row.collection,
            name: row.name,
            uri: row.uri,
            owner: row.owner,
            minted_by: row.minted_by,
            mint_signature: row.mint_signature,
            minted_at: row.minted_at.map(iso),
            owner_checked_at: iso(row.owner_checked_at),
        }
    }
}

/// Where a wallet stands against one tier.
#[derive(Object)]
pub struct NftTierStanding {
    pub tier: NftTier,
    /// The conviction score from which the tier's NFT may be minted.
    pub min_score: f64,
    pub collection_deployed: bool,
    pub collection: Option<String>,
    /// The wallet's score reaches the tier.
    pub unlocked: bool,
    /// The NFT this wallet minted in the collection.
    pub minted: Option<String>,
}

#[derive(Object)]
pub struct NftWallet {
    pub wallet: Wallet,
    /// The highest tier among `nfts`, which the conviction profile's tier honours.
    pub nft_tier: Option<NftTier>,
    pub conviction_score: f64,
    /// The NFTs the wallet holds, highest tier first.
    pub nfts: Vec<TierNft>,
    /// Every tier, lowest first.
    pub tiers: Vec<NftTierStanding>,
}

#[derive(Object)]
pub struct NftScore {
    pub mint: String,
    pub tier: NftTier,
    /// The conviction score the tier stands for.
    pub tier_min_score: f64,
    pub owner: Option<String>,
    /// The holder's conviction score and tier (the tier honouring the NFTs it holds).
    pub owner_conviction_score: Option<f64>,
    pub owner_conviction_tier: Option<String>,
    pub nft: TierNft,
}

#[derive(Object)]
pub struct NftMintRequest {
    /// The wallet that signs, pays and receives the NFT.
    pub wallet: Wallet,
    pub tier: NftTier,
}

#[derive(Object)]
pub struct NftMintPrepared {
    pub ok: bool,
    /// Base64 transaction: the wallet is the fee payer and signs; the service's NFT authority
    /// has signed already.
    pub transaction: String,
    /// `ready_to_confirm`: sign, send, then confirm with the signature.
    pub status: String,
    pub prepared_id: PreparedId,
    pub blockhash: String,
    /// The NFT's mint, one per wallet and tier.
    pub mint: String,
    pub tier: NftTier,
    pub collection: String,
    pub name: String,
    pub uri: String,
}

#[derive(Object)]
pub struct NftMintConfirmed {
    pub ok: bool,
    /// `confirmed`.
    pub status: String,
    pub prepared_id: PreparedId,
    pub signature: Base58Signature,
    pub nft: TierNft,
}

/// An attribute of the metadata document.
#[derive(Object)]
pub struct MetadataAttribute {
    pub trait_type: String,
    pub value: String,
}

/// A tier's off-chain metadata document, in the common NFT metadata shape.
#[derive(Object)]
pub struct TierMetadata {
    pub name: String,
    pub symbol: String,
    pub description: String,
    pub attributes: Vec<MetadataAttribute>,
}

#[derive(Object)]
pub struct WebhookReceived {
    pub ok: bool,
    /// Id of the stored event.
    pub id: i64,
    /// The tier NFTs the payload named, as re-read from the ledger.
    pub rederived: Vec<TierNft>,
    /// Mints named that are not tier NFTs of a configured collection.
    pub ignored: Vec<String>,
}

impl From<webhooks::Received> for WebhookReceived {
    fn from(received: webhooks::Received) -> Self {
        WebhookReceived {
            ok: true,
            id: received.id,
            rederived: received.rederived.into_iter().map(TierNft::from).collect(),
            ignored: received.ignored,
        }
    }
}

refusals! {
    ReadRefusals: [400];
    ScoreRefusals: [400, 404];
    MintRefusals: [400, 403, 409, 413, 503];
    WebhookRefusals: [400, 413, 503];
}

#[OpenApi(prefix_path = "/nft", tag = "Tag::Nft")]
impl NftApi {
    /// A wallet's tier NFTs (as the ledger last showed them) and where it stands against every
    /// tier.
    #[oai(path = "/wallet/:wallet", method = "get")]
    async fn wallet(&self, wallet: Path<Wallet>) -> Answer<Json<NftWallet>, ReadRefusals> {
        let found = nft::wallet_nfts(&self.state, &wallet.0).await?;
        Ok(Json(NftWallet {
            wallet: wallet.0,
            nft_tier: found.nft_tier,
            conviction_score: found.conviction_score,
            nfts: found.held.into_iter().map(TierNft::from).collect(),
            tiers: found
                .tiers
                .into_iter()
                .map(|t| NftTierStanding {
                    tier: t.tier,
                    min_score: t.min_score,
                    collection_deployed: t.collection.is_some(),
                    collection: t.collection,
                    unlocked: t.unlocked,
                    minted: t.minted,
                })
                .collect(),
        }))
    }

    /// A tier NFT, its tier's score and its holder's standing.
    #[oai(path = "/score/:mintAddress", method = "get")]
    async fn score(
        &self,
        #[oai(name = "mintAddress")] mint_address: Path<MintAddress>,
    ) -> Answer<Json<NftScore>, ScoreRefusals> {
        let scored = nft::scored(&self.state, &mint_address.0).await?;
        Ok(Json(NftScore {
            mint: scored.nft.mint.clone(),
            tier: scored.tier,
            tier_min_score: scored.tier_min_score,
            owner: scored.nft.owner.clone(),
            owner_conviction_score: scored.holder.map(|(score, _)| score),
            owner_conviction_tier: scored.holder.map(|(_, tier)| tier.name().to_owned()),
            nft: scored.nft.into(),
        }))
    }

    /// Prepare the mint of the wallet's NFT of a tier its conviction score reaches: one per
    /// wallet and collection (409 `already_minted`); 503 `collection_not_deployed` while the
    /// tier has no collection.
    #[oai(path = "/mint", method = "post")]
    async fn mint(
        &self,
        body: Json<NftMintRequest>,
    ) -> Answer<Json<NftMintPrepared>, MintRefusals> {
        let NftMintRequest { wallet, tier } = body.0;
        let prepared = mint::prepare(&self.state, wallet, tier).await?;
        let params = prepared.params;
        Ok(Json(NftMintPrepared {
            ok: true,
            transaction: prepared.unsigned.transaction,
            status: "ready_to_confirm".into(),
            prepared_id: prepared.unsigned.id,
            blockhash: prepared.unsigned.blockhash,
            mint: params.mint,
            tier: params.tier,
            collection: params.collection,
            name: params.name,
            uri: params.uri,
        }))
    }

    /// Confirm a sent mint by its signature: recorded once the ledger shows the prepared
    /// transaction landed without error; a replayed signature answers the same.
    #[oai(path = "/mint/confirm", method = "post")]
    async fn mint_confirm(
        &self,
        body: Json<ConfirmRequest>,
    ) -> Answer<Json<NftMintConfirmed>, ConfirmRefusals> {
        let ConfirmRequest {
            prepared_id,
            signature,
        } = body.0;
        let confirmed = mint::confirm(&self.state, prepared_id, signature).await?;
        Ok(Json(NftMintConfirmed {
            ok: true,
            status: "confirmed".into(),
            prepared_id: confirmed.prepared_id,
            signature: confirmed.signature,
            nft: confirmed.nft.into(),
        }))
    }

    /// A tier's metadata document, which its NFTs' `uri` names.
    #[oai(path = "/metadata/:tier", method = "get")]
    async fn metadata(&self, tier: Path<NftTier>) -> Answer<Json<TierMetadata>, ReadRefusals> {
        let document = nft::metadata_document(&self.state, tier.0);
        Ok(Json(TierMetadata {
            name: document.name,
            symbol: document.symbol,
            description: document.description,
            attributes: vec![
                MetadataAttribute {
                    trait_type: "tier".into(),
                    value: tier.0.to_string(),
                },
                MetadataAttribute {
                    trait_type: "min_score".into(),
                    value: document.min_score.to_string(),
                },
            ],
        }))
    }

    /// Account changes of the tier-NFT collections, from the on-chain indexer: stored, and the
    /// NFTs named re-read from the ledger.
    #[oai(path = "/webhook/indexer", method = "post")]
    async fn indexer(
        &self,
        _auth: WebhookAuth,
        body: Json<JsonDocument>,
    ) -> Answer<Json<WebhookReceived>, WebhookRefusals> {
        let received = webhooks::receive(&self.state, "indexer", body.0 .0).await?;
        Ok(Json(received.into()))
    }

    /// A tier-NFT transfer: stored, and the NFTs named re-read from the ledger, so their
    /// holders' tiers follow.
    #[oai(path = "/webhook/transfer", method = "post")]
    async fn transfer(
        &self,
        _auth: WebhookAuth,
        body: Json<JsonDocument>,
    ) -> Answer<Json<WebhookReceived>, WebhookRefusals> {
        let received = webhooks::receive(&self.state, "transfer", body.0 .0).await?;
        Ok(Json(received.into()))
    }
}
