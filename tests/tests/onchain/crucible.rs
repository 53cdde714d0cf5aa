//! crucible_pool: deposits only from authorised sources, epochs closed by the keeper with a
//! Merkle root, one proven claim per wallet, rollover of what is left unclaimed.

use anchor_lang::prelude::Pubkey;
use anchor_lang::Space;
use crucible_pool::constants::{
    ADMIN_ACTION_TIMELOCK_SECS, MAX_AUTHORIZED_SOURCES, MAX_DURATION_SECS, MAX_PROOF_LEN,
    MIN_DURATION_SECS, ROOT_CHALLENGE_DELAY_SECS,
};
use crucible_pool::error::CrucibleError;
use crucible_pool::instructions::{CloseEpochArgs, InitializeArgs, UpdateSettingsArgs};
use crucible_pool::state::{ClaimReceipt, CrucibleState, EpochStatus};
use crucible_pool::SOL_MINT;
use integration_tests::*;
use narrative_sdk::merkle::Distribution;
use narrative_sdk::{crucible, pda};
use solana_account::Account;
use solana_instruction_error::InstructionError;
use solana_keypair::Keypair;
use solana_signer::Signer;

/// A keypair the admin authorises as a deposit source (standing in for a program's CPI signer),
/// through the admin timelock.
async fn authorised_source(h: &mut Harness) -> Keypair {
    let source = h.wallets[3].insecure_clone();
    h.allow_source(source.pubkey()).await.unwrap();
    source
}

async fn deposit(
    h: &mut Harness,
    source: &Keypair,
    amount: u64,
) -> Result<(), solana_program_test::BanksClientError> {
    let epoch = h.asset_pool(&SOL_MINT).await.current_epoch;
    let ix = crucible::deposit_sol(source.pubkey(), source.pubkey(), epoch, amount);
    h.process(&[ix], &[source]).await
}

async fn close(
    h: &mut Harness,
    mint: Pubkey,
    conviction: u64,
    creator: u64,
    root: [u8; 32],
) -> Result<(), solana_program_test::BanksClientError> {
    let keeper = h.keeper.insecure_clone();
    let current = h.asset_pool(&mint).await.current_epoch;
    let args = CloseEpochArgs {
        conviction_pool: conviction,
        creator_pool: creator,
        merkle_root: root,
    };
    h.process(
        &[crucible::close_epoch(keeper.pubkey(), mint, current, args)],
        &[&keeper],
    )
    .await
}

/// What the SOL vault must hold above its reserve: open epochs' balances plus what closed,
/// not-yet-rolled epochs still owe.
async fn owed(h: &mut Harness) -> u64 {
    let current = h.asset_pool(&SOL_MINT).await.current_epoch;
    let mut total = 0;
    for n in 0..=current {
        let e = h.epoch(&SOL_MINT, n).await;
        total += match e.status {
            EpochStatus::Open => e.available().unwrap(),
            EpochStatus::Closed => e.unclaimed().unwrap(),
            EpochStatus::RolledOver => 0,
        };
    }
    total
}

/// 5 SOL deposited into epoch 0, which the keeper closes a week later with a root paying all
/// of it to `wallet`.
async fn root_paying_all_to(h: &mut Harness, wallet: Pubkey) -> Distribution {
    let source = authorised_source(h).await;
    deposit(h, &source, 5 * SOL).await.unwrap();
    h.warp_by(EPOCH_DURATION).await;
    let epoch0 = pda::crucible::epoch(&SOL_MINT, 0);
    let dist = Distribution::new(&epoch0, &[(wallet, 5 * SOL)]);
    close(h, SOL_MINT, 4 * SOL, SOL, dist.root()).await.unwrap();
    dist
}

async fn crucible_state(h: &mut Harness) -> crucible_pool::state::CrucibleState {
    h.account(pda::crucible::state()).await
}

async fn vault_above_reserve(h: &mut Harness) -> u64 {
    let reserve = h.rent_for(0).await;
    h.lamports(pda::crucible::sol_vault()).await - reserve
}

