//! The Echo Pool end to end on a program-test bank: forfeits of two Yield markets reach
//! crucible_pool's open epoch; the keeper (the api's perpetual job, with crucible_pool's keeper
//! key) closes the epoch with the distribution it computed from the index; two wallets claim
//! exactly what the preview showed them; a third wallet's claim is refused by the api and its
//! forged proof by the program; and once the claim window has passed the keeper rolls what was
//! left unclaimed into the next epoch. The ledger's clock and the server's move together.

mod common;

use std::sync::Arc;

use anchor_lang::Space;
use common::bank::{BankLedger, TappedLedger};
use common::chain::{self, run_indexed};
use common::{eventually, eventually_some, TestServer};
use integration_tests::harness::{HarnessOptions, CLAIM_WINDOW, DAY, SOL};
use narrative_api::clock::{Clock, ManualClock};
use narrative_api::domain::echo::keeper::{Keeper, RECHECK_SECS};
use narrative_api::jobs::echo_keeper::EchoKeeper;
use narrative_api::jobs::{Handler, JobOutcome, Leased};
use narrative_sdk::binary_vault::state::Side;
use narrative_sdk::crucible_pool::state::{ClaimReceipt, EpochStatus};
use narrative_sdk::crucible_pool::SOL_MINT;
use narrative_sdk::{pda, Pubkey};
use narrative_store::entities::{echo_allocations, echo_distributions, notifications};
use reqwest::StatusCode;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::{json, Value};
use solana_keypair::Keypair;
use solana_signer::Signer;

const HOLD: i64 = 2 * DAY;
/// crucible_pool's delay before a posted root pays.
const CHALLENGE_DELAY: i64 = 2 * DAY;

/// Moves the bank's clock and the server's by `secs`.
async fn advance(ledger: &BankLedger, clock: &ManualClock, secs: i64) {
    ledger.harness.lock().await.warp_by(secs).await;
    clock.advance(secs);
}

/// A Yield SOL market by `creator`, backed by `backings`, resolved YES by the one oracle and
/// finalised with its crucible share forwarded, every transaction indexed.
async fn forfeit_market(
    server: &TestServer,
    ledger: &BankLedger,
    clock: &ManualClock,
    creator: &Keypair,
    backings: &[(&Keypair, Side, u64)],
) -> [u8; 32] {
    let (market_id, oracle) = {
        let mut h = ledger.harness.lock().await;
        (h.next_market_id(), h.oracles[0].insecure_clone())
    };
    chain::create_yield_market(server, ledger, creator, market_id, DAY).await;
    for (wallet, side, amount) in backings {
        let back = narrative_sdk::binary::back_market(wallet.pubkey(), &market_id, *side, *amount);
        run_indexed(server, ledger, &[back], &[wallet]).await;
    }
    advance(ledger, clock, DAY + 60).await;
    let vote = narrative_sdk::binary::submit_oracle_resolution(
        oracle.pubkey(),
        &market_id,
        Side::Yes,
        9_000,
    );
    run_indexed(server, ledger, &[vote], &[&oracle]).await;
    advance(ledger, clock, HOLD + 60).await;
    let finalize = narrative_sdk::binary::finalize_resolution(&market_id);
    run_indexed(server, ledger, &[finalize], &[]).await;
    let target = ledger.harness.lock().await.crucible_target(SOL_MINT).await;
    let forward = narrative_sdk::binary::forward_crucible_share(&market_id, &target);
    run_indexed(server, ledger, &[forward], &[]).await;
    market_id
}

async fn lamports(ledger: &BankLedger, wallet: &Keypair) -> u64 {
    ledger.harness.lock().await.lamports(wallet.pubkey()).await
}

