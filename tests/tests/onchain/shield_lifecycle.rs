//! shield_vault happy paths, both outcomes on both shield kinds, with the exact lamports that
//! move; the timelocked admin changes; and a named test per rounding edge of the yield shares.

use anchor_lang::prelude::Pubkey;
use anchor_lang::Space;
use crucible_pool::SOL_MINT;
use integration_tests::*;
use narrative_sdk::decode::{CrucibleEvent, ProgramEvent, ShieldEvent};
use narrative_sdk::shield::Claim;
use narrative_sdk::{crucible, pda, shield};
use shield_vault::constants::*;
use shield_vault::error::ShieldError;
use shield_vault::state::{
    AdminChange, CoverageStatus, PayoutRecipient, ShieldBacking, ShieldKind, ShieldProgramState,
    ShieldSide, ShieldVerdict,
};
use solana_keypair::Keypair;
use solana_signer::Signer;

const SAFE: ShieldSide = ShieldSide::Safe;
const EXPLOIT: ShieldSide = ShieldSide::Exploit;

async fn community(h: &mut Harness) -> [u8; 32] {
    let admin = h.admin.insecure_clone();
    h.open_shield(ShieldKind::Community, Default::default(), 30, 0, &admin)
        .await
        .unwrap()
}

/// Past the period end, oracle 0 votes (threshold 1), past the timelock.
async fn resolve_shield(h: &mut Harness, id: &[u8; 32], outcome: ShieldSide) {
    let period_end = h.coverage(id).await.period_end;
    h.warp_to(period_end).await;
    h.shield_vote(0, id, outcome).await.unwrap();
    h.warp_by(RESOLUTION_TIMELOCK_SECS).await;
}

async fn claim_delta(
    h: &mut Harness,
    kind: Claim,
    who: &Keypair,
    id: &[u8; 32],
    side: ShieldSide,
) -> u64 {
    let before = h.lamports(who.pubkey()).await;
    h.shield_claim(kind, who, id, side).await.unwrap();
    h.lamports(who.pubkey()).await - before
}

#[tokio::test]
async fn initialize_program_sets_roles_and_crucible_accepts_the_seam_signer() {
    let mut h = Harness::start().await;
    let state: ShieldProgramState = h.account(pda::shield::program_state()).await;
    assert_eq!(state.admin, h.admin.pubkey());
    assert_eq!((state.oracle_count, state.oracle_threshold), (3, 1));
    assert_eq!(
        (state.treasury, state.harvest_authority),
        (h.treasury, h.harvester.pubkey())
    );
    assert_eq!(
        (
            state.seam_pool_program,
            state.max_self_hedge_bps,
            state.paused
        ),
        (crucible_pool::ID, SELF_HEDGE_BPS, false)
    );
    assert!(state.pending_change.is_none());
    let crucible: crucible_pool::state::CrucibleState = h.account(pda::crucible::state()).await;
    assert!(crucible.is_authorized(&pda::shield::cpi_authority()));
}

#[tokio::test]
async fn open_coverage_collects_the_fee_at_period_start() {
    let mut h = Harness::start().await;
    let protocol = h.wallets[3].insecure_clone();
    let treasury_before = h.lamports(h.treasury).await;
    let payer_before = h.lamports(protocol.pubkey()).await;
    let id = h
        .open_shield(
            ShieldKind::Partnership,
            protocol.pubkey(),
            60,
            2 * SOL,
            &protocol,
        )
        .await
        .unwrap();
    assert_eq!(h.lamports(h.treasury).await - treasury_before, 2 * SOL);
    assert_eq!(payer_before - h.lamports(protocol.pubkey()).await, 2 * SOL);
    let c = h.coverage(&id).await;
    assert_eq!(
        (c.kind, c.protocol_wallet, c.period_days, c.fee_lamports),
        (ShieldKind::Partnership, protocol.pubkey(), 60, 2 * SOL)
    );
    assert_eq!(
        (c.period_start, c.period_end, c.status),
        (START_TIME, START_TIME + 60 * DAY, CoverageStatus::Active)
    );
    let reserve = h.rent_for(0).await;
    for side in [SAFE, EXPLOIT] {
        assert_eq!(h.lamports(pda::shield::vault(&id, side)).await, reserve);
    }
    let state: ShieldProgramState = h.account(pda::shield::program_state()).await;
    assert_eq!(state.coverage_count, 1);
}

