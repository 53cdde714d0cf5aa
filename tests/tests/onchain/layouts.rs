//! Account layouts: every state account starts with its version byte, and an account written in
//! an older layout is refused with a log line that says so, instead of being misread. Each test
//! turns a live account into the version before its current layout (the version byte one lower,
//! and the fields that version did not have yet missing) and shows the next instruction on it
//! fails and leaves the account and the money as they were.

use anchor_lang::error::ErrorCode as Anchor;
use anchor_lang::prelude::Pubkey;
use binary_vault::state::{MarketVariant, Side};
use crucible_pool::SOL_MINT;
use integration_tests::*;
use narrative_sdk::{binary, crucible, pda, shield};
use shield_vault::state::{ShieldKind, ShieldSide};
use solana_instruction_error::InstructionError;
use solana_signer::Signer;

/// Rewrites the account at `address`, in layout version `current`, into the version before,
/// without `dropped_tail` trailing bytes (the fields that layout did not have yet); returns the
/// bytes written.
async fn downgrade(h: &mut Harness, address: Pubkey, current: u8, dropped_tail: usize) -> Vec<u8> {
    let mut account = h.raw_account(address).await.expect("account to downgrade");
    assert_eq!(account.data[8], current, "the current layout's version");
    account.data[8] = current - 1;
    let kept = account.data.len() - dropped_tail;
    account.data.truncate(kept);
    let written = account.data.clone();
    h.plant_account(address, account);
    written
}

/// Fails unless `result` is the refusal of an account in another layout: Anchor's
/// `AccountDidNotDeserialize`. (On chain its log line names the account and both versions,
/// `vault_common::layout_mismatch`; natively run programs print their logs instead of recording
/// them, so the line is tested in vault_common.)
fn assert_refused_as_old_layout(result: Result<(), solana_program_test::BanksClientError>) {
    assert_instruction_error(
        result,
        InstructionError::Custom(Anchor::AccountDidNotDeserialize.into()),
    );
}

#[tokio::test]
async fn a_market_in_an_older_layout_is_refused_not_misread() {
    let mut h = Harness::start().await;
    let creator = h.wallets[3].insecure_clone();
    let backer = h.wallets[0].insecure_clone();
    let id = h
        .create_sol_market(&creator, MarketVariant::Yield, DAY)
        .await;
    h.back(&backer, &id, Side::Yes, SOL).await.unwrap();
    // Before `dispute_bond_lamports` (a u64) was added, the market ended 8 bytes earlier.
    let written = downgrade(&mut h, pda::binary::market(&id), 1, 8).await;
    let vault_before = h.vault_balance(&id, Side::Yes).await;
    let backer_before = h.lamports(backer.pubkey()).await;

    let ix = binary::back_market(backer.pubkey(), &id, Side::Yes, SOL);
    assert_refused_as_old_layout(h.process(&[ix], &[&backer]).await);
    let after = h.raw_account(pda::binary::market(&id)).await.unwrap();
    assert_eq!(after.data, written, "the account is not touched");
    assert_eq!(h.vault_balance(&id, Side::Yes).await, vault_before);
    assert_eq!(h.lamports(backer.pubkey()).await, backer_before);
    // Off chain too: the sdk's decoder (the indexer's and the api's) gives nothing rather than
    // a misread market.
    let decoded = narrative_sdk::decode::decode_account(&binary_vault::ID, &after.data);
    assert!(decoded.is_none(), "decoded an old layout as {decoded:?}");
}

#[tokio::test]
async fn a_coverage_in_an_older_layout_is_refused_not_misread() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let backer = h.wallets[0].insecure_clone();
    let id = h
        .open_shield(ShieldKind::Community, Default::default(), 30, 0, &admin)
        .await
        .unwrap();
    h.back_shield(&backer, &id, ShieldSide::Safe, SOL)
        .await
        .unwrap();
    // An older layout of the same size: only the version byte tells them apart.
    let written = downgrade(&mut h, pda::shield::coverage(&id), 2, 0).await;
    let vault_before = h.shield_vault_balance(&id, ShieldSide::Safe).await;

    let ix = shield::back_shield(backer.pubkey(), &id, ShieldSide::Safe, SOL);
    assert_refused_as_old_layout(h.process(&[ix], &[&backer]).await);
    let after = h.raw_account(pda::shield::coverage(&id)).await.unwrap();
    assert_eq!(after.data, written);
    assert_eq!(
        h.shield_vault_balance(&id, ShieldSide::Safe).await,
        vault_before
    );
}

#[tokio::test]
async fn a_crucible_epoch_in_an_older_layout_is_refused_not_misread() {
    let mut h = Harness::start().await;
    let source = h.wallets[3].insecure_clone();
    h.allow_source(source.pubkey()).await.unwrap();
    let epoch = pda::crucible::epoch(&SOL_MINT, 0);
    // Before `claimable_at` (an i64) was added, the epoch ended 8 bytes earlier.
    let written = downgrade(&mut h, epoch, 1, 8).await;
    let vault_before = h.lamports(pda::crucible::sol_vault()).await;

    let ix = crucible::deposit_sol(source.pubkey(), source.pubkey(), 0, SOL);
    assert_refused_as_old_layout(h.process(&[ix], &[&source]).await);
    assert_eq!(h.raw_account(epoch).await.unwrap().data, written);
    assert_eq!(h.lamports(pda::crucible::sol_vault()).await, vault_before);
}
