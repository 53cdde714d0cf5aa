//! binary_vault with SPL tokens: token vaults owned by the market PDA, the crucible share as a
//! token CPI, and the mint checks.

use anchor_lang::error::ErrorCode as Anchor;
use anchor_lang::solana_program::program_option::COption;
use anchor_lang::solana_program::program_pack::Pack;
use anchor_spl::token::spl_token;
use binary_vault::constants::*;
use binary_vault::error::BinaryError;
use binary_vault::state::{MarketVariant, Side};
use integration_tests::*;
use narrative_sdk::{binary, pda};
use solana_signer::Signer;

const UNITS: u64 = 1_000_000_000;

#[tokio::test]
async fn spl_yield_market_settles_in_tokens_with_the_crucible_share() {
    let mut h = Harness::start().await;
    let (mint, tokens) = h.spl_setup(UNITS).await;
    let [a, b, c, creator] = [0, 1, 2, 3].map(|i| h.wallets[i].insecure_clone());
    let id = h
        .create_spl_market(&creator, mint, MarketVariant::Yield, DAY)
        .await
        .unwrap();
    let m = h.market(&id).await;
    assert_eq!(
        (m.mint, m.min_backing, m.approved),
        (mint, MIN_BACKING_SPL, true)
    );
    for side in [Side::Yes, Side::No] {
        assert_eq!(
            h.token_balance(&pda::binary::token_vault(&id, side)).await,
            0
        );
    }

    for (w, account, side, amount) in [
        (&a, tokens[0], Side::Yes, 3_000_000),
        (&b, tokens[1], Side::Yes, 1_000_000),
        (&c, tokens[2], Side::No, 2_000_000),
    ] {
        let ix = binary::back_market_spl(w.pubkey(), &id, mint, account, side, amount);
        h.process(&[ix], &[w]).await.unwrap();
        assert_eq!(h.token_balance(&account).await, UNITS - amount);
    }
    assert_eq!(
        h.token_balance(&pda::binary::token_vault(&id, Side::Yes))
            .await,
        4_000_000
    );
    assert_eq!(
        h.token_balance(&pda::binary::token_vault(&id, Side::No))
            .await,
        2_000_000
    );
    assert_eq!(
        h.backing(&id, &b.pubkey(), Side::Yes).await.amount,
        1_000_000
    );

    h.resolve(&id, Side::Yes).await;
    h.warp_by(DEFAULT_RESOLUTION_TIMELOCK_SECS).await;
    h.finalize_spl(&id, mint).await.unwrap();
    assert_eq!(
        h.token_balance(&pda::crucible::token_vault(&mint)).await,
        350_000
    );
    assert_eq!(h.epoch(&mint, 0).await.deposited, 350_000);
    let m = h.market(&id).await;
    assert_eq!(
        (
            m.oracle_status,
            m.crucible_amount,
            m.winner_bonus_pool,
            m.loser_refund_pool
        ),
        (ORACLE_STATUS_RESOLVED, 350_000, 350_000, 1_300_000)
    );

    for (w, account, side, paid) in [
        (&a, tokens[0], Side::Yes, 3_262_500),
        (&b, tokens[1], Side::Yes, 1_087_500),
        (&c, tokens[2], Side::No, 1_300_000),
    ] {
        let before = h.token_balance(&account).await;
        let ix = binary::claim_spl(w.pubkey(), &id, side, mint, account);
        h.process(&[ix], &[w]).await.unwrap();
        assert_eq!(h.token_balance(&account).await - before, paid);
        assert_eq!(h.backing(&id, &w.pubkey(), side).await.payout, paid);
    }
    for side in [Side::Yes, Side::No] {
        assert_eq!(
            h.token_balance(&pda::binary::token_vault(&id, side)).await,
            0
        );
    }
}

#[tokio::test]
async fn spl_classic_market_and_refund_pay_out_in_tokens() {
    let mut h = Harness::start().await;
    let (mint, tokens) = h.spl_setup(UNITS).await;
    let [a, b, creator] = [0, 1, 3].map(|i| h.wallets[i].insecure_clone());

    let classic = h
        .create_spl_market(&creator, mint, MarketVariant::Classic, DAY)
        .await
        .unwrap();
    for (w, account, side) in [(&a, tokens[0], Side::Yes), (&b, tokens[1], Side::No)] {
        let ix = binary::back_market_spl(w.pubkey(), &classic, mint, account, side, 50_000);
        h.process(&[ix], &[w]).await.unwrap();
    }
    h.resolve(&classic, Side::No).await;
    h.warp_by(DEFAULT_RESOLUTION_TIMELOCK_SECS).await;
    h.finalize_spl(&classic, mint).await.unwrap();
    assert_eq!(h.token_balance(&pda::crucible::token_vault(&mint)).await, 0);
    let before = h.token_balance(&tokens[1]).await;
    h.process(
        &[binary::claim_spl(
            b.pubkey(),
            &classic,
            Side::No,
            mint,
            tokens[1],
        )],
        &[&b],
    )
    .await
    .unwrap();
    assert_eq!(h.token_balance(&tokens[1]).await - before, 100_000);
    let ix = binary::claim_spl(a.pubkey(), &classic, Side::Yes, mint, tokens[0]);
    assert_custom_error(
        h.process(&[ix], &[&a]).await,
        BinaryError::ClassicLoserCannotClaim,
    );

    let refunded = h
        .create_spl_market(&creator, mint, MarketVariant::Yield, DAY)
        .await
        .unwrap();
    let ix = binary::back_market_spl(a.pubkey(), &refunded, mint, tokens[0], Side::Yes, 70_000);
    h.process(&[ix], &[&a]).await.unwrap();
    h.warp_by(DAY + MAX_RESOLUTION_DELAY).await;
    h.process(&[binary::trigger_timeout_refund(&refunded)], &[])
        .await
        .unwrap();
    let before = h.token_balance(&tokens[0]).await;
    h.process(
        &[binary::claim_spl(
            a.pubkey(),
            &refunded,
            Side::Yes,
            mint,
            tokens[0],
        )],
        &[&a],
    )
    .await
    .unwrap();
    assert_eq!(h.token_balance(&tokens[0]).await - before, 70_000);
}

