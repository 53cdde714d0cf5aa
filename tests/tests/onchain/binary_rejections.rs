//! binary_vault refusals: each check named in the issue, plus the role and bound checks,
//! asserting the exact error and that nothing moved.

use anchor_lang::error::ErrorCode as Anchor;
use anchor_lang::prelude::Pubkey;
use anchor_lang::{AccountSerialize, Space};
use binary_vault::constants::*;
use binary_vault::error::BinaryError;
use binary_vault::instructions::{ConfigUpdate, CreateMarketArgs};
use binary_vault::state::{DisputeAction, Market, MarketSource, MarketVariant, OracleSet, Side};
use integration_tests::*;
use narrative_sdk::{binary, pda};
use solana_account::Account;
use solana_instruction_error::InstructionError;
use solana_keypair::Keypair;
use solana_signer::Signer;

const HOLD: i64 = DEFAULT_RESOLUTION_TIMELOCK_SECS;

/// A Yield market by wallet 3 with a 1 SOL YES backing by wallet 0, deadline one day out.
async fn open_market(h: &mut Harness) -> [u8; 32] {
    let creator = h.wallets[3].insecure_clone();
    let backer = h.wallets[0].insecure_clone();
    let id = h
        .create_sol_market(&creator, MarketVariant::Yield, DAY)
        .await;
    h.back(&backer, &id, Side::Yes, SOL).await.unwrap();
    id
}

/// Points `ix`'s account at `position` to `replacement`.
fn swap_account(
    mut ix: narrative_sdk::Instruction,
    position: Pubkey,
    replacement: Pubkey,
) -> narrative_sdk::Instruction {
    let meta = ix
        .accounts
        .iter_mut()
        .find(|m| m.pubkey == position)
        .expect("account in instruction");
    meta.pubkey = replacement;
    ix
}

#[tokio::test]
async fn backing_without_the_backers_signature_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    let victim = h.wallets[1].pubkey();
    let mut ix = binary::back_market(victim, &id, Side::Yes, SOL);
    ix.accounts
        .iter_mut()
        .find(|m| m.pubkey == victim)
        .unwrap()
        .is_signer = false;
    let before = h.lamports(victim).await;
    assert_custom_error(h.process(&[ix], &[]).await, Anchor::AccountNotSigner);
    assert_eq!(h.lamports(victim).await, before);
}

#[tokio::test]
async fn admin_instruction_without_the_admins_signature_is_rejected() {
    let mut h = Harness::start().await;
    let mut ix = binary::set_paused(h.admin.pubkey(), true);
    ix.accounts[0].is_signer = false;
    assert_custom_error(h.process(&[ix], &[]).await, Anchor::AccountNotSigner);
    assert!(!h.program_state().await.paused);
}

#[tokio::test]
async fn market_account_owned_by_another_program_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    let fake = h
        .plant_copy(pda::binary::market(&id), crucible_pool::ID)
        .await;
    let w = h.wallets[1].insecure_clone();
    let ix = swap_account(
        binary::back_market(w.pubkey(), &id, Side::Yes, SOL),
        pda::binary::market(&id),
        fake,
    );
    assert_custom_error(
        h.process(&[ix], &[&w]).await,
        Anchor::AccountOwnedByWrongProgram,
    );
}

#[tokio::test]
async fn forged_market_state_owned_by_the_program_is_rejected_by_its_seeds() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    let forged = h
        .plant_copy(pda::binary::market(&id), binary_vault::ID)
        .await;
    let w = h.wallets[1].insecure_clone();
    let ix = swap_account(
        binary::back_market(w.pubkey(), &id, Side::Yes, SOL),
        pda::binary::market(&id),
        forged,
    );
    assert_custom_error(h.process(&[ix], &[&w]).await, Anchor::ConstraintSeeds);
}

#[tokio::test]
async fn backing_into_a_fake_vault_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    let w = h.wallets[1].insecure_clone();
    let thief = Keypair::new().pubkey();
    let ix = swap_account(
        binary::back_market(w.pubkey(), &id, Side::Yes, SOL),
        pda::binary::sol_vault(&id, Side::Yes),
        thief,
    );
    assert_custom_error(h.process(&[ix], &[&w]).await, Anchor::ConstraintSeeds);
    assert_eq!(h.lamports(thief).await, 0);
}