#[tokio::test]
async fn epoch_distribution_claims_and_rollover_keep_the_vault_balanced() {
    let mut h = Harness::start().await;
    let source = authorised_source(&mut h).await;
    let [w0, w1, w2] = [0, 1, 2].map(|i| h.wallets[i].insecure_clone());

    deposit(&mut h, &source, 10 * SOL).await.unwrap();
    let e0 = h.epoch(&SOL_MINT, 0).await;
    assert_eq!((e0.deposited, e0.status), (10 * SOL, EpochStatus::Open));
    assert_eq!(vault_above_reserve(&mut h).await, 10 * SOL);

    let epoch0 = pda::crucible::epoch(&SOL_MINT, 0);
    let dist = Distribution::new(
        &epoch0,
        &[
            (w0.pubkey(), 4 * SOL),
            (w1.pubkey(), 3 * SOL),
            (w2.pubkey(), 2 * SOL),
        ],
    );
    assert_custom_error(
        close(&mut h, SOL_MINT, 6 * SOL, 3 * SOL, dist.root()).await,
        CrucibleError::EpochTooYoung,
    );
    h.warp_by(EPOCH_DURATION).await;
    assert_custom_error(
        close(&mut h, SOL_MINT, 8 * SOL, 3 * SOL, dist.root()).await,
        CrucibleError::DistributionExceedsEpoch,
    );
    let outsider = h.wallets[1].insecure_clone();
    let ix = crucible::close_epoch(
        outsider.pubkey(),
        SOL_MINT,
        0,
        CloseEpochArgs {
            conviction_pool: 1,
            creator_pool: 0,
            merkle_root: [0; 32],
        },
    );
    assert_custom_error(
        h.process(&[ix], &[&outsider]).await,
        CrucibleError::NotKeeper,
    );

    close(&mut h, SOL_MINT, 6 * SOL, 3 * SOL, dist.root())
        .await
        .unwrap();
    let closed_at = h.now().await;
    let e0 = h.epoch(&SOL_MINT, 0).await;
    assert_eq!(
        (e0.status, e0.conviction_pool, e0.creator_pool),
        (EpochStatus::Closed, 6 * SOL, 3 * SOL)
    );
    assert_eq!(
        (
            e0.merkle_root,
            e0.closed_at,
            e0.claimable_at,
            e0.claim_deadline
        ),
        (
            dist.root(),
            closed_at,
            closed_at + ROOT_CHALLENGE_DELAY_SECS,
            closed_at + ROOT_CHALLENGE_DELAY_SECS + CLAIM_WINDOW
        )
    );
    let e1 = h.epoch(&SOL_MINT, 1).await;
    assert_eq!(
        (e1.status, e1.rolled_in, e1.started_at),
        (EpochStatus::Open, SOL, closed_at)
    );
    assert_eq!(h.asset_pool(&SOL_MINT).await.current_epoch, 1);

    // The root is claimable only after its challenge delay.
    let receipt_rent = h.rent_for(8 + ClaimReceipt::INIT_SPACE).await;
    let (amount, proof) = dist.proof(&w0.pubkey()).unwrap();
    h.warp_to(closed_at + ROOT_CHALLENGE_DELAY_SECS - 1).await;
    assert_custom_error(
        h.process(
            &[crucible::claim_sol(w0.pubkey(), 0, amount, proof.clone())],
            &[&w0],
        )
        .await,
        CrucibleError::RootInChallenge,
    );
    h.warp_by(1).await;
    let before = h.lamports(w0.pubkey()).await;
    h.process(
        &[crucible::claim_sol(w0.pubkey(), 0, amount, proof.clone())],
        &[&w0],
    )
    .await
    .unwrap();
    assert_eq!(
        h.lamports(w0.pubkey()).await + receipt_rent - before,
        4 * SOL
    );
    let receipt: ClaimReceipt = h
        .account(pda::crucible::claim_receipt(&epoch0, &w0.pubkey()))
        .await;
    assert_eq!(
        (receipt.wallet, receipt.amount, receipt.epoch),
        (w0.pubkey(), 4 * SOL, epoch0)
    );
    assert_instruction_error(
        h.process(
            &[crucible::claim_sol(w0.pubkey(), 0, amount, proof)],
            &[&w0],
        )
        .await,
        InstructionError::AccountAlreadyInitialized,
    );

    // A proof for another amount, or someone else's proof, does not verify.
    let (w1_amount, w1_proof) = dist.proof(&w1.pubkey()).unwrap();
    let (_, w2_proof) = dist.proof(&w2.pubkey()).unwrap();
    for (claimed, proof) in [(w1_amount + 1, w1_proof.clone()), (w1_amount, w2_proof)] {
        let ix = crucible::claim_sol(w1.pubkey(), 0, claimed, proof);
        assert_custom_error(h.process(&[ix], &[&w1]).await, CrucibleError::InvalidProof);
    }
    h.process(
        &[crucible::claim_sol(w1.pubkey(), 0, w1_amount, w1_proof)],
        &[&w1],
    )
    .await
    .unwrap();
    let e0 = h.epoch(&SOL_MINT, 0).await;
    assert_eq!((e0.claimed, e0.claims), (7 * SOL, 2));
    let close_receipt = crucible::close_claim_receipt(w1.pubkey(), SOL_MINT, 0);
    assert_custom_error(
        h.process(&[close_receipt], &[&w1]).await,
        CrucibleError::EpochNotRolledOver,
    );
    assert_eq!(h.asset_pool(&SOL_MINT).await.total_claimed, 7 * SOL);

    // New deposits land in epoch 1.
    deposit(&mut h, &source, SOL / 2).await.unwrap();
    assert_eq!(h.epoch(&SOL_MINT, 1).await.deposited, SOL / 2);
    assert_eq!(vault_above_reserve(&mut h).await, owed(&mut h).await);

    // w2 never claims: after the window its 2 SOL rolls into epoch 1.
    let rollover = crucible::rollover(SOL_MINT, 0, 1);
    assert_custom_error(
        h.process(std::slice::from_ref(&rollover), &[]).await,
        CrucibleError::ClaimWindowOpen,
    );
    h.warp_to(closed_at + ROOT_CHALLENGE_DELAY_SECS + CLAIM_WINDOW + 1)
        .await;
    let (w2_amount, w2_proof) = dist.proof(&w2.pubkey()).unwrap();
    let ix = crucible::claim_sol(w2.pubkey(), 0, w2_amount, w2_proof);
    assert_custom_error(
        h.process(&[ix], &[&w2]).await,
        CrucibleError::ClaimWindowClosed,
    );
    h.process(std::slice::from_ref(&rollover), &[])
        .await
        .unwrap();
    let e0 = h.epoch(&SOL_MINT, 0).await;
    assert_eq!(
        (e0.status, e0.rolled_out),
        (EpochStatus::RolledOver, 2 * SOL)
    );
    let e1 = h.epoch(&SOL_MINT, 1).await;
    assert_eq!(
        (e1.rolled_in, e1.available().unwrap()),
        (3 * SOL, 3 * SOL + SOL / 2)
    );
    assert_custom_error(
        h.process(&[rollover], &[]).await,
        CrucibleError::EpochNotClosed,
    );
    assert_eq!(vault_above_reserve(&mut h).await, owed(&mut h).await);
    assert_eq!(vault_above_reserve(&mut h).await, 3 * SOL + SOL / 2);
}