#[tokio::test]
async fn backing_mints_shares_and_stores_the_discovery_multiplier() {
    let mut h = Harness::start().await;
    let id = community(&mut h).await;
    let w = h.wallets[0].insecure_clone();
    let rent = h.rent_for(8 + ShieldBacking::INIT_SPACE).await;
    let before = h.lamports(w.pubkey()).await;
    let events = h
        .process_with_events(&[shield::back_shield(w.pubkey(), &id, SAFE, SOL)], &[&w])
        .await
        .unwrap();
    assert_eq!(before - h.lamports(w.pubkey()).await, SOL + rent);
    let b = h.shield_backing(&id, &w.pubkey(), SAFE).await;
    assert_eq!(
        (
            b.amount_lamports,
            b.shares,
            b.multiplier_bps,
            b.discovery_lamports
        ),
        (SOL, 1_000 * SOL as u128, 20_000, SOL)
    );
    assert!(events.iter().any(|e| matches!(e, ProgramEvent::Shield(ShieldEvent::Backed(x)) if x.shares == 1_000 * SOL as u128)));

    // The first 20 % of a 30-day window is 6 days: a backing at day 6 is 1.0x.
    h.warp_to(START_TIME + 6 * DAY).await;
    h.back_shield(&w, &id, SAFE, SOL).await.unwrap();
    let b = h.shield_backing(&id, &w.pubkey(), SAFE).await;
    assert_eq!(
        (b.amount_lamports, b.discovery_lamports, b.multiplier_bps),
        (2 * SOL, SOL, 15_000)
    );
    let c = h.coverage(&id).await;
    assert_eq!(
        (
            c.safe.principal,
            c.safe.total_assets,
            c.safe.backers,
            c.safe.held
        ),
        (2 * SOL, 2 * SOL, 1, 2 * SOL)
    );
    assert_eq!(h.shield_vault_balance(&id, SAFE).await, 2 * SOL);
}

/// SAFE wins: the whole EXPLOIT principal goes to SAFE backers pro rata, no fee; each side's
/// yield stays on its side. Figures follow the share formulas with their floors.
#[tokio::test]
async fn safe_outcome_gives_the_exploit_principal_to_safe_backers_and_keeps_yield_per_side() {
    let mut h = Harness::start().await;
    let [a, b, c, protocol] = [0, 1, 2, 3].map(|i| h.wallets[i].insecure_clone());
    let id = h
        .open_shield(
            ShieldKind::Partnership,
            protocol.pubkey(),
            30,
            SOL,
            &protocol,
        )
        .await
        .unwrap();
    h.back_shield(&a, &id, SAFE, 3 * SOL).await.unwrap();
    h.back_shield(&b, &id, SAFE, SOL).await.unwrap();
    h.back_shield(&c, &id, EXPLOIT, 2 * SOL).await.unwrap();
    h.send_lamports(pda::shield::vault(&id, SAFE), 400_000_000)
        .await;
    h.harvest(&id, SAFE).await.unwrap();
    h.send_lamports(pda::shield::vault(&id, EXPLOIT), 200_000_000)
        .await;
    h.harvest(&id, EXPLOIT).await.unwrap();
    let cov = h.coverage(&id).await;
    assert_eq!(
        (cov.safe.total_assets, cov.safe.yield_harvested),
        (4_400_000_000, 400_000_000)
    );

    let period_end = cov.period_end;
    h.warp_to(period_end).await;
    h.shield_vote(0, &id, SAFE).await.unwrap();
    assert_custom_error(
        h.shield_finalize(&id).await,
        ShieldError::TimelockNotElapsed,
    );
    h.warp_by(RESOLUTION_TIMELOCK_SECS).await;
    let protocol_before = h.lamports(protocol.pubkey()).await;
    h.shield_finalize(&id).await.unwrap();
    let cov = h.coverage(&id).await;
    assert_eq!(
        (cov.status, cov.outcome),
        (CoverageStatus::Resolved, Some(SAFE))
    );
    assert_eq!(
        (
            cov.winner_bonus_pool,
            cov.protocol_payout,
            cov.treasury_payout,
            cov.seam_payout
        ),
        (2 * SOL, 0, 0, 0)
    );
    assert_eq!(h.lamports(protocol.pubkey()).await, protocol_before);
    assert_eq!(h.shield_vault_balance(&id, SAFE).await, 6_400_000_000);
    assert_eq!(h.shield_vault_balance(&id, EXPLOIT).await, 200_000_000);

    assert_eq!(
        claim_delta(&mut h, Claim::SafeWinner, &a, &id, SAFE).await,
        4_799_999_999
    );
    assert_eq!(
        claim_delta(&mut h, Claim::SafeWinner, &b, &id, SAFE).await,
        1_600_000_000
    );
    assert_eq!(
        claim_delta(&mut h, Claim::LoserYield, &c, &id, EXPLOIT).await,
        199_999_999
    );
    let backing = h.shield_backing(&id, &a.pubkey(), SAFE).await;
    assert_eq!(
        (
            backing.principal_paid,
            backing.bonus_paid,
            backing.yield_paid
        ),
        (3 * SOL, 1_500_000_000, 299_999_999)
    );
    let cov = h.coverage(&id).await;
    assert_eq!(
        (cov.principal_returned, cov.bonus_paid, cov.claims_count),
        (4 * SOL, 2 * SOL, 3)
    );
    assert_eq!(
        (cov.safe.yield_paid, cov.exploit.yield_paid),
        (399_999_999, 199_999_999)
    );
    // One lamport of yield per side stays behind, the floors' due.
    assert_eq!(h.shield_vault_balance(&id, SAFE).await, 1);
    assert_eq!(h.shield_vault_balance(&id, EXPLOIT).await, 1);
}