#[tokio::test]
async fn claiming_from_a_fake_vault_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.resolve_and_finalize(&id, Side::Yes).await;
    let w = h.wallets[0].insecure_clone();
    // The other side's vault in place of the backing's own.
    let ix = swap_account(
        binary::claim(w.pubkey(), &id, Side::Yes),
        pda::binary::sol_vault(&id, Side::Yes),
        pda::binary::sol_vault(&id, Side::No),
    );
    let result = h.process(&[ix], &[&w]).await;
    assert!(result.is_err(), "a vault swap must not pay out");
    assert!(!h.backing(&id, &w.pubkey(), Side::Yes).await.claimed);
}

#[tokio::test]
async fn forged_market_listing_an_attacker_as_oracle_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.warp_by(DAY).await;
    let attacker = h.wallets[2].insecure_clone();
    let mut market: Market = h.market(&id).await;
    market.oracle_set = OracleSet::new(&[attacker.pubkey()], 1).unwrap();
    let mut data = Vec::with_capacity(8 + Market::INIT_SPACE);
    market.try_serialize(&mut data).unwrap();
    let forged = Keypair::new().pubkey();
    h.plant_account(
        forged,
        Account {
            lamports: 10_000_000,
            data,
            owner: binary_vault::ID,
            executable: false,
            rent_epoch: 0,
        },
    );
    let ix = swap_account(
        binary::submit_oracle_resolution(attacker.pubkey(), &id, Side::No, 9_000),
        pda::binary::market(&id),
        forged,
    );
    assert_custom_error(
        h.process(&[ix], &[&attacker]).await,
        Anchor::ConstraintSeeds,
    );
    assert_eq!(h.market(&id).await.no_votes, 0);
}

#[tokio::test]
async fn vote_by_a_wallet_that_is_not_an_oracle_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.warp_by(DAY).await;
    let impostor = h.wallets[2].insecure_clone();
    let ix = binary::submit_oracle_resolution(impostor.pubkey(), &id, Side::No, 9_000);
    assert_custom_error(h.process(&[ix], &[&impostor]).await, BinaryError::NotOracle);
}

#[tokio::test]
async fn second_vote_by_the_same_oracle_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.warp_by(DAY).await;
    h.vote(0, &id, Side::Yes, 9_000).await.unwrap();
    // The vote PDA exists, so creating it again is refused.
    assert_instruction_error(
        h.vote(0, &id, Side::No, 9_000).await,
        InstructionError::AccountAlreadyInitialized,
    );
    let m = h.market(&id).await;
    assert_eq!((m.yes_votes, m.no_votes), (1, 0));
}

#[tokio::test]
async fn vote_before_the_deadline_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.warp_by(DAY - 1).await;
    assert_custom_error(
        h.vote(0, &id, Side::Yes, 9_000).await,
        BinaryError::VoteBeforeDeadline,
    );
}

#[tokio::test]
async fn confidence_outside_7000_to_10000_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.warp_by(DAY).await;
    for confidence in [0, 6_999, 10_001] {
        assert_custom_error(
            h.vote(0, &id, Side::Yes, confidence).await,
            BinaryError::ConfidenceOutOfRange,
        );
    }
    h.vote(0, &id, Side::Yes, 7_000).await.unwrap();
    h.vote(1, &id, Side::Yes, 10_000).await.unwrap();
}

#[tokio::test]
async fn vote_after_an_outcome_is_proposed_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.resolve(&id, Side::Yes).await;
    assert_custom_error(
        h.vote(2, &id, Side::No, 9_000).await,
        BinaryError::OutcomeAlreadyProposed,
    );
}

#[tokio::test]
async fn backing_after_the_deadline_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.warp_by(DAY).await;
    let w = h.wallets[1].insecure_clone();
    assert_custom_error(
        h.back(&w, &id, Side::No, SOL).await,
        BinaryError::DeadlinePassed,
    );
}

#[tokio::test]
async fn backing_below_the_minimum_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    let w = h.wallets[1].insecure_clone();
    assert_custom_error(
        h.back(&w, &id, Side::No, MIN_BACKING_LAMPORTS - 1).await,
        BinaryError::BelowMinimum,
    );
    h.back(&w, &id, Side::No, MIN_BACKING_LAMPORTS)
        .await
        .unwrap();
}