#[tokio::test]
async fn deposit_from_an_unauthorised_source_is_rejected() {
    let mut h = Harness::start().await;
    let stranger = h.wallets[0].insecure_clone();
    let before = h.lamports(stranger.pubkey()).await;
    assert_custom_error(
        deposit(&mut h, &stranger, SOL).await,
        CrucibleError::UnauthorizedSource,
    );
    assert_eq!(h.lamports(stranger.pubkey()).await, before);
    assert_eq!(h.epoch(&SOL_MINT, 0).await.deposited, 0);
}

#[tokio::test]
async fn revoking_binary_vault_as_a_source_stops_its_forfeits_not_its_markets() {
    let mut h = Harness::start().await;
    let [yes, no] = [0, 1].map(|i| h.wallets[i].insecure_clone());
    let id = h
        .create_sol_market(&yes, binary_vault::state::MarketVariant::Yield, DAY)
        .await;
    h.back(&yes, &id, binary_vault::state::Side::Yes, SOL)
        .await
        .unwrap();
    h.back(&no, &id, binary_vault::state::Side::No, SOL)
        .await
        .unwrap();
    let admin = h.admin.insecure_clone();
    h.process(
        &[crucible::set_authorized_source(
            admin.pubkey(),
            pda::binary::cpi_authority(),
            false,
        )],
        &[&admin],
    )
    .await
    .unwrap();
    h.resolve(&id, binary_vault::state::Side::Yes).await;
    h.warp_by(binary_vault::constants::DEFAULT_RESOLUTION_TIMELOCK_SECS)
        .await;
    // The market finalises; only the forwarding of its forfeit is refused.
    assert_custom_error(h.finalize(&id).await, CrucibleError::UnauthorizedSource);
    let market = h.market(&id).await;
    assert!(market.finalized && !market.crucible_forwarded);
    assert_eq!(h.epoch(&SOL_MINT, 0).await.deposited, 0);
}

