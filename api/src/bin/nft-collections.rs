//! `nft-collections`: creates the tier-NFT collections (one Token-2022 token group per tier,
//! spec 4.12) under the service's NFT authority, which pays, and prints the `NFT_COLLECTIONS`
//! setting that names them. Collections that exist already are checked and kept, so it can be
//! run again safely.
//!
//! Reads `NFT_AUTHORITY_KEYPAIR` (base58 of the 64-byte keypair) and `SOLANA_RPC_URL` from the
//! environment, as the service does.

use std::sync::Arc;

use anyhow::Context;
use narrative_api::chain::ledger::RpcLedger;
use narrative_api::chain::tier_nfts::{collections_setting, deploy_collections};
use narrative_api::clock::SystemClock;
use narrative_api::config::DEFAULT_RPC_URL;
use narrative_api::state::parse_keypair;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let encoded =
        std::env::var("NFT_AUTHORITY_KEYPAIR").context("NFT_AUTHORITY_KEYPAIR is not set")?;
    let authority = parse_keypair("NFT_AUTHORITY_KEYPAIR", &encoded)?;
    let url = std::env::var("SOLANA_RPC_URL").unwrap_or_else(|_| DEFAULT_RPC_URL.into());
    let ledger = RpcLedger::new(&url, Arc::new(SystemClock));
    let deployed = deploy_collections(&ledger, &authority).await?;
    for d in &deployed {
        let what = if d.created { "created" } else { "exists" };
        eprintln!("{:<9} {} ({what})", d.tier.as_str(), d.collection);
    }
    println!("NFT_COLLECTIONS={}", collections_setting(&deployed));
    Ok(())
}