#[tokio::test]
async fn backing_and_market_creation_while_paused_are_rejected_but_claims_stay_open() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    let admin = h.admin.insecure_clone();
    h.process(&[binary::set_paused(admin.pubkey(), true)], &[&admin])
        .await
        .unwrap();
    let w = h.wallets[1].insecure_clone();
    assert_custom_error(h.back(&w, &id, Side::No, SOL).await, BinaryError::Paused);
    let ix = binary::create_market(
        w.pubkey(),
        None,
        CreateMarketArgs {
            market_id: h.next_market_id(),
            variant: MarketVariant::Yield,
            source: MarketSource::Seed,
            deadline: START_TIME + DAY,
        },
    );
    assert_custom_error(h.process(&[ix], &[&w]).await, BinaryError::Paused);

    // Money already in can still leave.
    h.resolve_and_finalize(&id, Side::Yes).await;
    let backer = h.wallets[0].insecure_clone();
    h.claim(&backer, &id, Side::Yes).await.unwrap();
}

#[tokio::test]
async fn backing_a_classic_market_that_is_not_approved_is_rejected() {
    let mut h = Harness::start().await;
    let creator = h.wallets[0].insecure_clone();
    let id = h.next_market_id();
    let args = CreateMarketArgs {
        market_id: id,
        variant: MarketVariant::Classic,
        source: MarketSource::Seed,
        deadline: START_TIME + DAY,
    };
    h.process(
        &[binary::create_market(creator.pubkey(), None, args)],
        &[&creator],
    )
    .await
    .unwrap();
    assert_custom_error(
        h.back(&creator, &id, Side::Yes, SOL).await,
        BinaryError::MarketNotApproved,
    );
}

#[tokio::test]
async fn finalize_before_the_hold_ends_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.resolve(&id, Side::Yes).await;
    h.warp_by(HOLD - 1).await;
    assert_custom_error(h.finalize(&id).await, BinaryError::HoldNotElapsed);
    h.warp_by(1).await;
    h.finalize(&id).await.unwrap();
    assert_custom_error(h.finalize(&id).await, BinaryError::AlreadyFinalized);
}

#[tokio::test]
async fn finalize_with_a_dispute_open_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.resolve(&id, Side::Yes).await;
    let disputer = h.wallets[2].insecure_clone();
    h.open_dispute(&disputer, &id).await.unwrap();
    h.warp_by(10 * HOLD).await;
    assert_custom_error(h.finalize(&id).await, BinaryError::DisputeOpen);
}

#[tokio::test]
async fn finalize_without_a_proposed_outcome_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.warp_by(DAY).await;
    h.vote(0, &id, Side::Yes, 9_000).await.unwrap();
    h.warp_by(HOLD).await;
    assert_custom_error(h.finalize(&id).await, BinaryError::NoOutcomeProposed);
}

#[tokio::test]
async fn dispute_after_the_hold_or_before_a_proposal_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    let disputer = h.wallets[2].insecure_clone();
    assert_custom_error(
        h.open_dispute(&disputer, &id).await,
        BinaryError::NoOutcomeProposed,
    );
    h.resolve(&id, Side::Yes).await;
    h.warp_by(HOLD).await;
    assert_custom_error(
        h.open_dispute(&disputer, &id).await,
        BinaryError::DisputeWindowClosed,
    );
}

#[tokio::test]
async fn dispute_rulings_need_the_admin_and_the_disputer_and_a_forfeit_bond_goes_to_the_treasury() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.resolve(&id, Side::Yes).await;
    let disputer = h.wallets[2].insecure_clone();
    h.open_dispute(&disputer, &id).await.unwrap();
    let outsider = h.wallets[1].insecure_clone();

    let ix = binary::resolve_dispute(
        outsider.pubkey(),
        &id,
        disputer.pubkey(),
        DisputeAction::Refund,
    );
    assert_custom_error(h.process(&[ix], &[&outsider]).await, BinaryError::NotAdmin);
    let admin = h.admin.insecure_clone();
    let ix = binary::resolve_dispute(
        admin.pubkey(),
        &id,
        outsider.pubkey(),
        DisputeAction::Overturn,
    );
    assert_custom_error(
        h.process(&[ix], &[&admin]).await,
        BinaryError::WrongDisputer,
    );
    assert_eq!(h.market(&id).await.oracle_status, ORACLE_STATUS_DISPUTED);
    // A second dispute while one is open.
    assert_custom_error(
        h.open_dispute(&outsider, &id).await,
        BinaryError::DisputeOpen,
    );
    // An open dispute's bond is not forfeit.
    assert_custom_error(
        h.forward_dispute_bond(&id).await,
        BinaryError::NoForfeitBond,
    );
    h.settle_dispute(&id, &disputer.pubkey(), DisputeAction::Uphold)
        .await
        .unwrap();
    // Once forfeit, it goes to the configured treasury and nowhere else.
    let bond = h.dispute(&id).await.bond_lamports;
    let ix = binary::forward_dispute_bond(&id, outsider.pubkey());
    assert_custom_error(h.process(&[ix], &[]).await, BinaryError::WrongTreasury);
    assert_eq!(
        h.lamports(pda::binary::dispute(&id)).await,
        h.rent_for(8 + binary_vault::state::Dispute::INIT_SPACE)
            .await
            + bond
    );
}