#[tokio::test]
async fn claims_cannot_exceed_the_posted_pools() {
    let mut h = Harness::start().await;
    let source = authorised_source(&mut h).await;
    let [w0, w1] = [0, 1].map(|i| h.wallets[i].insecure_clone());
    deposit(&mut h, &source, 5 * SOL).await.unwrap();
    h.warp_by(EPOCH_DURATION).await;
    // A faulty root whose leaves sum to 6 SOL for 5 SOL of pools.
    let epoch0 = pda::crucible::epoch(&SOL_MINT, 0);
    let dist = Distribution::new(&epoch0, &[(w0.pubkey(), 3 * SOL), (w1.pubkey(), 3 * SOL)]);
    close(&mut h, SOL_MINT, 4 * SOL, SOL, dist.root())
        .await
        .unwrap();
    h.warp_by(ROOT_CHALLENGE_DELAY_SECS).await;
    let (a, p) = dist.proof(&w0.pubkey()).unwrap();
    h.process(&[crucible::claim_sol(w0.pubkey(), 0, a, p)], &[&w0])
        .await
        .unwrap();
    let (a, p) = dist.proof(&w1.pubkey()).unwrap();
    assert_custom_error(
        h.process(&[crucible::claim_sol(w1.pubkey(), 0, a, p)], &[&w1])
            .await,
        CrucibleError::ClaimExceedsDistribution,
    );
}

#[tokio::test]
async fn token_epochs_pay_claims_from_the_mint_vault() {
    let mut h = Harness::start().await;
    let (mint, tokens) = h.spl_setup(1_000_000).await;
    let source = authorised_source(&mut h).await;
    let w0 = h.wallets[0].insecure_clone();
    let from = crucible::SplSource {
        authority: source.pubkey(),
        source_authority: source.pubkey(),
        source: tokens[3],
    };
    h.process(&[crucible::deposit_spl(from, mint, 0, 400_000)], &[&source])
        .await
        .unwrap();
    assert_eq!(
        h.token_balance(&pda::crucible::token_vault(&mint)).await,
        400_000
    );
    assert_eq!(h.epoch(&mint, 0).await.deposited, 400_000);
    h.warp_by(EPOCH_DURATION).await;
    let epoch0 = pda::crucible::epoch(&mint, 0);
    let dist = Distribution::new(&epoch0, &[(w0.pubkey(), 250_000)]);
    close(&mut h, mint, 200_000, 50_000, dist.root())
        .await
        .unwrap();
    assert_eq!(h.epoch(&mint, 1).await.rolled_in, 150_000);
    h.warp_by(ROOT_CHALLENGE_DELAY_SECS).await;
    let (amount, proof) = dist.proof(&w0.pubkey()).unwrap();
    let before = h.token_balance(&tokens[0]).await;
    h.process(
        &[crucible::claim_spl(
            w0.pubkey(),
            tokens[0],
            mint,
            0,
            amount,
            proof,
        )],
        &[&w0],
    )
    .await
    .unwrap();
    assert_eq!(h.token_balance(&tokens[0]).await - before, 250_000);
    assert_eq!(
        h.token_balance(&pda::crucible::token_vault(&mint)).await,
        150_000
    );
}

#[tokio::test]
async fn settings_and_sources_are_admin_only_and_bounded() {
    let mut h = Harness::start().await;
    let outsider = h.wallets[0].insecure_clone();
    let ix = crucible::update_settings(outsider.pubkey(), UpdateSettingsArgs::default());
    assert_custom_error(
        h.process(&[ix], &[&outsider]).await,
        CrucibleError::NotAdmin,
    );
    let ix = crucible::set_authorized_source(outsider.pubkey(), outsider.pubkey(), true);
    assert_custom_error(
        h.process(&[ix], &[&outsider]).await,
        CrucibleError::NotAdmin,
    );

    // Every other admin instruction is the admin's alone too.
    let mint = h.create_mint(6).await;
    for ix in [
        crucible::apply_settings_change(outsider.pubkey()),
        crucible::cancel_settings_change(outsider.pubkey()),
        crucible::set_guardian(outsider.pubkey(), outsider.pubkey()),
        crucible::propose_admin(outsider.pubkey(), Some(outsider.pubkey())),
        crucible::init_sol_pool(outsider.pubkey()),
        crucible::init_token_pool(outsider.pubkey(), mint),
    ] {
        assert_custom_error(
            h.process(&[ix], &[&outsider]).await,
            CrucibleError::NotAdmin,
        );
    }
    assert!(h
        .try_account::<crucible_pool::state::AssetPool>(pda::crucible::asset_pool(&mint))
        .await
        .is_none());

    let admin = h.admin.insecure_clone();
    // A successor must be a key someone can hold.
    assert_custom_error(
        h.process(
            &[crucible::propose_admin(
                admin.pubkey(),
                Some(Pubkey::default()),
            )],
            &[&admin],
        )
        .await,
        CrucibleError::ZeroKey,
    );
    // An epoch and a claim window both last from an hour to 366 days.
    let too_short = MIN_DURATION_SECS - 1;
    let too_long = MAX_DURATION_SECS + 1;
    let out_of_bounds = [too_short, too_long].into_iter().flat_map(|bad| {
        [
            UpdateSettingsArgs {
                epoch_duration_secs: Some(bad),
                ..Default::default()
            },
            UpdateSettingsArgs {
                claim_window_secs: Some(bad),
                ..Default::default()
            },
        ]
    });
    for args in out_of_bounds {
        assert_custom_error(
            h.process(
                &[crucible::update_settings(admin.pubkey(), args)],
                &[&admin],
            )
            .await,
            CrucibleError::InvalidDuration,
        );
    }
    // binary_vault and shield_vault hold two of the four slots.
    for _ in 0..2 {
        h.allow_source(Keypair::new().pubkey()).await.unwrap();
    }
    let ix = crucible::set_authorized_source(admin.pubkey(), Keypair::new().pubkey(), true);
    assert_custom_error(
        h.process(&[ix], &[&admin]).await,
        CrucibleError::TooManySources,
    );
    let ix = crucible::set_authorized_source(admin.pubkey(), Pubkey::default(), true);
    assert_custom_error(
        h.process(&[ix], &[&admin]).await,
        CrucibleError::InvalidSource,
    );
}

