//! shield_vault under random sequences of instructions.
//!
//! A seeded generator opens partnership and community shields and interleaves backings (some
//! out of bounds, some self-hedging), yield arriving and being harvested, time, votes,
//! refund_all, the timeout refund, finalisation and claims of every kind by random wallets.
//! After every step, per shield:
//! - lamports are conserved: what was backed + yield sent = what backers received + protocol,
//!   treasury and seam payouts + what the vaults hold above their reserves;
//! - principal is conserved: principal in = principal returned + bonus paid + splits +
//!   principal still owed to unclaimed backings;
//! - per side, yield paid ≤ yield harvested, and the books match the vaults;
//! - no backing is claimed twice;
//!
//! while crucible_pool's admin revokes and restores shield_vault as a source and seam shares
//! are forwarded late or at once.
//!
//! Once every shield is settled and every backing claimed, the principal left behind is below
//! the number of claims. `SHIELD_INVARIANT_SEQUENCES` (default 200) and `SHIELD_INVARIANT_SEED`
//! choose the run.

use std::collections::BTreeMap;

use anchor_lang::prelude::Pubkey;
use integration_tests::rng::Rng;
use integration_tests::sequences::shard_seeds;
use integration_tests::*;
use narrative_sdk::shield::Claim;
use narrative_sdk::{crucible, pda, shield};
use shield_vault::constants::*;
use shield_vault::state::{CoverageStatus, ShieldKind, ShieldSide, ShieldVerdict};
use solana_keypair::Keypair;
use solana_signer::Signer;

const WALLETS: usize = 5;
const MAX_SHIELDS: usize = 2;
const STEPS: usize = 60;

#[derive(Default)]
struct Tracked {
    /// The outcome oracles mostly vote for.
    truth: Option<ShieldSide>,
    backed: u64,
    yield_sent: [u64; 2],
    received: u64,
    claims: u32,
    /// (wallet, side byte) -> principal backed.
    backings: BTreeMap<(usize, u8), u64>,
    claimed: BTreeMap<(usize, u8), bool>,
}

struct World {
    h: Harness,
    rng: Rng,
    wallets: Vec<Keypair>,
    shields: Vec<([u8; 32], Tracked)>,
    /// Balances before the sequence of the accounts that only splits pay: the treasury (no
    /// coverage fees are charged here) and crucible_pool's SOL vault (the seam share).
    treasury_start: u64,
    crucible_start: u64,
}

/// The claim a backing on `side` makes in this state.
fn fitting_claim(status: CoverageStatus, outcome: Option<ShieldSide>, side: ShieldSide) -> Claim {
    match (status, outcome) {
        (CoverageStatus::Refunding, _) => Claim::Refund,
        (_, Some(o)) if o != side => Claim::LoserYield,
        (_, Some(ShieldSide::Safe)) => Claim::SafeWinner,
        _ => Claim::ExploitWinner,
    }
}

fn side_of(rng: &mut Rng) -> ShieldSide {
    if rng.chance(50) {
        ShieldSide::Safe
    } else {
        ShieldSide::Exploit
    }
}

impl World {
    async fn new(seed: u64) -> Self {
        let h = Harness::start_with(HarnessOptions {
            wallets: WALLETS,
            wallet_lamports: 100_000 * SOL,
            ..HarnessOptions::default()
        })
        .await;
        let wallets = h.wallets.iter().map(|w| w.insecure_clone()).collect();
        let mut world = World {
            h,
            rng: Rng::new(seed),
            wallets,
            shields: Vec::new(),
            treasury_start: 0,
            crucible_start: 0,
        };
        world.treasury_start = world.h.lamports(world.h.treasury).await;
        world.crucible_start = world.h.lamports(pda::crucible::sol_vault()).await;
        world
    }

    fn shield_index(&mut self) -> Option<usize> {
        (!self.shields.is_empty()).then(|| self.rng.below(self.shields.len() as u64) as usize)
    }