#[tokio::test]
async fn claim_twice_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.resolve_and_finalize(&id, Side::Yes).await;
    let w = h.wallets[0].insecure_clone();
    h.claim(&w, &id, Side::Yes).await.unwrap();
    let before = h.lamports(w.pubkey()).await;
    assert_custom_error(
        h.claim(&w, &id, Side::Yes).await,
        BinaryError::AlreadyClaimed,
    );
    assert_eq!(h.lamports(w.pubkey()).await, before);
}

#[tokio::test]
async fn claim_of_another_wallets_backing_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.resolve_and_finalize(&id, Side::Yes).await;
    let owner = h.wallets[0].pubkey();
    let thief = h.wallets[1].insecure_clone();
    let ix = swap_account(
        binary::claim(thief.pubkey(), &id, Side::Yes),
        pda::binary::backing(&id, &thief.pubkey(), Side::Yes),
        pda::binary::backing(&id, &owner, Side::Yes),
    );
    assert_custom_error(h.process(&[ix], &[&thief]).await, Anchor::ConstraintSeeds);
    assert!(!h.backing(&id, &owner, Side::Yes).await.claimed);
}

#[tokio::test]
async fn claim_before_resolution_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    let w = h.wallets[0].insecure_clone();
    assert_custom_error(h.claim(&w, &id, Side::Yes).await, BinaryError::NotClaimable);
}

#[tokio::test]
async fn classic_loser_claim_is_rejected() {
    let mut h = Harness::start().await;
    let creator = h.wallets[3].insecure_clone();
    let (winner, loser) = (h.wallets[0].insecure_clone(), h.wallets[1].insecure_clone());
    let id = h
        .create_sol_market(&creator, MarketVariant::Classic, DAY)
        .await;
    h.back(&winner, &id, Side::Yes, SOL).await.unwrap();
    h.back(&loser, &id, Side::No, SOL).await.unwrap();
    h.resolve_and_finalize(&id, Side::Yes).await;
    assert_custom_error(
        h.claim(&loser, &id, Side::No).await,
        BinaryError::ClassicLoserCannotClaim,
    );
    assert!(!h.backing(&id, &loser.pubkey(), Side::No).await.claimed);
}

