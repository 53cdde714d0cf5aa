//! crucible_pool under random sequences of instructions.
//!
//! A seeded generator interleaves deposits from two authorised sources (some into a stale epoch),
//! time, epoch closes by the keeper (some too early, some distributing more than the epoch holds,
//! some with roots whose leaves promise more than the posted pools), claims by random wallets
//! (some forged, some repeated, some outside the window), vetoes by the admin, the guardian or a
//! stranger, and rollovers of expired epochs. A model of the program predicts whether each
//! instruction succeeds; the chain must agree, and a refused instruction moves nothing. After
//! every step:
//! - lamports are conserved: deposited = claimed + what the vault holds above its reserve;
//! - the vault holds exactly what the epochs owe: open epochs' balances plus closed epochs'
//!   unclaimed pools;
//! - every epoch matches the model (status, deposits, carry-ins, pools, claimed), and the pool's
//!   `total_claimed` is the sum of the claims paid;
//! - no wallet is paid twice for an epoch, and no epoch pays more than its pools.
//!
//! `CRUCIBLE_INVARIANT_SEQUENCES` (default 200) and `CRUCIBLE_INVARIANT_SEED` choose the run.

use std::collections::{BTreeMap, BTreeSet};

use anchor_lang::prelude::Pubkey;
use crucible_pool::constants::ROOT_CHALLENGE_DELAY_SECS;
use crucible_pool::instructions::CloseEpochArgs;
use crucible_pool::state::EpochStatus;
use crucible_pool::SOL_MINT;
use integration_tests::harness::{keypair, HarnessOptions, CLAIM_WINDOW, EPOCH_DURATION};
use integration_tests::rng::Rng;
use integration_tests::sequences::shard_seeds;
use integration_tests::*;
use narrative_sdk::merkle::Distribution;
use narrative_sdk::{crucible, pda};
use solana_keypair::Keypair;
use solana_signer::Signer;

const SOURCES: usize = 2;
const CLAIMANTS: usize = 4;
const STEPS: usize = 60;

/// What the model expects of one epoch.
struct ModelEpoch {
    status: EpochStatus,
    started_at: i64,
    deposited: u64,
    rolled_in: u64,
    pools: u64,
    claimed: u64,
    claimable_at: i64,
    claim_deadline: i64,
    /// The posted root's leaves (claimant index, amount); they may promise more than `pools`.
    leaves: Vec<(usize, u64)>,
    distribution: Option<Distribution>,
    paid: BTreeSet<usize>,
}

impl ModelEpoch {
    fn open(started_at: i64, rolled_in: u64) -> Self {
        ModelEpoch {
            status: EpochStatus::Open,
            started_at,
            deposited: 0,
            rolled_in,
            pools: 0,
            claimed: 0,
            claimable_at: 0,
            claim_deadline: 0,
            leaves: Vec::new(),
            distribution: None,
            paid: BTreeSet::new(),
        }
    }

    fn available(&self) -> u64 {
        self.deposited + self.rolled_in
    }

    fn unclaimed(&self) -> u64 {
        self.pools - self.claimed
    }
}

struct World {
    h: Harness,
    rng: Rng,
    sources: Vec<Keypair>,
    claimants: Vec<Keypair>,
    guardian: Keypair,
    epochs: Vec<ModelEpoch>,
    deposited: u64,
    paid: u64,
    vault_start: u64,
    /// Instructions the chain accepted, by kind: a run of refusals alone would prove nothing.
    accepted: BTreeMap<&'static str, u32>,
}