/// EXPLOIT wins a partnership shield: of 10 SOL of SAFE principal, 5 to the protocol wallet,
/// 3.5 to EXPLOIT backers pro rata, 1.2 to the treasury, 0.3 to the seam pool (the three
/// forwarded after finalisation, each by a call of its own).
#[tokio::test]
async fn exploit_outcome_on_a_partnership_splits_the_safe_principal_per_spec() {
    let mut h = Harness::start().await;
    let [a, c, protocol] = [0, 2, 3].map(|i| h.wallets[i].insecure_clone());
    let id = h
        .open_shield(ShieldKind::Partnership, protocol.pubkey(), 90, 0, &protocol)
        .await
        .unwrap();
    h.back_shield(&a, &id, SAFE, 10 * SOL).await.unwrap();
    h.back_shield(&c, &id, EXPLOIT, 2 * SOL).await.unwrap();
    h.back_shield(&protocol, &id, EXPLOIT, SOL).await.unwrap();
    resolve_shield(&mut h, &id, EXPLOIT).await;

    let (treasury_before, protocol_before) = (
        h.lamports(h.treasury).await,
        h.lamports(protocol.pubkey()).await,
    );
    let crucible_before = h.lamports(pda::crucible::sol_vault()).await;
    let ix = shield::finalize_resolution(&id);
    let finalized = h.process_with_events(&[ix], &[]).await.unwrap();
    assert!(finalized.iter().any(|e| matches!(e,
        ProgramEvent::Shield(ShieldEvent::Finalized(f)) if f.winner_bonus_pool == 3_500_000_000 && !f.refunded)));
    // Finalisation pays no wallet: the protocol's, the treasury's and the seam pool's shares
    // wait in the losing vault.
    assert_eq!(h.lamports(protocol.pubkey()).await, protocol_before);
    assert_eq!(h.lamports(h.treasury).await, treasury_before);
    assert_eq!(h.shield_vault_balance(&id, SAFE).await, 6_500_000_000);
    // Each goes to its own wallet only, once.
    let stranger = h.wallets[1].pubkey();
    for (recipient, error) in [
        (PayoutRecipient::Treasury, ShieldError::WrongTreasury),
        (PayoutRecipient::Protocol, ShieldError::WrongProtocolWallet),
    ] {
        let ix = shield::forward_payout(&id, SAFE, recipient, stranger);
        assert_custom_error(h.process(&[ix], &[]).await, error);
    }
    let ix = shield::forward_payout(&id, SAFE, PayoutRecipient::Protocol, protocol.pubkey());
    let events = h.process_with_events(&[ix], &[]).await.unwrap();
    assert!(events.iter().any(|e| matches!(e,
        ProgramEvent::Shield(ShieldEvent::PayoutForwarded(f))
            if f.recipient == PayoutRecipient::Protocol && f.wallet == protocol.pubkey() && f.amount == 5 * SOL)));
    assert_eq!(
        h.lamports(protocol.pubkey()).await - protocol_before,
        5 * SOL
    );
    let ix = shield::forward_payout(&id, SAFE, PayoutRecipient::Treasury, h.treasury);
    h.process(&[ix], &[]).await.unwrap();
    assert_eq!(
        h.lamports(h.treasury).await - treasury_before,
        1_200_000_000
    );
    let cov = h.coverage(&id).await;
    assert!(cov.treasury_forwarded && cov.protocol_forwarded);
    h.warp_by(1).await;
    let ix = shield::forward_payout(&id, SAFE, PayoutRecipient::Treasury, h.treasury);
    assert_custom_error(h.process(&[ix], &[]).await, ShieldError::NoPayoutWaiting);
    assert_eq!(h.shield_vault_balance(&id, SAFE).await, 300_000_000);
    let ix = shield::forward_seam_share(&id, SAFE, 0);
    let events = h.process_with_events(&[ix], &[]).await.unwrap();
    assert_eq!(
        h.lamports(pda::crucible::sol_vault()).await - crucible_before,
        300_000_000
    );
    assert_eq!(h.epoch(&SOL_MINT, 0).await.deposited, 300_000_000);
    assert!(events.iter().any(|e| matches!(e,
        ProgramEvent::Crucible(CrucibleEvent::Deposited(d)) if d.source == pda::shield::cpi_authority() && d.amount == 300_000_000)));
    assert!(events.iter().any(|e| matches!(e,
        ProgramEvent::Shield(ShieldEvent::SeamShareForwarded(f)) if f.amount == 300_000_000)));
    assert_eq!(h.shield_vault_balance(&id, SAFE).await, 0);
    assert_eq!(h.shield_vault_balance(&id, EXPLOIT).await, 6_500_000_000);

    assert_eq!(
        claim_delta(&mut h, Claim::ExploitWinner, &c, &id, EXPLOIT).await,
        2 * SOL + 2_333_333_333
    );
    assert_eq!(
        claim_delta(&mut h, Claim::ExploitWinner, &protocol, &id, EXPLOIT).await,
        SOL + 1_166_666_666
    );
    assert_eq!(
        claim_delta(&mut h, Claim::LoserYield, &a, &id, SAFE).await,
        0
    );
    assert_eq!(h.shield_vault_balance(&id, EXPLOIT).await, 1);
}