#[tokio::test]
async fn config_changes_by_others_out_of_bounds_or_early_are_rejected() {
    let mut h = Harness::start().await;
    let outsider = h.wallets[0].insecure_clone();
    for ix in [
        binary::propose_config_change(outsider.pubkey(), ConfigUpdate::default()),
        binary::apply_config_change(outsider.pubkey()),
        binary::cancel_config_change(outsider.pubkey()),
    ] {
        assert_custom_error(h.process(&[ix], &[&outsider]).await, BinaryError::NotAdmin);
    }

    let admin = h.admin.insecure_clone();
    let keys: Vec<Pubkey> = (0..6).map(|_| Keypair::new().pubkey()).collect();
    // Sets the program must refuse however they were built: a threshold above the set, a zero
    // threshold, a duplicate key, a key listed beyond `count`.
    let valid = OracleSet::new(&keys[..2], 1).unwrap();
    let mut threshold_above_count = valid;
    threshold_above_count.threshold = 3;
    let mut zero_threshold = valid;
    zero_threshold.threshold = 0;
    let mut duplicate = valid;
    duplicate.oracles[1] = keys[0];
    let mut beyond_count = valid;
    beyond_count.oracles[2] = keys[2];
    let cases = [
        (
            ConfigUpdate {
                // A hold of more than 30 days would hold winners' payouts past any reason.
                resolution_timelock_secs: Some(MAX_RESOLUTION_TIMELOCK_SECS + 1),
                ..Default::default()
            },
            BinaryError::InvalidDuration,
        ),
        (
            ConfigUpdate {
                // Nor may a market wait more than a year for its oracles before refunding.
                max_resolution_delay_secs: Some(MAX_RESOLUTION_DELAY_SECS + 1),
                ..Default::default()
            },
            BinaryError::InvalidDuration,
        ),
        (
            ConfigUpdate {
                // Losers keep at least half of a Yield market's losing side.
                capital_loss_bps: Some(MAX_CAPITAL_LOSS_BPS + 1),
                ..Default::default()
            },
            BinaryError::InvalidBps,
        ),
        (
            ConfigUpdate {
                crucible_share_bps: Some(10_001),
                ..Default::default()
            },
            BinaryError::InvalidBps,
        ),
        (
            ConfigUpdate {
                // The hold never goes under the specification's 172800 s.
                resolution_timelock_secs: Some(DEFAULT_RESOLUTION_TIMELOCK_SECS - 1),
                ..Default::default()
            },
            BinaryError::InvalidDuration,
        ),
        (
            ConfigUpdate {
                max_resolution_delay_secs: Some(60),
                ..Default::default()
            },
            BinaryError::InvalidDuration,
        ),
        (
            ConfigUpdate {
                dispute_bond_lamports: Some(0),
                ..Default::default()
            },
            BinaryError::InvalidDisputeBond,
        ),
        (
            ConfigUpdate {
                treasury: Some(Pubkey::default()),
                ..Default::default()
            },
            BinaryError::WrongTreasury,
        ),
    ];
    let cases = cases.into_iter().chain(
        [
            threshold_above_count,
            zero_threshold,
            duplicate,
            beyond_count,
        ]
        .map(|set| {
            (
                ConfigUpdate {
                    oracle_set: Some(set),
                    ..Default::default()
                },
                BinaryError::InvalidOracleSet,
            )
        }),
    );
    for (update, error) in cases {
        let ix = binary::propose_config_change(admin.pubkey(), update);
        assert_custom_error(h.process(&[ix], &[&admin]).await, error);
    }
    for (oracles, threshold) in [
        (keys.clone(), 1),
        (keys[..2].to_vec(), 3),
        (keys[..2].to_vec(), 0),
        (vec![keys[0], keys[0]], 1),
        (vec![], 0),
    ] {
        assert!(OracleSet::new(&oracles, threshold).is_err());
    }
    assert!(h.config().await.pending_change.is_none());

    // One change at a time, applied only after the timelock, and cancellable.
    assert_custom_error(
        h.process(&[binary::apply_config_change(admin.pubkey())], &[&admin])
            .await,
        BinaryError::NoPendingChange,
    );
    let update = ConfigUpdate {
        capital_loss_bps: Some(4_000),
        ..Default::default()
    };
    h.process(
        &[binary::propose_config_change(admin.pubkey(), update)],
        &[&admin],
    )
    .await
    .unwrap();
    assert_custom_error(
        h.process(
            &[binary::propose_config_change(admin.pubkey(), update)],
            &[&admin],
        )
        .await,
        BinaryError::ChangePending,
    );
    h.warp_by(ADMIN_ACTION_TIMELOCK_SECS - 1).await;
    assert_custom_error(
        h.process(&[binary::apply_config_change(admin.pubkey())], &[&admin])
            .await,
        BinaryError::AdminTimelockNotElapsed,
    );
    h.process(&[binary::cancel_config_change(admin.pubkey())], &[&admin])
        .await
        .unwrap();
    h.warp_by(1).await;
    assert_custom_error(
        h.process(&[binary::apply_config_change(admin.pubkey())], &[&admin])
            .await,
        BinaryError::NoPendingChange,
    );
    assert_eq!(h.config().await.capital_loss_bps, 3_500);
}