impl World {
    async fn new(seed: u64) -> Self {
        let mut h = Harness::start_with(HarnessOptions {
            wallets: SOURCES + CLAIMANTS,
            ..Default::default()
        })
        .await;
        let wallet = |i: usize| h.wallets[i].insecure_clone();
        let sources: Vec<Keypair> = (0..SOURCES).map(wallet).collect();
        let claimants: Vec<Keypair> = (SOURCES..SOURCES + CLAIMANTS).map(wallet).collect();
        for source in &sources {
            h.allow_source(source.pubkey()).await.unwrap();
        }
        let guardian = keypair(11, 0);
        let admin = h.admin.pubkey();
        h.change_crucible(crucible::set_guardian(admin, guardian.pubkey()))
            .await
            .unwrap();
        let pool = h.asset_pool(&SOL_MINT).await;
        assert_eq!(pool.current_epoch, 0);
        let first = h.epoch(&SOL_MINT, 0).await;
        let vault_start = h.lamports(pda::crucible::sol_vault()).await;
        World {
            h,
            rng: Rng::new(seed),
            sources,
            claimants,
            guardian,
            epochs: vec![ModelEpoch::open(first.started_at, 0)],
            deposited: 0,
            paid: 0,
            vault_start,
            accepted: BTreeMap::new(),
        }
    }

    fn current(&self) -> u64 {
        (self.epochs.len() - 1) as u64
    }

    async fn step(&mut self) {
        match self.rng.below(100) {
            0..=24 => self.deposit().await,
            25..=44 => self.warp().await,
            45..=59 => self.close().await,
            60..=84 => self.claim().await,
            85..=91 => self.veto().await,
            _ => self.rollover().await,
        }
    }

    /// Runs `ix` and checks the chain agreed with the model's `expected` success; on a refusal
    /// nothing may have moved.
    async fn expect(
        &mut self,
        what: &'static str,
        ix: narrative_sdk::Instruction,
        signers: &[&Keypair],
        expected: bool,
    ) {
        let vault_before = self.h.lamports(pda::crucible::sol_vault()).await;
        let result = self.h.process(&[ix], signers).await;
        assert_eq!(
            result.is_ok(),
            expected,
            "{what}: the model expected {}, the chain answered {result:?}",
            if expected { "success" } else { "a refusal" }
        );
        if expected {
            *self.accepted.entry(what).or_default() += 1;
        } else {
            assert_eq!(
                self.h.lamports(pda::crucible::sol_vault()).await,
                vault_before,
                "{what}: a refusal moved lamports"
            );
        }
    }

    async fn deposit(&mut self) {
        let source = self.sources[self.rng.below(SOURCES as u64) as usize].insecure_clone();
        let amount = self.rng.range(1, 3_000_000_000);
        let stale = self.current() > 0 && self.rng.chance(10);
        let epoch = if stale {
            self.rng.below(self.current())
        } else {
            self.current()
        };
        let ix = crucible::deposit_sol(source.pubkey(), source.pubkey(), epoch, amount);
        self.expect("deposit", ix, &[&source], !stale).await;
        if !stale {
            let current = self.current() as usize;
            self.epochs[current].deposited += amount;
            self.deposited += amount;
        }
    }

    async fn warp(&mut self) {
        let secs = *self.rng.pick(&[
            3_600,
            DAY,
            DAY,
            ROOT_CHALLENGE_DELAY_SECS,
            ROOT_CHALLENGE_DELAY_SECS,
            EPOCH_DURATION,
            CLAIM_WINDOW,
        ]);
        self.h.warp_by(secs).await;
    }

    /// The keeper closes the open epoch with a random distribution among the claimants.
    async fn close(&mut self) {
        let now = self.h.now().await;
        let number = self.current();
        let available = self.epochs[number as usize].available();
        let mut leaves = Vec::new();
        for claimant in 0..CLAIMANTS {
            if self.rng.chance(60) {
                leaves.push((claimant, self.rng.range(1, available.max(1))));
            }
        }
        let promised: u64 = leaves.iter().map(|(_, a)| a).sum();
        // Pools usually fund the leaves; sometimes they fall short of them (claims then stop at
        // the pools), sometimes they exceed what the epoch holds (the close is refused).
        let pools = match self.rng.below(10) {
            0 => available + 1,
            1 => promised / 2,
            _ => promised.min(available),
        };
        let conviction = self.rng.range(0, pools);
        let epoch_address = pda::crucible::epoch(&SOL_MINT, number);
        let entries: Vec<(Pubkey, u64)> = leaves
            .iter()
            .map(|(c, a)| (self.claimants[*c].pubkey(), *a))
            .collect();
        let distribution = Distribution::new(&epoch_address, &entries);
        let expected =
            now >= self.epochs[number as usize].started_at + EPOCH_DURATION && pools <= available;
        let keeper = self.h.keeper.insecure_clone();
        let args = CloseEpochArgs {
            conviction_pool: conviction,
            creator_pool: pools - conviction,
            merkle_root: distribution.root(),
        };
        let ix = crucible::close_epoch(keeper.pubkey(), SOL_MINT, number, args);
        self.expect("close", ix, &[&keeper], expected).await;
        if expected {
            let epoch = &mut self.epochs[number as usize];
            epoch.status = EpochStatus::Closed;
            epoch.pools = pools;
            epoch.claimable_at = now + ROOT_CHALLENGE_DELAY_SECS;
            epoch.claim_deadline = epoch.claimable_at + CLAIM_WINDOW;
            epoch.leaves = leaves;
            epoch.distribution = Some(distribution);
            self.epochs.push(ModelEpoch::open(now, available - pools));
        }
    }

