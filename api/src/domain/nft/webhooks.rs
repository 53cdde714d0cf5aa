//! Inbound NFT webhooks (spec 4.12, 6.3): the on-chain indexer reports tier-NFT activity; each
//! call is kept as received, and the NFTs it names are re-read from the ledger.
//!
//! The payload's shape is the indexer's (spec: not shown), so nothing in it is trusted beyond
//! naming what to look at: every string under a mint key (`mint`, `mintAddress`,
//! `mint_address`) is a candidate NFT, every string under a wallet key (`owner`, `wallet`,
//! `from`, `to`, `fromUserAccount`, `toUserAccount`, `userAccount`) a candidate holder, at any
//! depth (a Helius-style array of transactions with `tokenTransfers` works as a flat object
//! does). For each candidate mint the ledger decides: it must be a tier NFT
//! (`crate::chain::tier_nfts::read_nft`) of a configured collection, and its holder is whichever
//! of the named wallets, its recorded holder and its minter holds its one token, or nobody
//! known. A webhook can therefore name a wallet but never make it a holder.

use std::collections::{BTreeSet, HashMap};

use narrative_sdk::Pubkey;
use narrative_store::entities::{tier_nfts, webhook_events};
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveValue::NotSet, ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait,
    IntoActiveModel, QueryFilter,
};
use serde_json::Value;

use crate::chain::tier_nfts::{holder_among, read_nft};
use crate::error::ApiError;
use crate::state::AppState;
use crate::values::NftTier;

/// Keys whose values name mints, and wallets.
const MINT_KEYS: [&str; 3] = ["mint", "mintAddress", "mint_address"];
const WALLET_KEYS: [&str; 7] = [
    "owner",
    "wallet",
    "from",
    "to",
    "fromUserAccount",
    "toUserAccount",
    "userAccount",
];
/// One call re-reads at most this many mints, and asks about at most this many wallets, so a
/// payload cannot make the service read the ledger without bound.
pub const MAX_MINTS: usize = 25;
pub const MAX_WALLETS: usize = 50;

/// What a webhook call did.
pub struct Received {
    /// The stored event's id.
    pub id: i64,
    /// Each tier NFT re-derived from the ledger: its tier and holder.
    pub rederived: Vec<tier_nfts::Model>,
    /// Mints named that are not tier NFTs of a configured collection.
    pub ignored: Vec<String>,
}

/// Stores a payload from `source`, then re-derives the tier NFTs it names.
pub async fn receive(state: &AppState, source: &str, payload: Value) -> Result<Received, ApiError> {
    let named = Named::from_payload(&payload);
    let id = record(state, source, payload).await?;
    let (rederived, ignored) = rederive(state, &named).await?;
    Ok(Received {
        id,
        rederived,
        ignored,
    })
}

async fn record(state: &AppState, source: &str, payload: Value) -> Result<i64, ApiError> {
    let inserted = webhook_events::Entity::insert(webhook_events::ActiveModel {
        id: NotSet,
        source: Set(source.to_owned()),
        payload: Set(payload),
        received_at: Set(state.now()),
    })
    .exec(state.store.db())
    .await?;
    Ok(inserted.last_insert_id)
}

/// The mints and wallets a payload names, in the order first seen, bounded.
#[derive(Debug, Default, PartialEq)]
struct Named {
    mints: Vec<Pubkey>,
    wallets: Vec<Pubkey>,
}

impl Named {
    fn from_payload(payload: &Value) -> Named {
        let mut named = Named::default();
        named.walk(payload, None);
        named
    }

    fn walk(&mut self, value: &Value, key: Option<&str>) {
        match value {
            Value::Object(map) => map.iter().for_each(|(k, v)| self.walk(v, Some(k))),
            Value::Array(items) => items.iter().for_each(|v| self.walk(v, key)),
            Value::String(text) => {
                let Ok(address) = text.parse::<Pubkey>() else {
                    return;
                };
                let (list, bound) = match key {
                    Some(k) if MINT_KEYS.contains(&k) => (&mut self.mints, MAX_MINTS),
                    Some(k) if WALLET_KEYS.contains(&k) => (&mut self.wallets, MAX_WALLETS),
                    _ => return,
                };
                if list.len() < bound && !list.contains(&address) {
                    list.push(address);
                }
            }
            _ => {}
        }
    }
}