#[tokio::test]
async fn a_new_oracle_set_cannot_decide_a_market_created_before_it() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    // The admin names itself sole oracle; the change waits out the timelock.
    let admin = h.admin.insecure_clone();
    h.change_config(ConfigUpdate {
        oracle_set: Some(OracleSet::new(&[admin.pubkey()], 1).unwrap()),
        ..Default::default()
    })
    .await
    .unwrap();
    assert_eq!(h.config().await.listed_oracles(), &[admin.pubkey()]);
    // Past the deadline, the new set cannot vote on the older market...
    let ix = binary::submit_oracle_resolution(admin.pubkey(), &id, Side::No, 9_000);
    assert_custom_error(h.process(&[ix], &[&admin]).await, BinaryError::NotOracle);
    // ...which its own set still decides, against its own threshold (2).
    h.vote(0, &id, Side::Yes, 9_000).await.unwrap();
    assert_eq!(h.market(&id).await.outcome, None);
    h.vote(1, &id, Side::Yes, 9_000).await.unwrap();
    assert_eq!(h.market(&id).await.outcome, Some(Side::Yes));
    // A market created now is the new set's.
    let creator = h.wallets[3].insecure_clone();
    let later = h
        .create_sol_market(&creator, MarketVariant::Yield, DAY)
        .await;
    assert_eq!(
        h.market(&later).await.oracle_set.listed(),
        &[admin.pubkey()]
    );
}

#[tokio::test]
async fn the_admin_role_moves_only_when_the_successor_accepts() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let [successor, outsider] = [2, 3].map(|i| h.wallets[i].insecure_clone());
    assert_custom_error(
        h.process(
            &[binary::propose_admin(
                outsider.pubkey(),
                Some(outsider.pubkey()),
            )],
            &[&outsider],
        )
        .await,
        BinaryError::NotAdmin,
    );
    assert_custom_error(
        h.process(
            &[binary::propose_admin(
                admin.pubkey(),
                Some(Pubkey::default()),
            )],
            &[&admin],
        )
        .await,
        BinaryError::ZeroKey,
    );
    h.process(
        &[binary::propose_admin(
            admin.pubkey(),
            Some(successor.pubkey()),
        )],
        &[&admin],
    )
    .await
    .unwrap();
    assert_eq!(h.program_state().await.admin, admin.pubkey());
    assert_custom_error(
        h.process(&[binary::accept_admin(outsider.pubkey())], &[&outsider])
            .await,
        BinaryError::NotPendingAdmin,
    );
    h.process(&[binary::accept_admin(successor.pubkey())], &[&successor])
        .await
        .unwrap();
    let state = h.program_state().await;
    assert_eq!(
        (state.admin, state.pending_admin),
        (successor.pubkey(), None)
    );
    assert_custom_error(
        h.process(&[binary::set_paused(admin.pubkey(), true)], &[&admin])
            .await,
        BinaryError::NotAdmin,
    );
    h.process(
        &[binary::set_paused(successor.pubkey(), true)],
        &[&successor],
    )
    .await
    .unwrap();
    // Nothing pending: a second acceptance is refused.
    assert_custom_error(
        h.process(&[binary::accept_admin(successor.pubkey())], &[&successor])
            .await,
        BinaryError::NotPendingAdmin,
    );
}

#[tokio::test]
async fn market_with_a_past_deadline_or_an_admin_only_source_is_rejected() {
    let mut h = Harness::start().await;
    let w = h.wallets[0].insecure_clone();
    for (deadline, source, error) in [
        (START_TIME, MarketSource::Seed, BinaryError::InvalidDeadline),
        (
            START_TIME + MAX_MARKET_DURATION_SECS + 1,
            MarketSource::Seed,
            BinaryError::InvalidDeadline,
        ),
        (
            START_TIME + DAY,
            MarketSource::Bot,
            BinaryError::SourceNeedsAdmin,
        ),
        (
            START_TIME + DAY,
            MarketSource::Admin,
            BinaryError::SourceNeedsAdmin,
        ),
    ] {
        let args = CreateMarketArgs {
            market_id: h.next_market_id(),
            variant: MarketVariant::Yield,
            source,
            deadline,
        };
        assert_custom_error(
            h.process(&[binary::create_market(w.pubkey(), None, args)], &[&w])
                .await,
            error,
        );
    }
}

#[tokio::test]
async fn a_co_signer_who_is_not_the_admin_is_rejected() {
    let mut h = Harness::start().await;
    let (w, impostor) = (h.wallets[0].insecure_clone(), h.wallets[1].insecure_clone());
    let args = CreateMarketArgs {
        market_id: h.next_market_id(),
        variant: MarketVariant::Classic,
        source: MarketSource::Seed,
        deadline: START_TIME + DAY,
    };
    let ix = binary::create_market(w.pubkey(), Some(impostor.pubkey()), args);
    assert_custom_error(
        h.process(&[ix], &[&w, &impostor]).await,
        BinaryError::NotAdmin,
    );
}