    /// A random epoch, most often one that is closed (where claims and vetoes can succeed).
    fn pick_epoch(&mut self) -> usize {
        let closed: Vec<usize> = (0..self.epochs.len())
            .filter(|n| self.epochs[*n].status == EpochStatus::Closed)
            .collect();
        if !closed.is_empty() && self.rng.chance(80) {
            *self.rng.pick(&closed)
        } else {
            self.rng.below(self.epochs.len() as u64) as usize
        }
    }

    async fn claim(&mut self) {
        let now = self.h.now().await;
        let number = self.pick_epoch();
        let claimant = self.rng.below(CLAIMANTS as u64) as usize;
        let wallet = self.claimants[claimant].insecure_clone();
        let epoch = &self.epochs[number];
        let leaf = epoch
            .leaves
            .iter()
            .find(|(c, _)| *c == claimant)
            .map(|(_, a)| *a);
        let forged = leaf.is_none() || self.rng.chance(10);
        // A forged claim asks one lamport more than its leaf, with its leaf's proof (or an
        // empty one for a wallet with no leaf).
        let (amount, proof) = match (&epoch.distribution, leaf) {
            (Some(d), Some(a)) => {
                let (_, proof) = d.proof(&wallet.pubkey()).expect("a leaf has a proof");
                (if forged { a + 1 } else { a }, proof)
            }
            _ => (self.rng.range(1, SOL), Vec::new()),
        };
        let expected = !forged
            && epoch.status == EpochStatus::Closed
            && now >= epoch.claimable_at
            && now <= epoch.claim_deadline
            && !epoch.paid.contains(&claimant)
            && epoch.claimed + amount <= epoch.pools;
        let ix = crucible::claim_sol(wallet.pubkey(), number as u64, amount, proof);
        let vault_before = self.h.lamports(pda::crucible::sol_vault()).await;
        self.expect("claim", ix, &[&wallet], expected).await;
        if expected {
            let vault_after = self.h.lamports(pda::crucible::sol_vault()).await;
            assert_eq!(vault_before - vault_after, amount, "a claim pays its leaf");
            let epoch = &mut self.epochs[number];
            epoch.claimed += amount;
            epoch.paid.insert(claimant);
            self.paid += amount;
        }
    }

    async fn veto(&mut self) {
        let now = self.h.now().await;
        let number = self.pick_epoch();
        let (who, authorised) = match self.rng.below(3) {
            0 => (self.h.admin.insecure_clone(), true),
            1 => (self.guardian.insecure_clone(), true),
            _ => (self.claimants[0].insecure_clone(), false),
        };
        let epoch = &self.epochs[number];
        let expected =
            authorised && epoch.status == EpochStatus::Closed && now < epoch.claimable_at;
        let current = self.current();
        let ix = crucible::veto_epoch_root(who.pubkey(), SOL_MINT, number as u64, current);
        self.expect("veto", ix, &[&who], expected).await;
        if expected {
            self.roll(number);
        }
    }

    async fn rollover(&mut self) {
        let now = self.h.now().await;
        let number = self.pick_epoch();
        let epoch = &self.epochs[number];
        let expected = epoch.status == EpochStatus::Closed && now > epoch.claim_deadline;
        let current = self.current();
        let ix = crucible::rollover(SOL_MINT, number as u64, current);
        self.expect("rollover", ix, &[], expected).await;
        if expected {
            self.roll(number);
        }
    }