#[tokio::test]
async fn exploit_outcome_on_a_community_shield_splits_58_39_3() {
    let mut h = Harness::start().await;
    let [a, c] = [0, 2].map(|i| h.wallets[i].insecure_clone());
    let id = community(&mut h).await;
    h.back_shield(&a, &id, SAFE, 10 * SOL).await.unwrap();
    h.back_shield(&c, &id, EXPLOIT, 2 * SOL).await.unwrap();
    resolve_shield(&mut h, &id, EXPLOIT).await;
    let treasury_before = h.lamports(h.treasury).await;
    let ix = shield::finalize_resolution(&id);
    h.process(&[ix], &[]).await.unwrap();
    h.forward_payouts(&id).await.unwrap();
    assert_eq!(
        h.lamports(h.treasury).await - treasury_before,
        3_900_000_000
    );
    // A community shield has no protocol share to forward.
    let wallet = h.wallets[1].pubkey();
    let ix = shield::forward_payout(&id, SAFE, PayoutRecipient::Protocol, wallet);
    assert_custom_error(h.process(&[ix], &[]).await, ShieldError::NoPayoutWaiting);
    let cov = h.coverage(&id).await;
    assert_eq!(
        (cov.winner_bonus_pool, cov.protocol_payout, cov.seam_payout),
        (5_800_000_000, 0, 300_000_000)
    );
    assert_eq!(
        claim_delta(&mut h, Claim::ExploitWinner, &c, &id, EXPLOIT).await,
        7_800_000_000
    );
    // The seam share waited in the SAFE vault; forwarding sends it to crucible_pool's epoch,
    // from the losing vault only.
    assert_eq!(h.shield_vault_balance(&id, SAFE).await, 300_000_000);
    assert_custom_error(
        h.process(&[shield::forward_seam_share(&id, EXPLOIT, 0)], &[])
            .await,
        shield_vault::error::ShieldError::WrongVault,
    );
    let before = h.epoch(&crucible_pool::SOL_MINT, 0).await.deposited;
    h.forward_seam_share(&id).await.unwrap();
    assert_eq!(
        h.epoch(&crucible_pool::SOL_MINT, 0).await.deposited - before,
        300_000_000
    );
    assert_eq!(h.shield_vault_balance(&id, SAFE).await, 0);
    assert!(h.coverage(&id).await.seam_forwarded);
    let ix = shield::forward_seam_share(&id, SAFE, 0);
    assert_custom_error(
        h.process(&[ix], &[]).await,
        shield_vault::error::ShieldError::NothingToForward,
    );
}