    /// Mostly a shield where `ready` holds on its current state, otherwise any shield.
    async fn pick_shield(
        &mut self,
        ready: impl Fn(&shield_vault::state::Coverage, i64) -> bool,
    ) -> Option<usize> {
        let now = self.h.now().await;
        let mut eligible = Vec::new();
        for (i, (id, _)) in self.shields.iter().enumerate() {
            if ready(&self.h.coverage(id).await, now) {
                eligible.push(i);
            }
        }
        if !eligible.is_empty() && self.rng.chance(70) {
            Some(*self.rng.pick(&eligible))
        } else {
            self.shield_index()
        }
    }

    async fn step(&mut self) {
        // Periods last 30-90 days and finalisation needs 2 more: warps are long and frequent
        // enough that most sequences reach votes, finalisation and claims before settling.
        match self.rng.below(100) {
            0..=5 => self.open().await,
            6..=35 => self.back().await,
            36..=43 => self.send_yield().await,
            44..=51 => self.harvest().await,
            52..=65 => self.warp().await,
            66..=75 => self.vote().await,
            76 => self.refund_all().await,
            77 => self.timeout_refund().await,
            78..=83 => self.finalize().await,
            84 => self.forward().await,
            85 => self.toggle_seam_source().await,
            _ => self.claim().await,
        }
    }

    async fn open(&mut self) {
        if self.shields.len() >= MAX_SHIELDS {
            return;
        }
        let admin = self.h.admin.insecure_clone();
        let partnership = self.rng.chance(50);
        let (kind, wallet) = if partnership {
            (ShieldKind::Partnership, self.wallets[WALLETS - 1].pubkey())
        } else {
            (ShieldKind::Community, Pubkey::default())
        };
        let days = *self.rng.pick(&PERIOD_DAYS);
        let id = self
            .h
            .open_shield(kind, wallet, days, 0, &admin)
            .await
            .expect("open");
        let truth = Some(side_of(&mut self.rng));
        self.shields.push((
            id,
            Tracked {
                truth,
                ..Tracked::default()
            },
        ));
    }

    async fn back(&mut self) {
        let Some(s) = self.shield_index() else { return };
        let w = self.rng.below(WALLETS as u64) as usize;
        let side = side_of(&mut self.rng);
        let amount = self.rng.range(MIN_BACKING_LAMPORTS - 1, 30 * SOL + 7);
        let wallet = self.wallets[w].insecure_clone();
        let id = self.shields[s].0;
        if self.h.back_shield(&wallet, &id, side, amount).await.is_ok() {
            let t = &mut self.shields[s].1;
            t.backed += amount;
            *t.backings.entry((w, side.seed_byte())).or_default() += amount;
        }
    }

    async fn send_yield(&mut self) {
        let Some(s) = self.shield_index() else { return };
        let side = side_of(&mut self.rng);
        let amount = self.rng.range(1, SOL / 3);
        let id = self.shields[s].0;
        self.h
            .send_lamports(pda::shield::vault(&id, side), amount)
            .await;
        self.shields[s].1.yield_sent[side.seed_byte() as usize] += amount;
    }

    async fn harvest(&mut self) {
        let Some(s) = self.shield_index() else { return };
        let side = side_of(&mut self.rng);
        let id = self.shields[s].0;
        let _ = self.h.harvest(&id, side).await;
    }

    async fn warp(&mut self) {
        let secs = self.rng.range(DAY as u64, 30 * DAY as u64) as i64;
        self.h.warp_by(secs).await;
    }

    async fn vote(&mut self) {
        let votable = |c: &shield_vault::state::Coverage, now: i64| {
            c.status == CoverageStatus::Active && c.outcome.is_none() && now >= c.period_end
        };
        let Some(s) = self.pick_shield(votable).await else {
            return;
        };
        let oracle = self.rng.below(3) as usize;
        let side = match self.shields[s].1.truth {
            Some(truth) if self.rng.chance(85) => truth,
            _ => side_of(&mut self.rng),
        };
        let id = self.shields[s].0;
        let _ = self.h.shield_vote(oracle, &id, side).await;
    }