#[tokio::test]
async fn donations_to_the_next_epoch_and_a_receipt_do_not_block_them() {
    let mut h = Harness::start().await;
    let source = authorised_source(&mut h).await;
    let w0 = h.wallets[0].insecure_clone();
    deposit(&mut h, &source, SOL).await.unwrap();
    let epoch0 = pda::crucible::epoch(&SOL_MINT, 0);
    for address in [
        pda::crucible::epoch(&SOL_MINT, 1),
        pda::crucible::claim_receipt(&epoch0, &w0.pubkey()),
    ] {
        h.plant_account(
            address,
            Account {
                lamports: 1,
                data: vec![],
                owner: anchor_lang::system_program::ID,
                executable: false,
                rent_epoch: 0,
            },
        );
    }
    h.warp_by(EPOCH_DURATION).await;
    let dist = Distribution::new(&epoch0, &[(w0.pubkey(), SOL)]);
    close(&mut h, SOL_MINT, SOL, 0, dist.root()).await.unwrap();
    h.warp_by(ROOT_CHALLENGE_DELAY_SECS).await;
    let (amount, proof) = dist.proof(&w0.pubkey()).unwrap();
    h.process(
        &[crucible::claim_sol(w0.pubkey(), 0, amount, proof)],
        &[&w0],
    )
    .await
    .unwrap();
    assert_eq!(h.epoch(&SOL_MINT, 0).await.claimed, SOL);
}

#[tokio::test]
async fn the_crucible_admin_role_moves_only_when_the_successor_accepts() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let [successor, outsider] = [2, 3].map(|i| h.wallets[i].insecure_clone());
    assert_custom_error(
        h.process(
            &[crucible::propose_admin(
                outsider.pubkey(),
                Some(outsider.pubkey()),
            )],
            &[&outsider],
        )
        .await,
        CrucibleError::NotAdmin,
    );
    h.process(
        &[crucible::propose_admin(
            admin.pubkey(),
            Some(successor.pubkey()),
        )],
        &[&admin],
    )
    .await
    .unwrap();
    assert_custom_error(
        h.process(&[crucible::accept_admin(outsider.pubkey())], &[&outsider])
            .await,
        CrucibleError::NotPendingAdmin,
    );
    h.process(&[crucible::accept_admin(successor.pubkey())], &[&successor])
        .await
        .unwrap();
    let state: crucible_pool::state::CrucibleState = h.account(pda::crucible::state()).await;
    assert_eq!(
        (state.admin, state.pending_admin),
        (successor.pubkey(), None)
    );
    // The old key has lost the role; the new one has it.
    let source = Keypair::new().pubkey();
    assert_custom_error(
        h.process(
            &[crucible::set_authorized_source(
                admin.pubkey(),
                source,
                true,
            )],
            &[&admin],
        )
        .await,
        CrucibleError::NotAdmin,
    );
    h.process(
        &[crucible::set_authorized_source(
            successor.pubkey(),
            source,
            true,
        )],
        &[&successor],
    )
    .await
    .unwrap();
    let state: crucible_pool::state::CrucibleState = h.account(pda::crucible::state()).await;
    assert!(state.pending_change.is_some());
}