#[tokio::test]
async fn a_revoked_seam_source_freezes_no_shield() {
    let mut h = Harness::start().await;
    let [a, c] = [0, 2].map(|i| h.wallets[i].insecure_clone());
    let id = community(&mut h).await;
    h.back_shield(&a, &id, SAFE, 10 * SOL).await.unwrap();
    h.back_shield(&c, &id, EXPLOIT, 2 * SOL).await.unwrap();
    let admin = h.admin.insecure_clone();
    let revoke =
        crucible::set_authorized_source(admin.pubkey(), pda::shield::cpi_authority(), false);
    h.process(&[revoke], &[&admin]).await.unwrap();
    resolve_shield(&mut h, &id, EXPLOIT).await;
    let ix = shield::finalize_resolution(&id);
    h.process(&[ix], &[]).await.unwrap();
    assert_custom_error(
        h.forward_seam_share(&id).await,
        crucible_pool::error::CrucibleError::UnauthorizedSource,
    );
    // The winner claims in full; the seam share waits, booked as held, never as yield.
    assert_eq!(
        claim_delta(&mut h, Claim::ExploitWinner, &c, &id, EXPLOIT).await,
        7_800_000_000
    );
    assert_custom_error(
        h.harvest(&id, SAFE).await,
        shield_vault::error::ShieldError::NothingToHarvest,
    );
    h.allow_source(pda::shield::cpi_authority()).await.unwrap();
    h.forward_seam_share(&id).await.unwrap();
    h.forward_payouts(&id).await.unwrap();
    assert_eq!(h.shield_vault_balance(&id, SAFE).await, 0);
}

#[tokio::test]
async fn an_unresolvable_threshold_refunds_every_principal_and_its_sides_yield() {
    let mut h = Harness::start().await;
    let [a, c] = [0, 2].map(|i| h.wallets[i].insecure_clone());
    let id = community(&mut h).await;
    h.back_shield(&a, &id, SAFE, 3 * SOL).await.unwrap();
    h.back_shield(&c, &id, EXPLOIT, SOL).await.unwrap();
    h.send_lamports(pda::shield::vault(&id, SAFE), 300_000_000)
        .await;
    h.harvest(&id, SAFE).await.unwrap();
    // Mid-period, one UNRESOLVABLE vote meets the harness's threshold of one.
    let oracle = h.oracles[1].insecure_clone();
    let vote = shield::submit_oracle_resolution(oracle.pubkey(), &id, ShieldVerdict::Unresolvable);
    let events = h.process_with_events(&[vote], &[&oracle]).await.unwrap();
    assert!(events.iter().any(
        |e| matches!(e, ProgramEvent::Shield(ShieldEvent::RefundAll(r)) if r.by == oracle.pubkey())
    ));
    assert_eq!(h.coverage(&id).await.status, CoverageStatus::Refunding);
    assert_eq!(
        claim_delta(&mut h, Claim::Refund, &a, &id, SAFE).await,
        3 * SOL + 299_999_999
    );
    assert_eq!(
        claim_delta(&mut h, Claim::Refund, &c, &id, EXPLOIT).await,
        SOL
    );
}

#[tokio::test]
async fn a_shield_whose_winning_side_is_empty_refunds() {
    let mut h = Harness::start().await;
    let a = h.wallets[0].insecure_clone();
    let id = community(&mut h).await;
    h.back_shield(&a, &id, SAFE, SOL).await.unwrap();
    resolve_shield(&mut h, &id, EXPLOIT).await;
    h.shield_finalize(&id).await.unwrap();
    assert_eq!(h.coverage(&id).await.status, CoverageStatus::Refunding);
    assert_eq!(claim_delta(&mut h, Claim::Refund, &a, &id, SAFE).await, SOL);
}