#[tokio::test]
async fn timeout_refund_of_a_market_with_a_proposal_is_rejected() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.resolve(&id, Side::Yes).await;
    h.warp_by(MAX_RESOLUTION_DELAY).await;
    let ix = binary::trigger_timeout_refund(&id);
    assert_custom_error(
        h.process(&[ix], &[]).await,
        BinaryError::OutcomeAlreadyProposed,
    );
}

#[tokio::test]
async fn initialize_by_anyone_but_the_upgrade_authority_is_rejected() {
    let upgrade_authority = Keypair::new();
    let impostor = Keypair::new();
    let mut bank = Uninitialised::start(&upgrade_authority.pubkey(), &[&impostor]).await;
    let ix = binary::initialize(
        impostor.pubkey(),
        binary_vault::instructions::InitializeArgs {
            treasury: impostor.pubkey(),
            oracles: vec![impostor.pubkey()],
            oracle_threshold: 1,
            dispute_bond_lamports: SOL,
            max_resolution_delay_secs: MAX_RESOLUTION_DELAY,
        },
    );
    assert_custom_error(
        bank.process(ix, &impostor).await,
        BinaryError::NotUpgradeAuthority,
    );
    assert!(!bank.exists(pda::binary::program_state()).await);
}

/// One lamport sent to an address before its account exists (anyone can do it, and every
/// address here is predictable) must not block the account's creation.
#[tokio::test]
async fn donations_to_predictable_addresses_do_not_block_their_creation() {
    let mut h = Harness::start().await;
    let creator = h.wallets[3].insecure_clone();
    let backer = h.wallets[0].insecure_clone();
    let disputer = h.wallets[2].insecure_clone();
    let id = h.next_market_id();
    let donated = [
        pda::binary::market(&id),
        pda::binary::sol_vault(&id, Side::Yes),
        pda::binary::backing(&id, &backer.pubkey(), Side::Yes),
        pda::binary::oracle_vote(&id, &h.oracles[0].pubkey()),
        pda::binary::oracle_vote(&id, &h.oracles[1].pubkey()),
        pda::binary::dispute(&id),
    ];
    for address in donated {
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
    let args = CreateMarketArgs {
        market_id: id,
        variant: MarketVariant::Yield,
        source: MarketSource::Seed,
        deadline: START_TIME + DAY,
    };
    h.process(
        &[binary::create_market(creator.pubkey(), None, args)],
        &[&creator],
    )
    .await
    .unwrap();
    h.back(&backer, &id, Side::Yes, SOL).await.unwrap();
    h.resolve(&id, Side::Yes).await;
    h.open_dispute(&disputer, &id).await.unwrap();
    h.settle_dispute(&id, &disputer.pubkey(), DisputeAction::Uphold)
        .await
        .unwrap();
    h.warp_by(HOLD).await;
    h.finalize(&id).await.unwrap();
    let before = h.lamports(backer.pubkey()).await;
    h.claim(&backer, &id, Side::Yes).await.unwrap();
    assert_eq!(h.lamports(backer.pubkey()).await - before, SOL);
    // The donated lamport stays in the vault as dust, never paid to anyone.
    assert_eq!(h.vault_balance(&id, Side::Yes).await, 0);
    let market_rent = h
        .rent_for(8 + binary_vault::state::Market::INIT_SPACE)
        .await;
    assert_eq!(h.lamports(pda::binary::market(&id)).await, market_rent);
}

/// Finding (low): the admin could open a dispute and rule on it at once, deciding a market in
/// one transaction. The admin and the market's oracles may not dispute it.
#[tokio::test]
async fn the_admin_and_the_markets_oracles_cannot_dispute_its_outcome() {
    let mut h = Harness::start().await;
    let id = open_market(&mut h).await;
    h.resolve(&id, Side::Yes).await;
    let admin = h.admin.insecure_clone();
    let oracles: Vec<Keypair> = h.oracles.iter().map(|o| o.insecure_clone()).collect();
    for decider in std::iter::once(&admin).chain(&oracles) {
        assert_custom_error(
            h.open_dispute(decider, &id).await,
            BinaryError::DisputerNotAllowed,
        );
    }
    assert_eq!(h.market(&id).await.oracle_status, ORACLE_STATUS_OPEN);
    let stranger = h.wallets[2].insecure_clone();
    h.open_dispute(&stranger, &id).await.unwrap();
}

/// Finding (low): a ruling that changes the outcome (overturn, refund) waits a day after the
/// dispute opened; a ruling for the standing outcome may be immediate.
#[tokio::test]
async fn a_ruling_against_the_standing_outcome_waits_a_day_and_upholding_it_does_not() {
    let mut h = Harness::start().await;
    let overturned = open_market(&mut h).await;
    let upheld = open_market(&mut h).await;
    let disputer = h.wallets[2].insecure_clone();
    for id in [&overturned, &upheld] {
        h.resolve(id, Side::Yes).await;
        h.open_dispute(&disputer, id).await.unwrap();
    }
    h.settle_dispute(&upheld, &disputer.pubkey(), DisputeAction::Uphold)
        .await
        .unwrap();
    let opened_at = h.dispute(&overturned).await.opened_at;
    h.warp_to(opened_at + MIN_DISPUTE_RULING_DELAY_SECS - 1)
        .await;
    for ruling in [DisputeAction::Overturn, DisputeAction::Refund] {
        assert_custom_error(
            h.settle_dispute(&overturned, &disputer.pubkey(), ruling)
                .await,
            BinaryError::RulingTooEarly,
        );
    }
    assert_eq!(h.market(&overturned).await.outcome, Some(Side::Yes));
    h.warp_by(1).await;
    h.settle_dispute(&overturned, &disputer.pubkey(), DisputeAction::Overturn)
        .await
        .unwrap();
    assert_eq!(h.market(&overturned).await.outcome, Some(Side::No));
}

/// Finding (low): the dispute bond was unbounded and read live from the config. It is bounded
/// by the rent-exempt minimum and 100 SOL, and each market keeps the bond of its creation.
#[tokio::test]
async fn a_dispute_bond_is_bounded_and_fixed_in_the_market_at_creation() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let before = open_market(&mut h).await;
    let min_bond = h.rent_for(0).await;
    for bond in [0, min_bond - 1, MAX_DISPUTE_BOND_LAMPORTS + 1] {
        let update = ConfigUpdate {
            dispute_bond_lamports: Some(bond),
            ..Default::default()
        };
        assert_custom_error(
            h.process(
                &[binary::propose_config_change(admin.pubkey(), update)],
                &[&admin],
            )
            .await,
            BinaryError::InvalidDisputeBond,
        );
    }
    h.change_config(ConfigUpdate {
        dispute_bond_lamports: Some(MAX_DISPUTE_BOND_LAMPORTS),
        ..Default::default()
    })
    .await
    .unwrap();
    let after = open_market(&mut h).await;
    assert_eq!(h.market(&before).await.dispute_bond_lamports, DISPUTE_BOND);
    assert_eq!(
        h.market(&after).await.dispute_bond_lamports,
        MAX_DISPUTE_BOND_LAMPORTS
    );
    // The market created before the change still takes disputes at its own bond.
    h.resolve(&before, Side::Yes).await;
    let disputer = h.wallets[2].insecure_clone();
    h.open_dispute(&disputer, &before).await.unwrap();
    assert_eq!(h.dispute(&before).await.bond_lamports, DISPUTE_BOND);
}

