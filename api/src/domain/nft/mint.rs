//! Minting a tier NFT (spec 4.12, 5.2 "NFT mint and mint confirm"): a transaction the wallet
//! pays and signs, which the service has already co-signed as the NFT's mint authority and the
//! collection's update authority; once the ledger shows it landed as prepared, the NFT is
//! recorded as the wallet's.
//!
//! The checks, in order: the `nft` component runs (503 `system_halted`); the tier's collection
//! is configured (503 `collection_not_deployed`); the wallet has not minted in it and does not
//! hold one of it (409 `already_minted`); its conviction score reaches the tier (403
//! `conviction_score_required`); and, from the ledger, the collection exists under the
//! service's authority and the wallet's NFT address is still free.

use narrative_sdk::Pubkey;
use narrative_store::entities::tier_nfts;
use poem::http::StatusCode;
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, DatabaseConnection, DatabaseTransaction, EntityTrait,
    QueryFilter,
};
use serde::{Deserialize, Serialize};
use solana_signer::Signer;

use crate::chain::halts::ensure_running;
use crate::chain::tier_nfts::{
    is_collection_of, mint_nft, nft_address, NftMetadata, SeededAddress,
};
use crate::chain::{MoneyFlow, Prepared, Unsigned};
use crate::domain::profiles::conviction::{wallet_score, Tier};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::{Base58Signature, Component, NftTier, PreparedId, Wallet};

/// What prepare stores for confirm.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub tier: NftTier,
    pub mint: String,
    pub collection: String,
    pub name: String,
    pub uri: String,
}

pub struct PreparedMint {
    pub unsigned: Unsigned,
    pub params: Params,
}

/// A recorded mint.
pub struct Confirmed {
    pub prepared_id: PreparedId,
    pub signature: Base58Signature,
    pub nft: tier_nfts::Model,
}

pub struct TierNftMint;

fn collection_not_deployed(tier: NftTier) -> ApiError {
    ApiError::coded(
        StatusCode::SERVICE_UNAVAILABLE,
        "collection_not_deployed",
        format!("the {tier} collection is not deployed"),
    )
    .with("tier", tier.as_str())
}

fn already_minted(tier: NftTier, mint: &Pubkey) -> ApiError {
    ApiError::coded(
        StatusCode::CONFLICT,
        "already_minted",
        format!("this wallet already minted or holds an NFT of the {tier} collection"),
    )
    .with("tier", tier.as_str())
    .with("mint", mint.to_string())
}

pub async fn prepare(
    state: &AppState,
    wallet: Wallet,
    tier: NftTier,
) -> Result<PreparedMint, ApiError> {
    let db = state.store.db();
    ensure_running(db, Component::Nft).await?;
    let settings = &state.nft;
    let (Some(authority), Some(collection)) =
        (settings.authority.as_ref(), settings.collections.get(&tier))
    else {
        return Err(collection_not_deployed(tier));
    };
    let authority_key = authority.pubkey();
    let (mint, _) = nft_address(&authority_key, &wallet.pubkey(), tier);
    let known = tier_nfts::Entity::find()
        .filter(tier_nfts::Column::Tier.eq(tier.as_str()))
        .filter(
            Condition::any()
                .add(tier_nfts::Column::MintedBy.eq(wallet.to_string()))
                .add(tier_nfts::Column::Owner.eq(wallet.to_string())),
        )
        .one(db)
        .await?;
    if let Some(known) = known {
        let known: Pubkey = known.mint.parse().map_err(ApiError::internal)?;
        return Err(already_minted(tier, &known));
    }
    let score = wallet_score(db, &wallet).await?.score;
    let required = Tier::of_nft(tier).min_score();
    if score < required {
        return Err(ApiError::coded(
            StatusCode::FORBIDDEN,
            "conviction_score_required",
            format!("minting the {tier} NFT needs a conviction score of {required}"),
        )
        .with("current_score", score)
        .with("required_score", required)
        .with("tier", tier.as_str()));
    }
    let (_, accounts) = state.chain.ledger.accounts(&[mint, *collection]).await?;
    let prefunded = match SeededAddress::of(accounts.first().and_then(Option::as_ref)) {
        SeededAddress::Free { lamports } => lamports,
        // Minted without a confirm reaching the service: the chain refuses a second one.
        SeededAddress::Taken => return Err(already_minted(tier, &mint)),
    };
    match accounts.get(1) {
        Some(Some(account)) if is_collection_of(collection, account, &authority_key) => {}
        _ => return Err(collection_not_deployed(tier)),
    }
    let metadata = NftMetadata::of(tier, &settings.metadata_base);
    let instructions = mint_nft(
        &wallet.pubkey(),
        &authority_key,
        collection,
        tier,
        &metadata,
        prefunded,
    );
    let params = Params {
        tier,
        mint: mint.to_string(),
        collection: collection.to_string(),
        name: metadata.name,
        uri: metadata.uri,
    };
    let unsigned = state
        .chain
        .prepare_cosigned(&TierNftMint, &wallet, &instructions, &params, &[authority])
        .await?;
    Ok(PreparedMint { unsigned, params })
}