    /// What epoch `number` still owes moves into the open epoch.
    fn roll(&mut self, number: usize) {
        let unclaimed = self.epochs[number].unclaimed();
        self.epochs[number].status = EpochStatus::RolledOver;
        let current = self.current() as usize;
        self.epochs[current].rolled_in += unclaimed;
    }

    async fn check(&mut self) {
        let reserve = self.vault_start;
        let vault = self.h.lamports(pda::crucible::sol_vault()).await;
        assert_eq!(
            vault,
            reserve + self.deposited - self.paid,
            "deposited = claimed + held"
        );
        let mut owed = 0;
        for (number, model) in self.epochs.iter().enumerate() {
            let chain = self.h.epoch(&SOL_MINT, number as u64).await;
            assert_eq!(chain.status, model.status, "epoch {number} status");
            assert_eq!(
                (chain.deposited, chain.rolled_in, chain.claimed),
                (model.deposited, model.rolled_in, model.claimed),
                "epoch {number} books"
            );
            assert!(chain.claimed <= chain.distributable().unwrap());
            assert_eq!(
                chain.claims as usize,
                model.paid.len(),
                "epoch {number} claims"
            );
            owed += match model.status {
                EpochStatus::Open => model.available(),
                EpochStatus::Closed => {
                    assert_eq!(chain.distributable().unwrap(), model.pools);
                    assert_eq!(chain.claimable_at, model.claimable_at);
                    model.unclaimed()
                }
                EpochStatus::RolledOver => 0,
            };
        }
        assert_eq!(vault - reserve, owed, "the vault holds what the epochs owe");
        let pool = self.h.asset_pool(&SOL_MINT).await;
        assert_eq!(pool.current_epoch, self.current());
        assert_eq!(pool.total_claimed, self.paid);
    }
}

/// Runs one sequence; the instructions it saw accepted, by kind.
async fn run_sequence(seed: u64) -> BTreeMap<&'static str, u32> {
    let result = tokio::spawn(async move {
        let mut world = World::new(seed).await;
        for _ in 0..STEPS {
            world.step().await;
            world.check().await;
        }
        world.accepted
    })
    .await;
    result.unwrap_or_else(|e| panic!("sequence with CRUCIBLE_INVARIANT_SEED={seed:#x} failed: {e}"))
}

async fn run_shard(shard: u64, shards: u64) {
    let mut accepted: BTreeMap<&str, u32> = BTreeMap::new();
    let mut ran = 0;
    for seed in shard_seeds(
        "CRUCIBLE_INVARIANT_SEQUENCES",
        "CRUCIBLE_INVARIANT_SEED",
        0xC2C1B1E,
        shard,
        shards,
    ) {
        for (kind, n) in run_sequence(seed).await {
            *accepted.entry(kind).or_default() += n;
        }
        ran += 1;
    }
    // Over a shard's sequences every kind of instruction must have gone through at least
    // once, or the invariants were only checked against refusals.
    if ran >= 10 {
        for kind in ["deposit", "close", "claim", "veto", "rollover"] {
            assert!(
                accepted.get(kind).copied().unwrap_or(0) > 0,
                "no {kind} accepted in {ran} sequences: {accepted:?}"
            );
        }
    }
    eprintln!("crucible shard {shard}: {ran} sequences, accepted {accepted:?}");
}

#[tokio::test]
async fn random_crucible_sequences_pay_only_what_epochs_owe_shard_0() {
    run_shard(0, 4).await;
}

#[tokio::test]
async fn random_crucible_sequences_pay_only_what_epochs_owe_shard_1() {
    run_shard(1, 4).await;
}

#[tokio::test]
async fn random_crucible_sequences_pay_only_what_epochs_owe_shard_2() {
    run_shard(2, 4).await;
}

#[tokio::test]
async fn random_crucible_sequences_pay_only_what_epochs_owe_shard_3() {
    run_shard(3, 4).await;
}