#[tokio::test]
async fn oracles_pause_only_the_admin_resumes_and_claims_stay_open_while_paused() {
    let mut h = Harness::start().await;
    let a = h.wallets[0].insecure_clone();
    let id = community(&mut h).await;
    h.back_shield(&a, &id, SAFE, SOL).await.unwrap();
    let oracle = h.oracles[0].insecure_clone();
    h.process(&[shield::pause_program(oracle.pubkey(), true)], &[&oracle])
        .await
        .unwrap();
    assert_custom_error(h.back_shield(&a, &id, SAFE, SOL).await, ShieldError::Paused);
    assert_custom_error(
        h.process(&[shield::pause_program(oracle.pubkey(), false)], &[&oracle])
            .await,
        ShieldError::NotAdmin,
    );
    h.shield_vote(0, &id, ShieldVerdict::Unresolvable)
        .await
        .unwrap();
    assert_eq!(claim_delta(&mut h, Claim::Refund, &a, &id, SAFE).await, SOL);
    let admin = h.admin.insecure_clone();
    h.process(&[shield::pause_program(admin.pubkey(), false)], &[&admin])
        .await
        .unwrap();
    let state: ShieldProgramState = h.account(pda::shield::program_state()).await;
    assert!(!state.paused);
}

#[tokio::test]
async fn admin_changes_apply_only_after_the_timelock() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let new_oracles = [Keypair::new().pubkey(), Keypair::new().pubkey()];
    let change = AdminChange::oracle_set(&new_oracles, 2).unwrap();
    h.process(
        &[shield::propose_admin_change(admin.pubkey(), change)],
        &[&admin],
    )
    .await
    .unwrap();
    assert_custom_error(
        h.process(
            &[shield::set_max_self_hedge_bps(admin.pubkey(), 1_000)],
            &[&admin],
        )
        .await,
        ShieldError::ChangePending,
    );
    h.apply_when_due(
        shield::apply_admin_change(admin.pubkey()),
        ADMIN_ACTION_TIMELOCK_SECS,
        ShieldError::AdminTimelockNotElapsed,
    )
    .await;
    let state: ShieldProgramState = h.account(pda::shield::program_state()).await;
    assert_eq!(
        (state.listed_oracles(), state.oracle_threshold),
        (&new_oracles[..], 2)
    );
    assert!(state.pending_change.is_none());

    for change in [
        AdminChange::Treasury(Keypair::new().pubkey()),
        AdminChange::HarvestAuthority(Keypair::new().pubkey()),
        AdminChange::MaxSelfHedgeBps(1_234),
    ] {
        h.process(
            &[shield::propose_admin_change(admin.pubkey(), change)],
            &[&admin],
        )
        .await
        .unwrap();
        // Each kind waits the whole timelock, not only the oracle set.
        h.apply_when_due(
            shield::apply_admin_change(admin.pubkey()),
            ADMIN_ACTION_TIMELOCK_SECS,
            ShieldError::AdminTimelockNotElapsed,
        )
        .await;
    }
    let state: ShieldProgramState = h.account(pda::shield::program_state()).await;
    assert_eq!(state.max_self_hedge_bps, 1_234);
    assert_ne!(state.treasury, h.treasury);

    h.process(
        &[shield::set_max_self_hedge_bps(admin.pubkey(), 4_000)],
        &[&admin],
    )
    .await
    .unwrap();
    h.process(&[shield::cancel_admin_change(admin.pubkey())], &[&admin])
        .await
        .unwrap();
    h.warp_by(ADMIN_ACTION_TIMELOCK_SECS).await;
    assert_custom_error(
        h.process(&[shield::apply_admin_change(admin.pubkey())], &[&admin])
            .await,
        ShieldError::NoPendingChange,
    );
    let state: ShieldProgramState = h.account(pda::shield::program_state()).await;
    assert_eq!(state.max_self_hedge_bps, 1_234);
}

#[tokio::test]
async fn oracles_reclaim_vote_rent_once_the_shield_is_settled() {
    let mut h = Harness::start().await;
    let a = h.wallets[0].insecure_clone();
    let id = community(&mut h).await;
    h.back_shield(&a, &id, SAFE, SOL).await.unwrap();
    let period_end = h.coverage(&id).await.period_end;
    h.warp_to(period_end).await;
    h.shield_vote(0, &id, SAFE).await.unwrap();
    let oracle = h.oracles[0].insecure_clone();
    let close = shield::close_shield_vote(oracle.pubkey(), &id);
    assert_custom_error(
        h.process(std::slice::from_ref(&close), &[&oracle]).await,
        ShieldError::CoverageStillActive,
    );
    h.warp_by(RESOLUTION_TIMELOCK_SECS).await;
    h.shield_finalize(&id).await.unwrap();
    let rent = h
        .rent_for(8 + shield_vault::state::ShieldVote::INIT_SPACE)
        .await;
    let before = h.lamports(oracle.pubkey()).await;
    h.process(&[close], &[&oracle]).await.unwrap();
    assert_eq!(h.lamports(oracle.pubkey()).await - before, rent);
}