pub async fn confirm(
    state: &AppState,
    prepared_id: PreparedId,
    signature: Base58Signature,
) -> Result<Confirmed, ApiError> {
    state
        .chain
        .confirm(&TierNftMint, prepared_id, signature)
        .await
}

#[async_trait::async_trait]
impl MoneyFlow for TierNftMint {
    const KIND: &'static str = "nft_mint";
    type Params = Params;
    type Confirmed = Confirmed;

    fn component(&self, _: &Params) -> Component {
        Component::Nft
    }

    /// A Token-2022 mint is none of the indexed programs' accounts: nothing to refresh.
    fn changed(&self, _: &Prepared<Params>) -> Vec<Pubkey> {
        Vec::new()
    }

    async fn record(
        &self,
        txn: &DatabaseTransaction,
        prepared: &Prepared<Params>,
        signature: &Base58Signature,
        now: i64,
    ) -> Result<(), ApiError> {
        let params = &prepared.params;
        let wallet = prepared.wallet.to_string();
        // A webhook may have recorded the mint first, from the ledger: this makes it the
        // wallet's mint. The landed transaction proves who held it when it was minted, not
        // now, so the holder a webhook read from the ledger since is kept.
        tier_nfts::Entity::insert(tier_nfts::ActiveModel {
            mint: Set(params.mint.clone()),
            tier: Set(params.tier.to_string()),
            collection: Set(params.collection.clone()),
            name: Set(params.name.clone()),
            uri: Set(params.uri.clone()),
            minted_by: Set(Some(wallet.clone())),
            mint_signature: Set(Some(signature.to_string())),
            minted_at: Set(Some(now)),
            owner: Set(Some(wallet)),
            owner_checked_at: Set(now),
        })
        .on_conflict(
            OnConflict::column(tier_nfts::Column::Mint)
                .update_columns([
                    tier_nfts::Column::MintedBy,
                    tier_nfts::Column::MintSignature,
                    tier_nfts::Column::MintedAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(txn)
        .await?;
        Ok(())
    }

    async fn answer(
        &self,
        db: &DatabaseConnection,
        prepared: &Prepared<Params>,
        _fresh: bool,
    ) -> Result<Confirmed, ApiError> {
        let confirmed = prepared.confirmed()?;
        let nft = tier_nfts::Entity::find_by_id(prepared.params.mint.clone())
            .one(db)
            .await?
            .ok_or_else(|| ApiError::internal("a confirmed mint has no row"))?;
        Ok(Confirmed {
            prepared_id: confirmed.prepared_id,
            signature: confirmed.signature,
            nft,
        })
    }
}