/// The keeper's record of epoch `number`, once it has that status.
async fn distribution(server: &TestServer, number: i64, status: &str) -> echo_distributions::Model {
    let db = server.db.store.db();
    eventually_some(
        &format!("epoch {number} {status} in the keeper's record"),
        || async {
            echo_distributions::Entity::find()
                .filter(echo_distributions::Column::EpochNumber.eq(number))
                .one(db)
                .await
                .unwrap()
                .filter(|d| d.status == status)
        },
    )
    .await
}

async fn notifications_of(server: &TestServer, wallet: &Keypair) -> Vec<Value> {
    let (status, feed) = server
        .get(&format!("/v1/notifications/{}", wallet.pubkey()))
        .await;
    assert_eq!(status, StatusCode::OK, "{feed}");
    feed["notifications"].as_array().unwrap().clone()
}

fn kinds(feed: &[Value]) -> Vec<&str> {
    feed.iter().map(|n| n["type"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn forfeits_close_into_an_epoch_two_wallets_claim_their_preview_and_the_rest_rolls_over() {
    let clock = ManualClock::at_system_time();
    let options = HarnessOptions {
        threshold: 1,
        ..Default::default()
    };
    let (server, ledger) = chain::start_on_bank_at(clock.clone(), options, |h, c| {
        c.keeper_keypair = Some(h.keeper.to_base58_string().into());
    })
    .await;
    let (a, b, c, creator) = {
        let h = ledger.harness.lock().await;
        (
            h.wallets[0].insecure_clone(),
            h.wallets[1].insecure_clone(),
            h.wallets[2].insecure_clone(),
            h.wallets[3].insecure_clone(),
        )
    };

    // Epoch 0 opened when crucible_pool was initialised, long before the bank moved to today:
    // the keeper closes it at once, empty, and epoch 1 opens now.
    let first = distribution(&server, 0, "closed").await;
    assert_eq!(
        (first.available, first.conviction_pool, first.creator_pool),
        (0, 0, 0)
    );
    eventually("epoch 1 open in the index", || async {
        server.get("/v1/conviction/epoch/current").await.1["epoch_number"] == 1
    })
    .await;

    // Two Yield markets resolve YES: a backed YES 2 SOL against c's 1 SOL NO, b backed YES
    // 1 SOL against c's 2 SOL NO. Each forfeits 35 % of its NO side; half of it is forwarded.
    let m1 = forfeit_market(
        &server,
        &ledger,
        &clock,
        &creator,
        &[(&a, Side::Yes, 2 * SOL), (&c, Side::No, SOL)],
    )
    .await;
    let m2 = forfeit_market(
        &server,
        &ledger,
        &clock,
        &creator,
        &[(&b, Side::Yes, SOL), (&c, Side::No, 2 * SOL)],
    )
    .await;
    // Results count in an epoch once they are a minute old (the indexer's margin).
    advance(&ledger, &clock, 120).await;
    let received = {
        let mut h = ledger.harness.lock().await;
        let (f1, f2) = (
            h.market(&m1).await.crucible_amount,
            h.market(&m2).await.crucible_amount,
        );
        assert_eq!((f1, f2), (175_000_000, 350_000_000));
        let epoch = h.epoch(&SOL_MINT, 1).await;
        assert_eq!(epoch.deposited, f1 + f2);
        epoch.deposited
    };

    // The open epoch and each wallet's preview: the creator (5 %, an unranked creator) gets
    // its share of both forfeits; the winners the rest by amount × multiplier (both 1.05: one
    // correct backing each), so a gets twice b's; c won nothing.
    let builds = || async {
        common::sample(
            &server.get_text("/metrics").await,
            "echo_projection_builds_total",
        )
        .expect("the projection's metric")
    };
    let built_before = builds().await;
    let (status, current) = server.get("/v1/conviction/epoch/current").await;
    assert_eq!(status, StatusCode::OK, "{current}");
    assert_eq!(current["total_accumulated_sol"], 0.525);
    assert_eq!(
        current["pools"],
        json!({"conviction": 0.49875, "creator": 0.02625})
    );
    assert_eq!(current["participants"], 3);
    assert_eq!(current["days_remaining"], 1, "{current}");
    let preview = |wallet: Pubkey| {
        let server = &server;
        async move {
            let (status, body) = server
                .get(&format!("/v1/conviction/echo-pool/preview/{wallet}"))
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            body
        }
    };
    let (pa, pb, pc, pd) = (
        preview(a.pubkey()).await,
        preview(b.pubkey()).await,
        preview(c.pubkey()).await,
        preview(creator.pubkey()).await,
    );
    assert_eq!(pa["estimated_lamports"], 332_500_000, "{pa}");
    assert_eq!(pb["estimated_lamports"], 166_250_000, "{pb}");
    assert_eq!(pc["estimated_lamports"], 0, "{pc}");
    assert_eq!(pd["creator_lamports"], 26_250_000, "{pd}");
    assert_eq!(pd["conviction_lamports"], 0);
    assert_eq!(pa["eligible_backings"][0]["multiplier"], 1.05);
    assert_eq!(pd["creator_forfeits"].as_array().unwrap().len(), 2);
    // Five reads of the epoch at one moment share its projection (a write landing between
    // them may add a build; five builds would mean none was shared).
    let built = builds().await - built_before;
    assert!((1.0..5.0).contains(&built), "{built} builds for five reads");
    let (_, projection) = server
        .get(&format!("/v1/conviction/epoch/preview/{}", a.pubkey()))
        .await;
    assert_eq!(projection["projected_sol"], 0.3325, "{projection}");
    assert_eq!(projection["share_pct"], 63.33);
    let estimated = |p: &Value| p["estimated_lamports"].as_u64().unwrap();
    assert_eq!(
        estimated(&pa) + estimated(&pb) + estimated(&pd),
        received,
        "everything the epoch holds is distributed (no rounding left here)"
    );

    // The epoch ends: the keeper closes it with the root of the same distribution.
    advance(&ledger, &clock, 7 * DAY).await;
    let closed = distribution(&server, 1, "closed").await;
    assert_eq!(closed.conviction_pool, 498_750_000);
    assert_eq!(closed.creator_pool, 26_250_000);
    {
        let mut h = ledger.harness.lock().await;
        let epoch = h.epoch(&SOL_MINT, 1).await;
        assert_eq!(epoch.status, EpochStatus::Closed);
        assert_eq!(hex::encode(epoch.merkle_root), closed.merkle_root);
        assert_eq!(
            (epoch.conviction_pool, epoch.creator_pool),
            (498_750_000, 26_250_000)
        );
        assert_eq!(h.asset_pool(&SOL_MINT).await.current_epoch, 2);
    }
    let (_, history) = server.get("/v1/conviction/epoch/history").await;
    assert_eq!(history["epochs"][0]["epoch_number"], 1, "{history}");
    assert_eq!(history["epochs"][0]["status"], "closed");
    assert_eq!(history["epochs"][0]["pools"]["creator"], 0.02625);
    assert_eq!(history["epochs"][1]["epoch_number"], 0);

    // Claims open after the root's 48 h challenge delay.
    let claim = |wallet: &Keypair| {
        let body = json!({"wallet": wallet.pubkey().to_string(), "epoch_number": 1});
        let server = &server;
        async move { server.post("/v1/conviction/echo-pool/claim", &body).await }
    };
    let (status, early) = claim(&a).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{early}");
    assert_eq!(early["error"], "claim_not_open");
    let (_, mine) = server
        .get(&format!("/v1/conviction/echo-pool/history/{}", a.pubkey()))
        .await;
    assert_eq!(mine["epochs"][0]["status"], "pending", "{mine}");
    assert_eq!(mine["epochs"][0]["amount_sol"], 0.3325);
    advance(&ledger, &clock, CHALLENGE_DELAY + 60).await;

    let receipt_rent = ledger
        .harness
        .lock()
        .await
        .rent_for(8 + ClaimReceipt::INIT_SPACE)
        .await;
    for (wallet, previewed) in [(&a, &pa), (&b, &pb)] {
        let before = lamports(&ledger, wallet).await;
        let (status, prepared) = claim(wallet).await;
        assert_eq!(status, StatusCode::OK, "{prepared}");
        assert_eq!(prepared["amount_lamports"], previewed["estimated_lamports"]);
        let (status, confirmed) = chain::sign_send_confirm(
            &server,
            &ledger,
            &prepared,
            wallet,
            "/v1/conviction/echo-pool/claim/confirm",
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{confirmed}");
        // The indexer sees the claim's `EpochClaimed`.
        chain::index_landed(&server, &ledger, confirmed["signature"].as_str().unwrap()).await;
        let amount = estimated(previewed);
        // The wallet paid the fee (one signature) and the receipt's rent.
        assert_eq!(
            lamports(&ledger, wallet).await,
            before + amount - 5_000 - receipt_rent,
            "{} received exactly its preview",
            wallet.pubkey()
        );
        let mut h = ledger.harness.lock().await;
        let epoch = pda::crucible::epoch(&SOL_MINT, 1);
        let receipt: ClaimReceipt = h
            .account(pda::crucible::claim_receipt(&epoch, &wallet.pubkey()))
            .await;
        assert_eq!(receipt.amount, amount);
    }
    // Claimed once: a second claim is refused, and the history says claimed (the confirm
    // refreshed the receipt into the store).
    let (status, again) = claim(&a).await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    assert_eq!(again["error"], "already_claimed");
    let (_, mine) = server
        .get(&format!("/v1/conviction/echo-pool/history/{}", a.pubkey()))
        .await;
    assert_eq!(mine["epochs"][0]["status"], "claimed", "{mine}");
    assert_eq!(mine["total_claimed_sol"], 0.3325);

    // A third wallet has nothing to claim: the api says so, and the program refuses a claim
    // made with another wallet's amount and proof.
    let (status, refused) = claim(&c).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{refused}");
    assert_eq!(refused["error"], "nothing_to_claim");
    {
        let epoch = pda::crucible::epoch(&SOL_MINT, 1).to_string();
        let allocation = echo_allocations::Entity::find_by_id((epoch, b.pubkey().to_string()))
            .one(server.db.store.db())
            .await
            .unwrap()
            .expect("b's allocation");
        let stolen: Vec<String> = serde_json::from_value(allocation.proof).unwrap();
        let proof: Vec<[u8; 32]> = stolen
            .iter()
            .map(|h| hex::decode(h).unwrap().try_into().unwrap())
            .collect();
        let forged = narrative_sdk::crucible::claim_sol(c.pubkey(), 1, 166_250_000, proof);
        let mut h = ledger.harness.lock().await;
        assert!(
            h.process(&[forged], &[&c]).await.is_err(),
            "the program refuses another wallet's proof"
        );
    }

    // The follower tells each claimant of its claim (the airdrop of its share).
    advance(&ledger, &clock, 2).await;
    let airdrop = eventually_some("a's airdrop_claimed", || async {
        notifications_of(&server, &a)
            .await
            .into_iter()
            .find(|n| n["type"] == "airdrop_claimed")
    })
    .await;
    assert_eq!(airdrop["data"]["amount_lamports"], 332_500_000);
    assert_eq!(airdrop["data"]["epoch_number"], 1);

    // The keeper told every wallet with a share; the creator also of its royalty; the
    // ruffler drew round 1 between the two conviction shares.
    assert!(kinds(&notifications_of(&server, &a).await).contains(&"echo_pool_epoch_ended"));
    let creator_feed = notifications_of(&server, &creator).await;
    assert!(
        kinds(&creator_feed).contains(&"creator_royalty_paid"),
        "{creator_feed:?}"
    );
    let royalty = creator_feed
        .iter()
        .find(|n| n["type"] == "creator_royalty_paid")
        .unwrap();
    assert_eq!(royalty["data"]["amount_lamports"], 26_250_000);
    let ruffler = &history["epochs"][0]["ruffler"];
    assert_eq!(ruffler["tickets"], 2, "{history}");
    let winner = ruffler["winner"].as_str().unwrap().to_owned();
    assert!(winner == a.pubkey().to_string() || winner == b.pubkey().to_string());
    let (_, points) = server.get(&format!("/v1/points/{winner}")).await;
    assert_eq!(points["by_reason"]["ruffler"], 250, "{points}");
    for wallet in [&a, &b] {
        let feed = notifications_of(&server, wallet).await;
        assert!(kinds(&feed).contains(&"ruffler_round_drawn"), "{feed:?}");
        let won = kinds(&feed).contains(&"ruffler_ticket_won");
        assert_eq!(won, wallet.pubkey().to_string() == winner);
    }

    // The claim window passes with the creator's share unclaimed: the keeper rolls it into the
    // open epoch (and, that epoch being due too, closes it with nothing to distribute).
    advance(&ledger, &clock, CLAIM_WINDOW + 60).await;
    distribution(&server, 1, "rolled_over").await;
    let mut h = ledger.harness.lock().await;
    let expired = h.epoch(&SOL_MINT, 1).await;
    assert_eq!(expired.status, EpochStatus::RolledOver);
    assert_eq!(expired.claimed, 332_500_000 + 166_250_000);
    assert_eq!(
        expired.rolled_out, 26_250_000,
        "the creator's unclaimed share"
    );
    let next = h.epoch(&SOL_MINT, 2).await;
    assert_eq!(next.rolled_in, 26_250_000);
    drop(h);
    server.stop().await;
}

/// A bank with one forfeited market whose epoch 0 is due, the keeper the test runs itself over
/// a ledger that loses its first `send` answer, and that first run done: the close landed on
/// chain but the store still holds it as `computed`.
struct LostClose {
    server: TestServer,
    ledger: Arc<BankLedger>,
    clock: Arc<ManualClock>,
    keeper: Keeper,
    /// The keeper's ledger: what it sent.
    tapped: Arc<TappedLedger>,
    stored: echo_distributions::Model,
}

impl LostClose {
    async fn new() -> LostClose {
        let clock = ManualClock::at_system_time();
        let options = HarnessOptions {
            threshold: 1,
            ..Default::default()
        };
        // No keeper key in the server: the test runs the keeper itself.
        let (server, ledger) = chain::start_on_bank_at(clock.clone(), options, |_, _| {}).await;
        let (a, c, creator, keeper) = {
            let h = ledger.harness.lock().await;
            (
                h.wallets[0].insecure_clone(),
                h.wallets[2].insecure_clone(),
                h.wallets[3].insecure_clone(),
                h.keeper.insecure_clone(),
            )
        };
        forfeit_market(
            &server,
            &ledger,
            &clock,
            &creator,
            &[(&a, Side::Yes, SOL), (&c, Side::No, SOL)],
        )
        .await;
        advance(&ledger, &clock, 120).await;
        let tapped = TappedLedger::losing_first_answer(ledger.clone());
        let keeper = Keeper {
            store: server.db.store.clone(),
            ledger: tapped.clone(),
            keeper: Some(Arc::new(keeper)),
            clock: clock.clone(),
        };
        // Epoch 0 (open since the bank's start) is due: the close lands, its answer is lost.
        let error = run_keeper(&keeper).await.unwrap_err();
        assert!(
            format!("{error:#}").contains("connection reset"),
            "{error:#}"
        );
        let stored = echo_distributions::Entity::find()
            .one(server.db.store.db())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.status, "computed");
        {
            let mut h = ledger.harness.lock().await;
            let epoch = h.epoch(&SOL_MINT, 0).await;
            assert_eq!(epoch.status, EpochStatus::Closed, "the close landed");
            assert_eq!(hex::encode(epoch.merkle_root), stored.merkle_root);
        }
        LostClose {
            server,
            ledger,
            clock,
            keeper,
            tapped,
            stored,
        }
    }

    async fn run(&self) -> anyhow::Result<JobOutcome> {
        run_keeper(&self.keeper).await
    }

    /// The row of epoch 0 now.
    async fn booked(&self) -> echo_distributions::Model {
        echo_distributions::Entity::find_by_id(self.stored.epoch_address.clone())
            .one(self.server.db.store.db())
            .await
            .unwrap()
            .unwrap()
    }

    /// `echo_pool_epoch_ended` notifications written.
    async fn told(&self) -> u64 {
        notifications::Entity::find()
            .filter(notifications::Column::Kind.eq("echo_pool_epoch_ended"))
            .count(self.server.db.store.db())
            .await
            .unwrap()
    }
}

/// One run of the keeper's job.
async fn run_keeper(keeper: &Keeper) -> anyhow::Result<JobOutcome> {
    keeper
        .run(Leased {
            id: 1,
            attempt: 1,
            job: EchoKeeper::default(),
        })
        .await
}

/// The keeper's close of an epoch whose answer was lost is booked by the next run from the
/// chain, with the same root and without a second transaction; the notifications and the draw
/// happen once however often the keeper runs.
#[tokio::test]
async fn a_close_whose_answer_was_lost_is_booked_once_and_never_sent_again() {
    let lost = LostClose::new().await;
    // The next run books it from the chain and sends nothing: epoch 1 is not due for a week,
    // yet the keeper looks again within RECHECK_SECS.
    assert_eq!(lost.tapped.sent(), 1, "the lost close");
    let outcome = lost.run().await.unwrap();
    assert!(
        matches!(outcome, JobOutcome::Later(at) if at == lost.clock.now() + RECHECK_SECS),
        "{outcome:?}"
    );
    assert_eq!(lost.tapped.sent(), 1, "nothing sent again");
    let booked = lost.booked().await;
    assert_eq!(booked.status, "closed");
    assert_eq!(booked.merkle_root, lost.stored.merkle_root);
    assert!(booked.claimable_at.is_some());
    {
        let mut h = lost.ledger.harness.lock().await;
        assert_eq!(h.asset_pool(&SOL_MINT).await.current_epoch, 1);
        assert_eq!(h.epoch(&SOL_MINT, 1).await.status, EpochStatus::Open);
    }
    // a and the creator have shares.
    assert_eq!(lost.told().await, 2);
    lost.run().await.unwrap();
    lost.run().await.unwrap();
    assert_eq!(lost.told().await, 2, "booked once");
    assert_eq!(lost.tapped.sent(), 1, "never sent again");
    lost.server.stop().await;
}

/// A root the admin vetoed before this keeper saw its close is marked vetoed: nothing was ever
/// claimable, so no wallet is told it can claim.
#[tokio::test]
async fn a_root_vetoed_while_the_keeper_looked_away_is_marked_vetoed_and_announced_to_nobody() {
    let lost = LostClose::new().await;
    {
        let mut h = lost.ledger.harness.lock().await;
        let admin = h.admin.insecure_clone();
        let veto = narrative_sdk::crucible::veto_epoch_root(admin.pubkey(), SOL_MINT, 0, 1);
        h.process(&[veto], &[&admin]).await.unwrap();
        assert_eq!(h.epoch(&SOL_MINT, 0).await.status, EpochStatus::RolledOver);
    }
    lost.run().await.unwrap();
    let booked = lost.booked().await;
    assert_eq!(booked.status, "vetoed");
    assert_eq!(booked.closed_at, None, "never booked as closed");
    assert_eq!(lost.told().await, 0);
    lost.server.stop().await;
}
