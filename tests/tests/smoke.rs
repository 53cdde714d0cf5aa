#![allow(deprecated)]

use binary_vault::state::{MarketVariant, Side};
use integration_tests::*;
use solana_signer::Signer;

#[tokio::test]
async fn yield_market_lifecycle_smoke() {
    let mut h = Harness::start().await;
    let creator = h.wallets[0].insecure_clone();
    let yes = h.wallets[1].insecure_clone();
    let no = h.wallets[2].insecure_clone();
    let id = h
        .create_sol_market(&creator, MarketVariant::Yield, DAY)
        .await;
    h.back(&yes, &id, Side::Yes, 3 * SOL).await.unwrap();
    h.back(&no, &id, Side::No, SOL).await.unwrap();
    h.warp_by(DAY).await;
    h.vote(0, &id, Side::Yes, 9_000).await.unwrap();
    h.vote(1, &id, Side::Yes, 8_000).await.unwrap();
    h.warp_by(2 * DAY).await;
    h.finalize(&id).await.unwrap();
    let before = h.lamports(yes.pubkey()).await;
    h.claim(&yes, &id, Side::Yes).await.unwrap();
    assert_eq!(
        h.lamports(yes.pubkey()).await - before,
        3 * SOL + 175_000_000
    );
}