    /// The admin's refund (refused until 48 h after the period with no outcome), or an
    /// UNRESOLVABLE vote by a random oracle at any time (refunds at the threshold).
    async fn refund_all(&mut self) {
        let Some(s) = self.shield_index() else { return };
        let id = self.shields[s].0;
        if self.rng.chance(50) {
            let admin = self.h.admin.insecure_clone();
            let _ = self
                .h
                .process(&[shield::refund_all(admin.pubkey(), &id)], &[&admin])
                .await;
        } else {
            let oracle = self.rng.below(3) as usize;
            let _ = self
                .h
                .shield_vote(oracle, &id, ShieldVerdict::Unresolvable)
                .await;
        }
    }

    /// The permissionless exit, on any shield: refused until the delay has passed.
    async fn timeout_refund(&mut self) {
        let Some(s) = self.shield_index() else { return };
        let id = self.shields[s].0;
        let _ = self
            .h
            .process(&[shield::trigger_timeout_refund(&id)], &[])
            .await;
    }

    async fn finalize(&mut self) {
        let due = |c: &shield_vault::state::Coverage, now: i64| {
            c.status == CoverageStatus::Active
                && c.outcome.is_some()
                && now >= c.outcome_proposed_at + RESOLUTION_TIMELOCK_SECS
        };
        let Some(s) = self.pick_shield(due).await else {
            return;
        };
        let id = self.shields[s].0;
        if self.rng.chance(50) {
            // Finalise and forward every share at once (the seam share refused while
            // crucible_pool is).
            let _ = self.h.shield_finalize(&id).await;
        } else {
            let ix = shield::finalize_resolution(&id);
            let _ = self.h.process(&[ix], &[]).await;
        }
    }

    /// Forwards the seam share or the wallets' shares of a resolved coverage, whichever waits.
    async fn forward(&mut self) {
        let pending = |c: &shield_vault::state::Coverage, _: i64| {
            let waits = |amount: u64, forwarded: bool| amount > 0 && !forwarded;
            c.status == CoverageStatus::Resolved
                && (waits(c.seam_payout, c.seam_forwarded)
                    || waits(c.treasury_payout, c.treasury_forwarded)
                    || waits(c.protocol_payout, c.protocol_forwarded))
        };
        let Some(s) = self.pick_shield(pending).await else {
            return;
        };
        let id = self.shields[s].0;
        if self.rng.chance(50) {
            let _ = self.h.forward_seam_share(&id).await;
        } else {
            let _ = self.h.forward_payouts(&id).await;
        }
    }

    /// crucible_pool's admin revokes or restores shield_vault as a source: shields must settle
    /// and pay out either way.
    async fn toggle_seam_source(&mut self) {
        // Revoking is immediate; restoring is proposed and applies once the admin timelock
        // has passed (a later toggle applies it, whatever warps came between).
        let allowed = self.rng.chance(50);
        let admin = self.h.admin.insecure_clone();
        let ix =
            crucible::set_authorized_source(admin.pubkey(), pda::shield::cpi_authority(), allowed);
        let _ = self.h.process(&[ix], &[&admin]).await;
        let apply = crucible::apply_settings_change(admin.pubkey());
        let _ = self.h.process(&[apply], &[&admin]).await;
    }

    async fn claim(&mut self) {
        let Some(s) = self
            .pick_shield(|c, _| c.status != CoverageStatus::Active)
            .await
        else {
            return;
        };
        // Mostly an existing backing with the claim that fits it now; sometimes anything, to
        // exercise the refusals (wrong kind, nothing backed, already claimed).
        let backings: Vec<_> = self.shields[s].1.backings.keys().copied().collect();
        let any = [
            Claim::SafeWinner,
            Claim::ExploitWinner,
            Claim::LoserYield,
            Claim::Refund,
        ];
        let (w, side, kind) = if !backings.is_empty() && self.rng.chance(70) {
            let (w, byte) = *self.rng.pick(&backings);
            let side = if byte == 0 {
                ShieldSide::Safe
            } else {
                ShieldSide::Exploit
            };
            let c = self.h.coverage(&self.shields[s].0).await;
            (w, side, fitting_claim(c.status, c.outcome, side))
        } else {
            let w = self.rng.below(WALLETS as u64) as usize;
            (w, side_of(&mut self.rng), *self.rng.pick(&any))
        };
        let _ = self.claim_backing(s, w, side, kind).await;
    }