// Rounding edges of the yield shares, one named test each.

#[tokio::test]
async fn rounding_first_deposit_mints_at_the_virtual_ratio() {
    let mut h = Harness::start().await;
    let a = h.wallets[0].insecure_clone();
    let id = community(&mut h).await;
    h.back_shield(&a, &id, EXPLOIT, MIN_BACKING_LAMPORTS)
        .await
        .unwrap();
    let b = h.shield_backing(&id, &a.pubkey(), EXPLOIT).await;
    assert_eq!(b.shares, MIN_BACKING_LAMPORTS as u128 * VIRTUAL_SHARES);
    h.shield_vote(0, &id, ShieldVerdict::Unresolvable)
        .await
        .unwrap();
    assert_eq!(
        claim_delta(&mut h, Claim::Refund, &a, &id, EXPLOIT).await,
        MIN_BACKING_LAMPORTS
    );
}

#[tokio::test]
async fn rounding_deposit_after_yield_buys_no_share_of_earlier_yield() {
    let mut h = Harness::start().await;
    let [early, late] = [0, 1].map(|i| h.wallets[i].insecure_clone());
    let id = community(&mut h).await;
    h.back_shield(&early, &id, SAFE, SOL).await.unwrap();
    h.send_lamports(pda::shield::vault(&id, SAFE), SOL / 10)
        .await;
    h.harvest(&id, SAFE).await.unwrap();
    h.back_shield(&late, &id, SAFE, SOL).await.unwrap();
    let (e, l) = (
        h.shield_backing(&id, &early.pubkey(), SAFE).await,
        h.shield_backing(&id, &late.pubkey(), SAFE).await,
    );
    assert!(l.shares < e.shares, "the late backer pays the higher price");
    h.shield_vote(0, &id, ShieldVerdict::Unresolvable)
        .await
        .unwrap();
    assert_eq!(
        claim_delta(&mut h, Claim::Refund, &late, &id, SAFE).await,
        SOL
    );
    // The late backer's floored lamport stays on the side, so the early one redeems it all.
    assert_eq!(
        claim_delta(&mut h, Claim::Refund, &early, &id, SAFE).await,
        SOL + SOL / 10
    );
}

#[tokio::test]
async fn rounding_dust_yield_of_one_lamport_is_never_overpaid() {
    let mut h = Harness::start().await;
    let [a, b] = [0, 1].map(|i| h.wallets[i].insecure_clone());
    let id = community(&mut h).await;
    h.back_shield(&a, &id, SAFE, MIN_BACKING_LAMPORTS + 7)
        .await
        .unwrap();
    h.back_shield(&b, &id, SAFE, MIN_BACKING_LAMPORTS + 3)
        .await
        .unwrap();
    h.send_lamports(pda::shield::vault(&id, SAFE), 1).await;
    h.harvest(&id, SAFE).await.unwrap();
    h.shield_vote(0, &id, ShieldVerdict::Unresolvable)
        .await
        .unwrap();
    let paid_a = claim_delta(&mut h, Claim::Refund, &a, &id, SAFE).await;
    let paid_b = claim_delta(&mut h, Claim::Refund, &b, &id, SAFE).await;
    // A single lamport of yield cannot be split: nobody gets more than their principal + 1,
    // and together they get no more than principal + the one lamport.
    assert!(paid_a <= MIN_BACKING_LAMPORTS + 8 && paid_b <= MIN_BACKING_LAMPORTS + 4);
    assert!(paid_a + paid_b <= 2 * MIN_BACKING_LAMPORTS + 10 + 1);
    assert!(
        paid_a >= MIN_BACKING_LAMPORTS + 7 && paid_b >= MIN_BACKING_LAMPORTS + 3,
        "principal is whole"
    );
    let cov = h.coverage(&id).await;
    assert!(cov.safe.yield_paid <= cov.safe.yield_harvested);
}