/// Finding (low): a pending config change never expired. Past its apply window it must be
/// proposed again, and it no longer blocks a new proposal.
#[tokio::test]
async fn a_pending_config_change_past_its_apply_window_must_be_proposed_again() {
    let mut h = Harness::start().await;
    let admin = h.admin.insecure_clone();
    let propose = |bps| {
        binary::propose_config_change(
            admin.pubkey(),
            ConfigUpdate {
                capital_loss_bps: Some(bps),
                ..Default::default()
            },
        )
    };
    h.process(&[propose(4_000)], &[&admin]).await.unwrap();
    h.warp_by(ADMIN_ACTION_TIMELOCK_SECS + vault_common::APPLY_WINDOW_SECS)
        .await;
    let apply = binary::apply_config_change(admin.pubkey());
    assert_custom_error(
        h.process(std::slice::from_ref(&apply), &[&admin]).await,
        BinaryError::ChangeExpired,
    );
    assert_eq!(h.config().await.capital_loss_bps, 3_500);
    h.process(&[propose(4_500)], &[&admin]).await.unwrap();
    h.warp_by(ADMIN_ACTION_TIMELOCK_SECS + vault_common::APPLY_WINDOW_SECS - 1)
        .await;
    h.process(&[apply], &[&admin]).await.unwrap();
    assert_eq!(h.config().await.capital_loss_bps, 4_500);
}