/// Re-reads every named mint from the ledger (one read for the mints, one per NFT for its
/// holder) and records what it shows; the rows already known are read in one query and the
/// results written in one statement.
async fn rederive(
    state: &AppState,
    named: &Named,
) -> Result<(Vec<tier_nfts::Model>, Vec<String>), ApiError> {
    if named.mints.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let db = state.store.db();
    let ledger = state.chain.ledger.as_ref();
    let (_, accounts) = ledger.accounts(&named.mints).await?;
    let known: HashMap<String, tier_nfts::Model> = tier_nfts::Entity::find()
        .filter(tier_nfts::Column::Mint.is_in(named.mints.iter().map(ToString::to_string)))
        .all(db)
        .await?
        .into_iter()
        .map(|row| (row.mint.clone(), row))
        .collect();
    let mut rederived = Vec::new();
    let mut ignored = Vec::new();
    for (mint, account) in named.mints.iter().zip(accounts) {
        let nft = account.as_ref().and_then(|account| read_nft(mint, account));
        let tier = nft
            .as_ref()
            .and_then(|nft| tier_of_collection(state, &nft.collection));
        let (Some(nft), Some(tier)) = (nft, tier) else {
            ignored.push(mint.to_string());
            continue;
        };
        let known = known.get(&mint.to_string());
        let mut candidates: BTreeSet<Pubkey> = named.wallets.iter().copied().collect();
        if let Some(known) = known {
            for wallet in [&known.owner, &known.minted_by].into_iter().flatten() {
                if let Ok(wallet) = wallet.parse() {
                    candidates.insert(wallet);
                }
            }
        }
        let candidates: Vec<Pubkey> = candidates.into_iter().collect();
        let holder = holder_among(ledger, mint, &candidates).await?;
        let now = state.now();
        let stored = tier_nfts::Model {
            mint: mint.to_string(),
            tier: tier.to_string(),
            collection: nft.collection.to_string(),
            name: nft.name,
            uri: nft.uri,
            minted_by: known.and_then(|k| k.minted_by.clone()),
            mint_signature: known.and_then(|k| k.mint_signature.clone()),
            minted_at: known.and_then(|k| k.minted_at),
            owner: holder.map(|h| h.to_string()),
            owner_checked_at: now,
        };
        rederived.push(stored);
    }
    store(db, &rederived).await?;
    Ok((rederived, ignored))
}

/// Records `rows` in one statement, so one commit: a webhook naming many mints changes what
/// cached answers read once, not once per mint, and never half. What the mint confirm writes
/// (minter, signature, time) is kept as it is.
async fn store(db: &impl ConnectionTrait, rows: &[tier_nfts::Model]) -> Result<(), DbErr> {
    if rows.is_empty() {
        return Ok(());
    }
    tier_nfts::Entity::insert_many(rows.iter().cloned().map(IntoActiveModel::into_active_model))
        .on_conflict(
            OnConflict::column(tier_nfts::Column::Mint)
                .update_columns([
                    tier_nfts::Column::Tier,
                    tier_nfts::Column::Collection,
                    tier_nfts::Column::Name,
                    tier_nfts::Column::Uri,
                    tier_nfts::Column::Owner,
                    tier_nfts::Column::OwnerCheckedAt,
                ])
                .to_owned(),
        )
        .exec_without_returning(db)
        .await?;
    Ok(())
}

/// The tier whose configured collection is `collection`.
fn tier_of_collection(state: &AppState, collection: &Pubkey) -> Option<NftTier> {
    state
        .nft
        .collections
        .iter()
        .find(|(_, configured)| *configured == collection)
        .map(|(tier, _)| *tier)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mints_and_wallets_are_read_at_any_depth_by_their_keys_only() {
        let (mint, from, to, other) = (
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
            Pubkey::new_unique(),
        );
        let payload = json!([{
            "signature": other.to_string(),
            "tokenTransfers": [{
                "mint": mint.to_string(),
                "fromUserAccount": from.to_string(),
                "toUserAccount": to.to_string(),
                "tokenAmount": 1
            }],
            "accountData": [{"account": other.to_string(), "mint": "not a key"}],
            "to": to.to_string()
        }]);
        let mut named = Named::from_payload(&payload);
        named.wallets.sort();
        let mut expected = vec![from, to];
        expected.sort();
        assert_eq!(
            named,
            Named {
                mints: vec![mint],
                wallets: expected,
            }
        );
    }

    #[test]
    fn a_payload_names_a_bounded_number_of_mints() {
        let mints: Vec<Value> = (0..MAX_MINTS + 10)
            .map(|_| json!({"mint": Pubkey::new_unique().to_string()}))
            .collect();
        assert_eq!(
            Named::from_payload(&Value::Array(mints)).mints.len(),
            MAX_MINTS
        );
    }
}