#[tokio::test]
async fn the_admin_vetoes_a_root_in_its_challenge_delay_and_its_pools_roll_forward() {
    let mut h = Harness::start().await;
    let w0 = h.wallets[0].insecure_clone();
    // The keeper posts a root paying everything to one wallet.
    let dist = root_paying_all_to(&mut h, w0.pubkey()).await;
    let keeper = h.keeper.insecure_clone();
    let admin = h.admin.insecure_clone();
    let veto = |by: &Keypair| crucible::veto_epoch_root(by.pubkey(), SOL_MINT, 0, 1);
    assert_custom_error(
        h.process(&[veto(&keeper)], &[&keeper]).await,
        CrucibleError::NotAdminOrGuardian,
    );
    h.process(&[veto(&admin)], &[&admin]).await.unwrap();
    let e0 = h.epoch(&SOL_MINT, 0).await;
    assert_eq!(
        (e0.status, e0.rolled_out),
        (EpochStatus::RolledOver, 5 * SOL)
    );
    assert_eq!(h.epoch(&SOL_MINT, 1).await.rolled_in, 5 * SOL);
    // The vetoed root pays nobody, even after its delay.
    h.warp_by(ROOT_CHALLENGE_DELAY_SECS).await;
    let (amount, proof) = dist.proof(&w0.pubkey()).unwrap();
    assert_custom_error(
        h.process(
            &[crucible::claim_sol(w0.pubkey(), 0, amount, proof)],
            &[&w0],
        )
        .await,
        CrucibleError::EpochNotClosed,
    );
    assert_eq!(vault_above_reserve(&mut h).await, owed(&mut h).await);

    // A root past its delay can no longer be vetoed.
    h.warp_by(EPOCH_DURATION).await;
    let epoch1 = pda::crucible::epoch(&SOL_MINT, 1);
    let dist = Distribution::new(&epoch1, &[(w0.pubkey(), 5 * SOL)]);
    close(&mut h, SOL_MINT, 5 * SOL, 0, dist.root())
        .await
        .unwrap();
    h.warp_by(ROOT_CHALLENGE_DELAY_SECS).await;
    let late = crucible::veto_epoch_root(admin.pubkey(), SOL_MINT, 1, 2);
    assert_custom_error(
        h.process(&[late], &[&admin]).await,
        CrucibleError::ChallengeDelayOver,
    );
    let (amount, proof) = dist.proof(&w0.pubkey()).unwrap();
    h.process(
        &[crucible::claim_sol(w0.pubkey(), 1, amount, proof)],
        &[&w0],
    )
    .await
    .unwrap();
}

/// Finding (low): crucible_pool's keeper, epoch timing and sources changed at once, so a
/// compromised admin could name a keeper and post a root within the 48 h challenge delay of its
/// own making. Those changes now wait the 259,200 s timelock (expiring 7 days after it);
/// forbidding a source stays immediate (it only stops deposits).
#[tokio::test]
async fn keeper_timing_and_new_sources_wait_the_admin_timelock() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let old_keeper = h.keeper.pubkey();
    let new_keeper = Keypair::new().pubkey();
    let args = UpdateSettingsArgs {
        keeper: Some(new_keeper),
        epoch_duration_secs: Some(DAY),
        claim_window_secs: Some(2 * DAY),
    };
    h.process(
        &[crucible::update_settings(admin.pubkey(), args.clone())],
        &[&admin],
    )
    .await
    .unwrap();
    assert_eq!(
        crucible_state(&mut h).await.keeper,
        old_keeper,
        "nothing changes yet"
    );
    let newcomer = Keypair::new().pubkey();
    assert_custom_error(
        h.process(
            &[crucible::set_authorized_source(
                admin.pubkey(),
                newcomer,
                true,
            )],
            &[&admin],
        )
        .await,
        CrucibleError::ChangePending,
    );
    let apply = crucible::apply_settings_change(admin.pubkey());
    h.apply_when_due(
        apply.clone(),
        ADMIN_ACTION_TIMELOCK_SECS,
        CrucibleError::AdminTimelockNotElapsed,
    )
    .await;
    let s = crucible_state(&mut h).await;
    assert_eq!(
        (
            s.keeper,
            s.epoch_duration_secs,
            s.claim_window_secs,
            s.pending_change
        ),
        (new_keeper, DAY, 2 * DAY, None)
    );

    // A new source: proposed, not yet allowed; applied after the timelock.
    h.process(
        &[crucible::set_authorized_source(
            admin.pubkey(),
            newcomer,
            true,
        )],
        &[&admin],
    )
    .await
    .unwrap();
    assert!(!crucible_state(&mut h).await.is_authorized(&newcomer));
    // Past the apply window it is gone and must be proposed again.
    h.warp_by(ADMIN_ACTION_TIMELOCK_SECS + vault_common::APPLY_WINDOW_SECS)
        .await;
    assert_custom_error(
        h.process(std::slice::from_ref(&apply), &[&admin]).await,
        CrucibleError::ChangeExpired,
    );
    h.allow_source(newcomer).await.unwrap();
    assert!(crucible_state(&mut h).await.is_authorized(&newcomer));
    // Forbidding takes effect at once.
    h.process(
        &[crucible::set_authorized_source(
            admin.pubkey(),
            newcomer,
            false,
        )],
        &[&admin],
    )
    .await
    .unwrap();
    assert!(!crucible_state(&mut h).await.is_authorized(&newcomer));
    // A cancelled change never applies.
    h.process(
        &[crucible::update_settings(admin.pubkey(), args)],
        &[&admin],
    )
    .await
    .unwrap();
    h.process(
        &[crucible::cancel_settings_change(admin.pubkey())],
        &[&admin],
    )
    .await
    .unwrap();
    h.warp_by(ADMIN_ACTION_TIMELOCK_SECS).await;
    assert_custom_error(
        h.process(&[apply], &[&admin]).await,
        CrucibleError::NoPendingChange,
    );
}