    async fn claim_backing(&mut self, s: usize, w: usize, side: ShieldSide, kind: Claim) -> bool {
        let id = self.shields[s].0;
        let wallet = self.wallets[w].insecure_clone();
        let before = self.h.lamports(wallet.pubkey()).await;
        let ok = self.h.shield_claim(kind, &wallet, &id, side).await.is_ok();
        let received = self.h.lamports(wallet.pubkey()).await - before;
        if ok {
            let t = &mut self.shields[s].1;
            let key = (w, side.seed_byte());
            assert!(
                !t.claimed.insert(key, true).unwrap_or(false),
                "shield {s} w{w} {side:?} claimed twice"
            );
            t.received += received;
            t.claims += 1;
            let backing = self.h.shield_backing(&id, &wallet.pubkey(), side).await;
            assert_eq!(
                backing.principal_paid + backing.bonus_paid + backing.yield_paid,
                received
            );
        } else {
            assert_eq!(received, 0, "a refused claim moved lamports");
        }
        ok
    }

    async fn check(&mut self) {
        let (mut treasury_paid, mut seam_paid) = (0, 0);
        for s in 0..self.shields.len() {
            let id = self.shields[s].0;
            let c = self.h.coverage(&id).await;
            let safe = self.h.shield_vault_balance(&id, ShieldSide::Safe).await;
            let exploit = self.h.shield_vault_balance(&id, ShieldSide::Exploit).await;
            let t = &self.shields[s].1;
            // A share not yet forwarded is still in the losing vault.
            let out = |forwarded: bool, amount: u64| if forwarded { amount } else { 0 };
            let seam_out = out(c.seam_forwarded, c.seam_payout);
            let treasury_out = out(c.treasury_forwarded, c.treasury_payout);
            let splits = out(c.protocol_forwarded, c.protocol_payout) + treasury_out + seam_out;
            treasury_paid += treasury_out;
            seam_paid += seam_out;
            assert_eq!(
                c.safe.principal + c.exploit.principal,
                t.backed,
                "shield {s}: principal books"
            );
            assert_eq!(
                t.backed + t.yield_sent[0] + t.yield_sent[1],
                t.received + splits + safe + exploit,
                "shield {s}: lamports not conserved"
            );
            for (pool, vault, sent) in [
                (&c.safe, safe, t.yield_sent[0]),
                (&c.exploit, exploit, t.yield_sent[1]),
            ] {
                assert!(
                    pool.yield_paid <= pool.yield_harvested,
                    "shield {s}: yield paid above harvested"
                );
                assert!(
                    pool.yield_harvested <= sent,
                    "shield {s}: harvested more than arrived"
                );
                // What the vault holds beyond its books is yield that arrived and is not booked.
                assert!(vault >= pool.held, "shield {s}: vault below its books");
            }
            let owed: u64 = t
                .backings
                .iter()
                .filter(|(k, _)| !t.claimed.contains_key(k))
                .map(|(_, amount)| amount)
                .sum();
            let principal_out = c.principal_returned + c.bonus_paid + splits;
            assert!(
                principal_out <= t.backed,
                "shield {s}: more principal out than in"
            );
            if c.status == CoverageStatus::Active {
                assert_eq!(
                    principal_out + owed,
                    t.backed,
                    "shield {s}: principal not conserved"
                );
            }
        }
        let treasury = self.h.lamports(self.h.treasury).await - self.treasury_start;
        let crucible = self.h.lamports(pda::crucible::sol_vault()).await - self.crucible_start;
        assert_eq!(
            (treasury, crucible),
            (treasury_paid, seam_paid),
            "treasury / seam pool received"
        );
    }