#[tokio::test]
async fn spl_market_for_a_mint_crucible_does_not_hold_is_rejected() {
    let mut h = Harness::start().await;
    let creator = h.wallets[3].insecure_clone();
    let unlisted = h.create_mint(9).await;
    let result = h
        .create_spl_market(&creator, unlisted, MarketVariant::Yield, DAY)
        .await;
    assert_custom_error(result, Anchor::AccountNotInitialized);
}

#[tokio::test]
async fn wrong_mint_on_an_spl_market_is_rejected() {
    let mut h = Harness::start().await;
    let (mint, tokens) = h.spl_setup(UNITS).await;
    let creator = h.wallets[3].insecure_clone();
    let w = h.wallets[0].insecure_clone();
    let id = h
        .create_spl_market(&creator, mint, MarketVariant::Yield, DAY)
        .await
        .unwrap();
    let other_mint = h.create_mint(6).await;
    let other_tokens = h
        .create_token_account(&other_mint, &w.pubkey(), UNITS)
        .await;

    // Paying with a token account of another mint.
    let ix = binary::back_market_spl(w.pubkey(), &id, mint, other_tokens, Side::Yes, 5_000);
    assert_custom_error(h.process(&[ix], &[&w]).await, BinaryError::WrongMint);
    // Naming another mint for the market.
    let ix = binary::back_market_spl(w.pubkey(), &id, other_mint, other_tokens, Side::Yes, 5_000);
    assert_custom_error(h.process(&[ix], &[&w]).await, BinaryError::WrongMint);
    // The SOL instruction on an SPL market.
    assert_custom_error(
        h.back(&w, &id, Side::Yes, SOL).await,
        BinaryError::WrongAsset,
    );
    assert_eq!(h.token_balance(&other_tokens).await, UNITS);
    assert_eq!(h.token_balance(&tokens[0]).await, UNITS);
    assert_eq!(h.market(&id).await.yes_total, 0);
}

#[tokio::test]
async fn spl_backing_below_the_configured_minimum_is_rejected() {
    let mut h = Harness::start().await;
    let (mint, tokens) = h.spl_setup(UNITS).await;
    let creator = h.wallets[3].insecure_clone();
    let w = h.wallets[0].insecure_clone();
    let id = h
        .create_spl_market(&creator, mint, MarketVariant::Yield, DAY)
        .await
        .unwrap();
    let ix = binary::back_market_spl(
        w.pubkey(),
        &id,
        mint,
        tokens[0],
        Side::No,
        MIN_BACKING_SPL - 1,
    );
    assert_custom_error(h.process(&[ix], &[&w]).await, BinaryError::BelowMinimum);
}

/// Finding (info): a mint's freeze authority could freeze a market's or a pool's token vault,
/// and every backer's money in it. Such mints are refused for markets and token pools.
#[tokio::test]
async fn mints_with_a_freeze_authority_are_refused_for_markets_and_token_pools() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let freezer = h.payer();
    let freezable = h.create_mint_freezable(6, Some(&freezer)).await;
    let pool = narrative_sdk::crucible::init_token_pool(admin.pubkey(), freezable);
    assert_custom_error(
        h.process(&[pool], &[&admin]).await,
        crucible_pool::error::CrucibleError::MintHasFreezeAuthority,
    );
    // A mint with a pool is accepted by binary_vault; the same mint with a freeze authority is
    // not. SPL Token cannot add a freeze authority to a mint, so the authority is written into
    // the mint's data here, to test binary_vault's own check apart from crucible_pool's.
    let creator = h.wallets[3].insecure_clone();
    let (mint, _) = h.spl_setup(UNITS).await;
    h.create_spl_market(&creator, mint, MarketVariant::Yield, DAY)
        .await
        .unwrap();
    let mut account = h.raw_account(mint).await.unwrap();
    let mut state = spl_token::state::Mint::unpack(&account.data).unwrap();
    state.freeze_authority = COption::Some(freezer);
    spl_token::state::Mint::pack(state, &mut account.data).unwrap();
    h.plant_account(mint, account);
    assert_custom_error(
        h.create_spl_market(&creator, mint, MarketVariant::Yield, DAY)
            .await,
        BinaryError::MintHasFreezeAuthority,
    );
}