/// Finding (low): only the admin could veto a root. A guardian, named through the timelock and
/// never the admin, may veto too; the keeper and strangers still may not.
#[tokio::test]
async fn a_guardian_distinct_from_the_admin_may_veto_a_root() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let guardian = h.wallets[2].insecure_clone();
    assert_custom_error(
        h.process(
            &[crucible::set_guardian(admin.pubkey(), admin.pubkey())],
            &[&admin],
        )
        .await,
        CrucibleError::GuardianIsAdmin,
    );
    h.change_crucible(crucible::set_guardian(admin.pubkey(), guardian.pubkey()))
        .await
        .unwrap();

    let w0 = h.wallets[0].insecure_clone();
    root_paying_all_to(&mut h, w0.pubkey()).await;
    let veto = |by: &Keypair| crucible::veto_epoch_root(by.pubkey(), SOL_MINT, 0, 1);
    let stranger = h.wallets[1].insecure_clone();
    assert_custom_error(
        h.process(&[veto(&stranger)], &[&stranger]).await,
        CrucibleError::NotAdminOrGuardian,
    );
    h.process(&[veto(&guardian)], &[&guardian]).await.unwrap();
    assert_eq!(h.epoch(&SOL_MINT, 1).await.rolled_in, 5 * SOL);
}

/// The keeper posts roots and the admin and the guardian veto them: one key holding two of those
/// roles could post a root paying itself that no other key may stop. The program keeps them
/// three keys, when a change is proposed and when an admin rotation is accepted.
#[tokio::test]
async fn the_keeper_is_never_a_key_that_may_veto_its_roots() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let keeper = h.keeper.insecure_clone();
    let guardian = h.wallets[2].insecure_clone();
    assert_custom_error(
        h.process(
            &[crucible::set_guardian(admin.pubkey(), keeper.pubkey())],
            &[&admin],
        )
        .await,
        CrucibleError::KeeperMayVeto,
    );
    h.change_crucible(crucible::set_guardian(admin.pubkey(), guardian.pubkey()))
        .await
        .unwrap();
    for vetoer in [admin.pubkey(), guardian.pubkey()] {
        let args = UpdateSettingsArgs {
            keeper: Some(vetoer),
            ..Default::default()
        };
        assert_custom_error(
            h.process(
                &[crucible::update_settings(admin.pubkey(), args)],
                &[&admin],
            )
            .await,
            CrucibleError::KeeperMayVeto,
        );
    }
    for (successor, refusal) in [
        (&keeper, CrucibleError::KeeperMayVeto),
        (&guardian, CrucibleError::GuardianIsAdmin),
    ] {
        h.process(
            &[crucible::propose_admin(
                admin.pubkey(),
                Some(successor.pubkey()),
            )],
            &[&admin],
        )
        .await
        .unwrap();
        assert_custom_error(
            h.process(&[crucible::accept_admin(successor.pubkey())], &[successor])
                .await,
            refusal,
        );
    }
    let state = crucible_state(&mut h).await;
    assert_eq!(
        (state.admin, state.keeper, state.guardian),
        (admin.pubkey(), keeper.pubkey(), guardian.pubkey())
    );
    // A keeper that is none of them is still taken.
    let newcomer = h.wallets[3].pubkey();
    let args = UpdateSettingsArgs {
        keeper: Some(newcomer),
        ..Default::default()
    };
    h.change_crucible(crucible::update_settings(admin.pubkey(), args))
        .await
        .unwrap();
    assert_eq!(crucible_state(&mut h).await.keeper, newcomer);
}