#[tokio::test]
async fn lamports_sent_to_a_vault_are_yield_of_the_shares_already_there() {
    for donate in [true, false] {
        let mut h = Harness::start().await;
        let [a, b] = [0, 1].map(|i| h.wallets[i].insecure_clone());
        let id = community(&mut h).await;
        h.back_shield(&a, &id, SAFE, SOL).await.unwrap();
        if donate {
            h.send_lamports(pda::shield::vault(&id, SAFE), 50 * SOL)
                .await;
        }
        // The next backing books what arrived first, then buys shares at the new price: it
        // neither captures the 50 SOL nor loses to it.
        h.back_shield(&b, &id, SAFE, SOL).await.unwrap();
        let cov = h.coverage(&id).await;
        let donated = if donate { 50 * SOL } else { 0 };
        assert_eq!(cov.safe.total_assets, 2 * SOL + donated);
        assert_eq!(cov.safe.yield_harvested, donated);
        h.shield_vote(0, &id, ShieldVerdict::Unresolvable)
            .await
            .unwrap();
        assert_eq!(
            claim_delta(&mut h, Claim::Refund, &b, &id, SAFE).await,
            SOL,
            "donate={donate}"
        );
        let paid_a = claim_delta(&mut h, Claim::Refund, &a, &id, SAFE).await;
        // The virtual shares' part (1,000 of ~1e12) and the floors stay in the vault: under 100
        // lamports of 51 SOL.
        assert!(
            (SOL + donated - 100..=SOL + donated).contains(&paid_a),
            "donate={donate}: {paid_a}"
        );
    }
}

/// Recipients the runtime never lets a transaction credit (the treasury and a partnership's
/// wallet set to sysvars, which it keeps read-only) hold up no finalisation and no winner's
/// claim: only their own shares wait, counted as held in the losing vault, each until its wallet
/// can take it.
#[tokio::test]
async fn wallets_that_cannot_be_credited_hold_up_no_finalisation_only_their_shares() {
    let mut h = Harness::start().await;
    let [a, c] = [0, 2].map(|i| h.wallets[i].insecure_clone());
    let admin = h.admin.insecure_clone();
    // A partnership's wallet is fixed at open: this share waits for good, and only it.
    let sysvar_wallet = Pubkey::from_str_const("SysvarRent111111111111111111111111111111111");
    let id = h
        .open_shield(ShieldKind::Partnership, sysvar_wallet, 30, 0, &admin)
        .await
        .unwrap();
    h.back_shield(&a, &id, SAFE, 10 * SOL).await.unwrap();
    h.back_shield(&c, &id, EXPLOIT, 2 * SOL).await.unwrap();
    let sysvar = CLOCK_SYSVAR;
    h.change_shield(AdminChange::Treasury(sysvar))
        .await
        .unwrap();
    resolve_shield(&mut h, &id, EXPLOIT).await;
    h.process(&[shield::finalize_resolution(&id)], &[])
        .await
        .unwrap();
    for (recipient, wallet) in [
        (PayoutRecipient::Treasury, sysvar),
        (PayoutRecipient::Protocol, sysvar_wallet),
    ] {
        let ix = shield::forward_payout(&id, SAFE, recipient, wallet);
        assert_custom_error(
            h.process(&[ix], &[]).await,
            anchor_lang::error::ErrorCode::ConstraintMut,
        );
    }
    // The winner is paid in full; 5 SOL (protocol) + 1.2 SOL (treasury) wait with the seam share.
    assert_eq!(
        claim_delta(&mut h, Claim::ExploitWinner, &c, &id, EXPLOIT).await,
        2 * SOL + 3_500_000_000
    );
    h.forward_seam_share(&id).await.unwrap();
    assert_eq!(h.shield_vault_balance(&id, SAFE).await, 6_200_000_000);
    let cov = h.coverage(&id).await;
    assert_eq!(cov.safe.held, 6_200_000_000);
    assert_custom_error(h.harvest(&id, SAFE).await, ShieldError::NothingToHarvest);

    let treasury = Keypair::new().pubkey();
    h.change_shield(AdminChange::Treasury(treasury))
        .await
        .unwrap();
    let ix = shield::forward_payout(&id, SAFE, PayoutRecipient::Treasury, treasury);
    h.process(&[ix], &[]).await.unwrap();
    assert_eq!(h.lamports(treasury).await, 1_200_000_000);
    assert_eq!(h.shield_vault_balance(&id, SAFE).await, 5 * SOL);
}