    /// Drives every shield to resolution or refund and claims every backing with its claim.
    async fn settle_everything(&mut self) {
        self.h
            .allow_source(pda::shield::cpi_authority())
            .await
            .unwrap();
        for s in 0..self.shields.len() {
            let id = self.shields[s].0;
            for _ in 0..4 {
                let c = self.h.coverage(&id).await;
                if c.status != CoverageStatus::Active {
                    break;
                }
                let now = self.h.now().await;
                if c.outcome.is_none() {
                    self.h.warp_to(now.max(c.period_end)).await;
                    let side = side_of(&mut self.rng);
                    self.h.shield_vote(0, &id, side).await.expect("vote");
                } else {
                    self.h
                        .warp_to(now.max(c.outcome_proposed_at + RESOLUTION_TIMELOCK_SECS))
                        .await;
                    self.h.shield_finalize(&id).await.expect("finalize");
                }
            }
            self.h
                .forward_seam_share(&id)
                .await
                .expect("a waiting seam share forwards once crucible_pool accepts");
            self.h
                .forward_payouts(&id)
                .await
                .expect("the wallets' shares forward");
            let c = self.h.coverage(&id).await;
            assert_ne!(c.status, CoverageStatus::Active, "shield {s} settles");
            let pending: Vec<(usize, u8)> = self.shields[s]
                .1
                .backings
                .keys()
                .filter(|k| !self.shields[s].1.claimed.contains_key(k))
                .copied()
                .collect();
            for (w, byte) in pending {
                let side = if byte == 0 {
                    ShieldSide::Safe
                } else {
                    ShieldSide::Exploit
                };
                let kind = fitting_claim(c.status, c.outcome, side);
                assert!(
                    self.claim_backing(s, w, side, kind).await,
                    "shield {s} w{w} {side:?} {kind:?} claimable"
                );
            }
            self.check().await;
            let c = self.h.coverage(&id).await;
            let t = &self.shields[s].1;
            let principal_left = t.backed
                - (c.principal_returned
                    + c.bonus_paid
                    + c.protocol_payout
                    + c.treasury_payout
                    + c.seam_payout);
            if t.claims == 0 {
                assert_eq!(principal_left, 0);
            } else {
                assert!(
                    principal_left < t.claims as u64,
                    "shield {s}: principal dust {principal_left} >= claims {}",
                    t.claims
                );
            }
        }
    }
}

async fn run_sequence(seed: u64) {
    let result = tokio::spawn(async move {
        let mut world = World::new(seed).await;
        // Two shields from the start, so each has the whole sequence to progress.
        world.open().await;
        world.open().await;
        for _ in 0..STEPS {
            world.step().await;
            world.check().await;
        }
        world.settle_everything().await;
    })
    .await;
    if let Err(e) = result {
        panic!("sequence with SHIELD_INVARIANT_SEED={seed:#x} failed: {e}");
    }
}

async fn run_shard(shard: u64, shards: u64) {
    for seed in shard_seeds(
        "SHIELD_INVARIANT_SEQUENCES",
        "SHIELD_INVARIANT_SEED",
        0x5111E1D,
        shard,
        shards,
    ) {
        run_sequence(seed).await;
    }
}

#[tokio::test]
async fn random_shield_sequences_conserve_principal_and_yield_shard_0() {
    run_shard(0, 4).await;
}

#[tokio::test]
async fn random_shield_sequences_conserve_principal_and_yield_shard_1() {
    run_shard(1, 4).await;
}

#[tokio::test]
async fn random_shield_sequences_conserve_principal_and_yield_shard_2() {
    run_shard(2, 4).await;
}

#[tokio::test]
async fn random_shield_sequences_conserve_principal_and_yield_shard_3() {
    run_shard(3, 4).await;
}