/// Between a deployment and its initialisation anyone could send `initialize`: only the upgrade
/// authority's is taken, and its settings meet the bounds and the role rules every later change
/// must meet; a guardian named there may veto from the first epoch.
#[tokio::test]
async fn initialize_is_the_upgrade_authoritys_and_its_settings_are_bounded() {
    let authority = Keypair::new();
    let impostor = Keypair::new();
    let mut bank = Uninitialised::start(&authority.pubkey(), &[&authority, &impostor]).await;
    let keeper = Keypair::new().pubkey();
    let args = |epoch_duration_secs, claim_window_secs, sources: usize| InitializeArgs {
        keeper,
        epoch_duration_secs,
        claim_window_secs,
        authorized_sources: (0..sources).map(|_| Keypair::new().pubkey()).collect(),
        guardian: Pubkey::default(),
    };
    let guarded_by = |guardian| InitializeArgs {
        guardian,
        ..args(EPOCH_DURATION, CLAIM_WINDOW, 2)
    };
    let by = |signer: &Keypair, args| crucible::initialize(signer.pubkey(), args);
    assert_custom_error(
        bank.process(
            by(&impostor, args(EPOCH_DURATION, CLAIM_WINDOW, 2)),
            &impostor,
        )
        .await,
        CrucibleError::NotUpgradeAuthority,
    );
    let (too_short, too_long) = (MIN_DURATION_SECS - 1, MAX_DURATION_SECS + 1);
    for (refused, error) in [
        (
            args(too_short, CLAIM_WINDOW, 2),
            CrucibleError::InvalidDuration,
        ),
        (
            args(too_long, CLAIM_WINDOW, 2),
            CrucibleError::InvalidDuration,
        ),
        (
            args(EPOCH_DURATION, too_short, 2),
            CrucibleError::InvalidDuration,
        ),
        (
            args(EPOCH_DURATION, too_long, 2),
            CrucibleError::InvalidDuration,
        ),
        (
            args(EPOCH_DURATION, CLAIM_WINDOW, MAX_AUTHORIZED_SOURCES + 1),
            CrucibleError::TooManySources,
        ),
        (
            guarded_by(authority.pubkey()),
            CrucibleError::GuardianIsAdmin,
        ),
        (guarded_by(keeper), CrucibleError::KeeperMayVeto),
    ] {
        assert_custom_error(
            bank.process(by(&authority, refused), &authority).await,
            error,
        );
    }
    assert!(!bank.exists(pda::crucible::state()).await);
    let guardian = Keypair::new().pubkey();
    let edges = InitializeArgs {
        guardian,
        ..args(MIN_DURATION_SECS, MAX_DURATION_SECS, MAX_AUTHORIZED_SOURCES)
    };
    bank.process(by(&authority, edges), &authority)
        .await
        .unwrap();
    let state: CrucibleState = bank.account(pda::crucible::state()).await;
    assert_eq!(
        (state.admin, state.keeper, state.guardian),
        (authority.pubkey(), keeper, guardian)
    );
    assert!(state.may_veto(&guardian));
}

/// A guardian and a new deposit source are settings changes like the keeper: neither applies
/// before the admin timelock, so nobody is surprised by who may veto roots or pay in.
#[tokio::test]
async fn a_guardian_or_a_new_source_waits_the_admin_timelock() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let guardian = h.wallets[2].pubkey();
    let source = Keypair::new().pubkey();
    let apply = crucible::apply_settings_change(admin.pubkey());
    for proposal in [
        crucible::set_guardian(admin.pubkey(), guardian),
        crucible::set_authorized_source(admin.pubkey(), source, true),
    ] {
        h.process(&[proposal], &[&admin]).await.unwrap();
        h.apply_when_due(
            apply.clone(),
            ADMIN_ACTION_TIMELOCK_SECS,
            CrucibleError::AdminTimelockNotElapsed,
        )
        .await;
    }
    let state = crucible_state(&mut h).await;
    assert_eq!(state.guardian, guardian);
    assert!(state.is_authorized(&source));
}

/// A proof is at most `MAX_PROOF_LEN` hashes (2^24 leaves): one of that length is checked
/// against the root, a longer one is refused before any hashing.
#[tokio::test]
async fn a_claim_proof_longer_than_the_deepest_tree_is_refused() {
    let mut h = Harness::start().await;
    let w0 = h.wallets[0].insecure_clone();
    root_paying_all_to(&mut h, w0.pubkey()).await;
    h.warp_by(ROOT_CHALLENGE_DELAY_SECS).await;
    for (hashes, error) in [
        (MAX_PROOF_LEN, CrucibleError::InvalidProof),
        (MAX_PROOF_LEN + 1, CrucibleError::ProofTooLong),
    ] {
        let claim = crucible::claim_sol(w0.pubkey(), 0, 5 * SOL, vec![[7; 32]; hashes]);
        assert_custom_error(h.process(&[claim], &[&w0]).await, error);
    }
    assert_eq!(h.epoch(&SOL_MINT, 0).await.claimed, 0);
}
